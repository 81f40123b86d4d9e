--[[
Quarto-style rendering of nbdev's processed notebooks with plain pandoc (used by tools/build_site.py when
Quarto is not installed).

* cells: pandoc's ipynb reader wraps each cell in a Div "cell code" / "cell markdown" and each output in a
  Div "output <type>"; they get Quarto's class names (cell-output-display, cell-output-stdout, ...).
* cell options that tools/site_notebook.py moved from `#| key: value` comments into cell metadata (and so into
  Div attributes): echo: false drops the source, code-fold: true|show folds it into <details>,
  code-summary names the fold, fig-cap captions the cell's figure.
* callouts: `:::{.callout-note}` (tip, warning, important, caution) become boxes with an icon and a title
  (the `title` attribute, else a leading heading, else the type).
* links: `x.ipynb` -> the page's html name; absolute links into the hosted docs -> relative links.
* gfm output (README.md): cell wrappers are dropped and callouts become block quotes.
]]

local pagemap = {}     -- notebook path (as written in links) -> html file name
local site_url = nil   -- hosted docs URL, e.g. https://org.github.io/proj (links into it become relative)
local root = ""        -- relative path from the current page to the site root
local nbs_prefix = ""  -- README.md: path from the README to the notebooks' folder (links to x.ipynb work in a checkout)

local callout_titles = {note = "Note", tip = "Tip", warning = "Warning", important = "Important",
                        caution = "Caution"}

local function unquote(s)
  -- pandoc writes non-string cell metadata as JSON text ("\"true\"", "true"); reduce it to the bare value
  if s == nil then return nil end
  s = s:gsub('^%s*"(.*)"%s*$', '%1')
  return s
end

local function is_html() return FORMAT:match("html") ~= nil end

local function read_meta(meta)
  if meta.pagemap then
    for k, v in pairs(meta.pagemap) do pagemap[k] = pandoc.utils.stringify(v) end
  end
  if meta.site_url then site_url = pandoc.utils.stringify(meta.site_url) end
  if meta.site_root then root = pandoc.utils.stringify(meta.site_root) end
  if meta.nbs_prefix then nbs_prefix = pandoc.utils.stringify(meta.nbs_prefix) end
  if root == "./" then root = "" end
  return meta
end

