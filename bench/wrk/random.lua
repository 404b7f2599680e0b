-- wrk -s random.lua BASE_URL -- KEYS_FILE PATHS_FILE: each request a path and a key drawn
-- at random from the two files (one a line; the keys file readable by its owner only);
-- counts the answers by status (bench/soak.ts tells intended 429s from errors).
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "result.lua")

local keys = {}
local paths = {}
statuses = {}

local function read_lines(file, into)
  for line in io.lines(file) do
    if #line > 0 then
      table.insert(into, line)
    end
  end
  if #into == 0 then
    error("no lines in " .. file)
  end
end

function init(args)
  read_lines(args[1], keys)
  read_lines(args[2], paths)
  math.randomseed(os.time())
end

function request()
  local key = keys[math.random(#keys)]
  return wrk.format("GET", paths[math.random(#paths)], { ["x-api-key"] = key })
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
