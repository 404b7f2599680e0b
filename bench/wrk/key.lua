-- wrk -s key.lua URL -- KEY: every request to URL with the header x-api-key: KEY. wrk
-- builds the request once and sends it again and again (no Lua per request).
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "result.lua")

function init(args)
  wrk.headers["x-api-key"] = args[1]
end
