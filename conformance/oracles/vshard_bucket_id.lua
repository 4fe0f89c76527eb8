-- The oracle side of test_vshard.py, run by the real Tarantool (Debian `tarantool`):
-- reads "<bucket_count> <kind> <hex>" lines on stdin and prints one bucket id per line,
-- computed as vshard's router does: `vshard/router/init.lua`
-- router_bucket_id_strcrc32 = `lhash.strcrc32(key) % total_bucket_count + 1`, with
-- `vshard/hash.lua` strcrc32 = `digest.crc32(tostring(key))` (vshard itself is not
-- packaged; these two lines are the whole of its key -> bucket rule).
-- kind "s": the key is the bytes given in hex (a Lua string); kind "n": the hex is the
-- ASCII of a decimal integer, passed to vshard as a Lua number.
local digest = require('digest')

local function strcrc32(key)
    return digest.crc32(tostring(key))
end

local function bucket_id_strcrc32(key, total_bucket_count)
    return strcrc32(key) % total_bucket_count + 1
end

local function unhex(hex)
    return (hex:gsub('..', function(pair) return string.char(tonumber(pair, 16)) end))
end

for line in io.stdin:lines() do
    local count, kind, hex = line:match('^(%d+) (%a) (%x*)$')
    local key = unhex(hex)
    if kind == 'n' then
        key = tonumber(key)
    end
    io.stdout:write(string.format('%d\n', bucket_id_strcrc32(key, tonumber(count))))
end
os.exit(0)
