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
# What the layout rules of tools/browser_layout.py measure in the content (<main>) at one window width: display
# equations wider than their container, code blocks that scroll sideways, tables wider than their container (and
# whether a box of theirs scrolls sideways), figures without a caption, the page's height. Each offending element
# is named by its first 60 characters (an equation by its TeX). Arguments: the least natural size of a figure.
JS_LAYOUT = r"""
const [minW, minH] = arguments;
const root = document.querySelector('main') || document.body;
const shown = e => e.getClientRects().length > 0;
const short = s => (s || '').replace(/\s+/g, ' ').trim().slice(0, 60);
const inner = e => { const s = getComputedStyle(e);
  return e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight); };
const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
const MATH = '.math, .MathJax_Display, .MJXc-display, .mjx-chtml, .MathJax_CHTML, mjx-container';
const box = e => { let c = e.parentElement; while (c && c !== root && c.matches(MATH)) c = c.parentElement; return c; };
const outermost = (sel) => [...root.querySelectorAll(sel)].filter(e => shown(e) && !e.parentElement.closest(sel));
const equations = [];
for (const d of outermost('mjx-container[display="true"], .MathJax_Display, .MJXc-display, .math.display')) {
  const m = d.querySelector('[id$="-Frame"], mjx-math') || d;
  const w = Math.max(d.scrollWidth, m.scrollWidth, m.getBoundingClientRect().width,
                     parseFloat(getComputedStyle(m).minWidth) || 0);
  const c = box(d);
  if (c && w > inner(c) + 1) {
    const src = m.id && document.getElementById(m.id.replace(/-Frame$/, ''));
    equations.push(short(src ? src.textContent : d.textContent) + ` (${Math.round(w)} > ${Math.round(inner(c))} px)`);
  }
}
const code = [];
for (const b of outermost('div.sourceCode, pre')) {
  const e = [b, ...b.querySelectorAll('pre')].find(e => e.scrollWidth > e.clientWidth + 1);
  if (e) code.push(short((b.querySelector('pre') || b).textContent) + ` (${e.scrollWidth} > ${e.clientWidth} px)`);
}
const tables = [], tablesScrolled = [];
for (const t of outermost('table')) {
  const c = t.parentElement, w = Math.max(t.scrollWidth, t.getBoundingClientRect().width);
  if (w <= inner(c) + 1) continue;
  let s = false; for (let a = t; a && a !== root; a = a.parentElement) if (scrolls(a)) { s = true; break; }
  (s ? tablesScrolled : tables).push(short(t.textContent) + ` (${Math.round(w)} > ${Math.round(inner(c))} px)`);
}
const italic = p => p && p.tagName === 'P' && p.textContent.trim() !== '' && [...p.childNodes].every(n =>
  (n.nodeType === 3 && !n.textContent.trim()) || (n.nodeType === 1 && ['EM', 'I'].includes(n.tagName)));
const captioned = i => {
  const f = i.closest('figure'), fc = f && f.querySelector('figcaption');
  if (fc && fc.textContent.trim()) return true;
  const b = i.closest('.cell') || f || i.closest('p') || i;
  return italic(b.nextElementSibling);
};
const figures = [...root.querySelectorAll('img')].filter(i => shown(i) && i.naturalWidth >= minW
                                                              && i.naturalHeight >= minH);
const uncaptioned = figures.filter(i => !captioned(i)).map(i => {
  const c = i.closest('.cell'), code = c && c.querySelector('pre code');
  return short(i.getAttribute('src').split('/').pop() + (code ? ': ' + code.textContent : ''));
});
return {width: innerWidth, height: document.documentElement.scrollHeight, equations, code, tables, tablesScrolled,
        figures: figures.length, uncaptioned};
"""
# The sidebar's page links, each with the title of the section it is in ('' outside sections), the navbar's links
# with their text, and the links of the page's section whose heading names the tutorials (the home page's list).
JS_NAV_ORDER = r"""
const sec = a => { const s = a.closest('li.sidebar-section, li.sidebar-item-section, .sidebar-item-section');
  const t = s && s.querySelector('.sidebar-section-title, .sidebar-item-text, .menu-text');
  return t ? t.textContent.trim() : ''; };
const sidebar = [...document.querySelectorAll('#sidebar a.sidebar-link, #quarto-sidebar a.sidebar-link')]
  .map(a => ({href: a.href, section: sec(a)}));
const navbar = [...document.querySelectorAll('header.navbar a.nav-link, nav.navbar a.nav-link, #quarto-header a.nav-link')]
  .map(a => ({href: a.href, text: a.textContent.trim()}));
// on the home page: the links of its section whose heading names the tutorials, up to the next such heading
const main = document.querySelector('main') || document.body, home = [];
let level = 0;
for (const e of main.querySelectorAll('h1, h2, h3, h4, a[href]')) {
  const m = /^H([1-4])$/.exec(e.tagName);
  if (m) { if (level && +m[1] <= level) break; if (!level && /tutorial/i.test(e.textContent)) level = +m[1]; }
  else if (level) home.push(e.href);
}
return {sidebar, navbar, home};
"""