local function fix_link(el)
  local target = el.target
  if site_url and site_url ~= "" and is_html() and target:sub(1, #site_url) == site_url then
    local rest = target:sub(#site_url + 1):gsub("^/", "")
    if rest == "" then rest = "index.html" end
    el.target = root .. rest
    return el
  end
  if target:match("^%a[%w+.-]*:") then return nil end   -- external (http:, mailto:, ...)
  local path, frag = target:match("^([^#]*)(.*)$")
  if not is_html() then   -- README.md: relative to the notebooks' folder, so links work in a checkout
    if path == "" or target:match("^/") then return nil end
    el.target = nbs_prefix .. path:gsub("^%./", "") .. frag
    return el
  end
  if path:match("%.ipynb$") or path:match("%.qmd$") then
    local page = pagemap[path] or pagemap[path:gsub("^%./", "")]
    if page then
      el.target = root .. page .. frag
    else
      el.target = path:gsub("%.ipynb$", ".html"):gsub("%.qmd$", ".html") .. frag
    end
    return el
  end
  return nil
end

local function fix_image(el)
  -- README.md: images of the notebooks' folder, seen from the README
  if is_html() or el.src:match("^%a[%w+.-]*:") or el.src:match("^/") or nbs_prefix == "" then return nil end
  el.src = nbs_prefix .. el.src:gsub("^%./", "")
  return el
end

-- Quarto's class names for outputs
local output_class = {stream = "cell-output-stream", display_data = "cell-output-display",
                      execute_result = "cell-output-display", error = "cell-output-error"}

local function code_cell(el)
  local echo = unquote(el.attributes["echo"])
  local fold = unquote(el.attributes["code-fold"])
  local summary = unquote(el.attributes["code-summary"]) or "Code"
  local figcap = unquote(el.attributes["fig-cap"])
  local out = pandoc.List()
  for _, b in ipairs(el.content) do
    if b.t == "CodeBlock" and not b.classes:includes("output") then
      if echo == "false" then
        -- dropped: the cell shows only its outputs
      elseif (fold == "true" or fold == "show") and is_html() then
        local open = fold == "show" and " open" or ""
        out:insert(pandoc.RawBlock("html", '<details class="code-fold"' .. open .. '>\n<summary>'
          .. summary:gsub("&", "&amp;"):gsub("<", "&lt;") .. '</summary>'))
        out:insert(b)
        out:insert(pandoc.RawBlock("html", "</details>"))
      else
        out:insert(b)
      end
    elseif b.t == "Div" and b.classes:includes("output") then
      local cls = pandoc.List({"cell-output"})
      for _, c in ipairs(b.classes) do
        if output_class[c] then cls:insert(output_class[c]) end
        if c == "stdout" or c == "stderr" then cls:insert("cell-output-" .. c) end
      end
      if figcap and figcap ~= "" then
        b.content = pandoc.walk_block(pandoc.Div(b.content), {
          Para = function(p)
            if #p.content == 1 and p.content[1].t == "Image" then
              local img = p.content[1]
              img.caption = pandoc.read(figcap, "markdown").blocks[1].content
              img.title = "fig:" .. (img.title or "")
              return pandoc.Para({img})
            end
          end}).content
      end
      if is_html() then out:insert(pandoc.Div(b.content, pandoc.Attr("", cls, {})))
      else out:extend(b.content) end
    else
      out:insert(b)
    end
  end
  if not is_html() then return out end
  return pandoc.Div(out, pandoc.Attr(el.identifier, {"cell"}, {}))
end

local function callout(el, kind)
  local title = el.attributes["title"]
  local content = el.content
  local title_inlines
  if title then
    title_inlines = pandoc.read(title, "markdown").blocks[1]
    title_inlines = title_inlines and title_inlines.content or pandoc.List()
  elseif #content > 0 and content[1].t == "Header" then
    title_inlines = content[1].content
    content = pandoc.List({table.unpack(content, 2)})
  else
    title_inlines = pandoc.List({pandoc.Str(callout_titles[kind] or kind)})
  end
  if not is_html() then
    local blocks = pandoc.List({pandoc.Para({pandoc.Strong(title_inlines)})})
    blocks:extend(content)
    return pandoc.BlockQuote(blocks)
  end
  local collapse = unquote(el.attributes["collapse"])
  local header = pandoc.Div({pandoc.Plain(title_inlines)}, pandoc.Attr("", {"callout-header"}, {}))
  local body = pandoc.Div(content, pandoc.Attr("", {"callout-body"}, {}))
  local attr = pandoc.Attr(el.identifier, {"callout", "callout-" .. kind}, {})
  if collapse == "true" or collapse == "false" then
    local open = collapse == "false" and " open" or ""
    return pandoc.Div({
      pandoc.RawBlock("html", '<details class="callout-fold"' .. open .. '>\n<summary>'),
      header, pandoc.RawBlock("html", "</summary>"), body, pandoc.RawBlock("html", "</details>")}, attr)
  end
  return pandoc.Div({header, body}, attr)
end

local function div(el)
  if el.classes:includes("cell") and el.classes:includes("code") then return code_cell(el) end
  if el.classes:includes("cell") and (el.classes:includes("markdown") or el.classes:includes("raw")) then
    -- unwrapped, as in Quarto (a Div opening with a heading would also hide its headings from pandoc's TOC)
    return el.content
  end
  for _, c in ipairs(el.classes) do
    local kind = c:match("^callout%-(%a+)$")
    if kind then return callout(el, kind) end
  end
  return nil
end

local function raw_block(el)
  -- the autogenerated-file warning that nbdev inserts is noise in a README
  if not is_html() and el.format == "html" and el.text:match("^<!%-%- WARNING") then return {} end
  return nil
end

-- Heading ids as Quarto writes them (pandoc's markdown algorithm, which the ipynb reader does not use):
-- lower case, `.` `_` `-` kept, other punctuation dropped, spaces to `-`, nothing before the first letter,
-- `-1`, `-2` ... for repeats; so `7. Measured quality` -> `measured-quality` and nbdev's show_doc heading
-- `EnergyTransformer.grad` -> `energytransformer.grad`. Explicit ids ({#id}) are kept.
local used_ids = {}

local function is_punct(c)
  return (c >= 0x80 and c <= 0xBF) or c == 0xD7 or c == 0xF7 or (c >= 0x2000 and c <= 0x2BFF)
    or (c >= 0x3000 and c <= 0x303F)
end

local function quarto_id(text)
  local out = {}
  for _, c in utf8.codes(text) do
    local ch = utf8.char(c)
    if c < 128 then
      if ch:match("[%w_%.%-]") then out[#out + 1] = ch:lower()
      elseif ch:match("%s") then out[#out + 1] = "-" end
    elseif not is_punct(c) then
      out[#out + 1] = pandoc.text.lower(ch)
    end
  end
  local s = table.concat(out)
  local first = s:find("[%a\192-\255]")
  s = first and s:sub(first) or ""
  if s == "" then s = "section" end
  return s
end

local function header_id(el)
  if el.identifier ~= "" then used_ids[el.identifier] = true; return nil end
  local base = quarto_id(pandoc.utils.stringify(el.content))
  local id, n = base, 0
  while used_ids[id] do n = n + 1; id = base .. "-" .. n end
  used_ids[id] = true
  el.identifier = id
  return el
end

return {
  {Meta = read_meta},
  {Div = div, Link = fix_link, Image = fix_image, RawBlock = raw_block},
  {Header = header_id},
}
