-- "a<TAB>b<TAB>c" -> {'a', 'b', 'c'} (empty parts kept).
local function split(text)
  local parts = {}
  for part in string.gmatch(text .. '\t', '([^\t]*)\t') do parts[#parts + 1] = part end
  return parts
end
