-- BENCH_API_KEY=KEY wrk -s key.lua URL: every request to URL with the header
-- x-api-key: KEY (from the environment: a command line is visible to every user of the
-- machine). wrk builds the request once and sends it again and again (no Lua per request).
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "result.lua")

function init(args)
  wrk.headers["x-api-key"] = os.getenv("BENCH_API_KEY")
end
