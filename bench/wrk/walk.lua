-- BENCH_API_KEY=KEY wrk -s walk.lua BASE_URL -- FILE: the paths of FILE (one a line)
-- requested in turn, over and over, each with x-api-key: KEY (from the environment, as in
-- key.lua). The requests are built once, in init.
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "result.lua")

local requests = {}
local next_index = 0

function init(args)
  local key = os.getenv("BENCH_API_KEY")
  for path in io.lines(args[1]) do
    if #path > 0 then
      table.insert(requests, wrk.format("GET", path, { ["x-api-key"] = key }))
    end
  end
  if #requests == 0 then
    error("no paths in " .. args[1])
  end
end

function request()
  next_index = next_index % #requests + 1
  return requests[next_index]
end
