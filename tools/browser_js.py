"""The JavaScript that tools/browser_test.py runs in the pages of the built site: what a reader sees of a page
(visible text, cell outputs, math, images, headings, links, what sticks out at phone width) and, on the home
page, the sidebar's links and state and the search box's results."""

# Visible text outside code, as the reader sees it (no <pre>/<code>/<script>, no hidden elements).
JS_TEXT = r"""
const skip = new Set(['PRE','CODE','SCRIPT','STYLE','NOSCRIPT','TEXTAREA','SVG']);
const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const out = [];
for (let n = w.nextNode(); n; n = w.nextNode()) {
  let e = n.parentElement, ok = true;
  for (let a = e; a; a = a.parentElement) { if (skip.has(a.tagName.toUpperCase())) { ok = false; break; } }
  if (!ok || !n.textContent.trim()) continue;
  if (e.offsetParent === null && getComputedStyle(e).position !== 'fixed' && !e.closest('details')) continue;
  out.push(n.textContent);
}
return out.join(' ');
"""
JS_MATH_WAIT = r"""
const done = arguments[arguments.length - 1];
if (window.MathJax && MathJax.Hub && MathJax.Hub.Queue) { MathJax.Hub.Queue(() => done('mathjax2')); }
else if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
  MathJax.startup.promise.then(() => done('mathjax3'), () => done('mathjax3-error')); }
else { done('none'); }
"""
JS_MATH = r"""
const scripts = [...document.querySelectorAll('script[type^="math/tex"]')];
const untypeset = scripts.filter(s => !document.getElementById(s.id + '-Frame')).map(s => s.textContent);
const pandocMath = document.querySelectorAll('span.math, .math').length;
const rendered = document.querySelectorAll('.MathJax_CHTML, .MathJax, .MathJax_Display, mjx-container, math').length;
const errors = [...document.querySelectorAll('.MathJax_Error, .mjx-merror, [data-mjx-error], .noError, mjx-merror')]
  .map(e => e.textContent.slice(0, 80)).concat((window.mathjaxErrors || []).map(e => e.slice(0, 80)));
return {scripts: scripts.length, untypeset, pandocMath, rendered, errors};
"""
JS_IMAGES = r"""
return [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'));
"""
# Text of the cells' outputs (printed text is in <pre>, which JS_TEXT leaves out).
JS_OUTPUT_TEXT = r"""
return [...document.querySelectorAll('.cell-output pre, .cell-output code')].map(e => e.textContent).join('\n');
"""
# Headings of the content with nothing under them: the next heading (of the same or a higher level) or the end
# of the content comes before any paragraph, list, table, code, figure or math.
JS_EMPTY_HEADINGS = r"""
const root = document.querySelector('main') || document.body;
const CONTENT = new Set(['P','PRE','TABLE','IMG','UL','OL','DL','BLOCKQUOTE','FIGURE','SVG','CANVAS','DETAILS',
                         'VIDEO','IFRAME','MJX-CONTAINER']);
const isContent = e => CONTENT.has(e.tagName.toUpperCase()) || e.classList.contains('MathJax_Display')
  || e.classList.contains('callout');
const all = [...root.querySelectorAll('*')];
const empty = [];
const title = h => [...h.childNodes].filter(n => !(n.classList && n.classList.contains('anchor')))
  .map(n => n.textContent).join('').trim().slice(0, 80);
let open = null;   // {el, level}
for (const e of all) {
  if (open && open.el.contains(e)) continue;
  const m = /^H([1-6])$/.exec(e.tagName.toUpperCase());
  if (m) {
    if (e.closest('nav, #TOC, .toc, #sidebar, header.navbar')) continue;
    const level = +m[1];
    if (open && level <= open.level) empty.push(title(open.el));
    open = {el: e, level};
  } else if (open && isContent(e) && e.getBoundingClientRect().height > 0) {
    open = null;
  }
}
if (open) empty.push(title(open.el));
return empty;
"""
# Images in the first screen: loaded, at least MIN_FIGURE in size, and at least partly above the fold.
JS_FIRST_SCREEN_IMAGES = r"""
const [minW, minH] = arguments;
window.scrollTo(0, 0);
return [...document.images].filter(i => {
  const r = i.getBoundingClientRect();
  return i.complete && i.naturalWidth > 0 && r.width >= minW && r.height >= minH && r.top < innerHeight
    && r.bottom > 0;
}).map(i => i.getAttribute('src'));
"""
JS_LINKS = r"""
return [...document.querySelectorAll('a[href]')].map(a => a.href);
"""
# Elements that stick out on the right of a narrow window (inside no scrolling or clipping box).
JS_OVERFLOW = r"""
const W = document.documentElement.clientWidth, over = document.documentElement.scrollWidth - W;
if (over <= 0) return {over, culprits: []};
const clips = e => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
  const o = getComputedStyle(a).overflowX; if (o !== 'visible') return true; } return false; };
const culprits = [];
for (const e of document.body.querySelectorAll('*')) {
  const r = e.getBoundingClientRect();
  if (r.right > W + 1 && r.width > 0 && !clips(e) && getComputedStyle(e).position !== 'fixed') {
    culprits.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
                  (e.className && typeof e.className === 'string'
                   ? '.' + e.className.trim().split(/\s+/).join('.') : '') +
                  ' (right edge ' + Math.round(r.right) + ' px)');
    if (culprits.length >= 3) break; }
}
return {over, culprits};
"""
JS_SIDEBAR_STATE = r"""
const s = document.getElementById('sidebar'); if (!s) return null;
const r = s.getBoundingClientRect(), st = getComputedStyle(s);
return {visible: st.visibility !== 'hidden' && st.display !== 'none' && r.right > 0 && r.left < innerWidth
                 && r.width > 0};
"""
JS_SEARCH_RESULTS = r"""
return [...document.querySelectorAll('#search-results a.search-result')].map(a => a.href);
"""
JS_SIDEBAR = r"""
const links = document.querySelectorAll('#sidebar a.sidebar-link, #quarto-sidebar a.sidebar-link, nav.sidebar a');
return [...new Set([...links].map(a => a.href))];
"""
