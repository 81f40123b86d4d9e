/* Reader aids for the pandoc-rendered site (tools/build_site.py): collapsible sidebar, a table of contents
   that follows the reader, copy buttons on code, heading anchors, and offline search with lunr over the
   section index that `make site` writes (site_libs/search_index.js). No network, works from file:// too. */
(function () {
  "use strict";
  var root = document.documentElement.getAttribute("data-site-root") || "";

  function ready(fn) {
    if (document.readyState !== "loading") fn(); else document.addEventListener("DOMContentLoaded", fn);
  }

  // ------------------------------------------------------------------------------------ sidebar toggle
  function sidebarToggle() {
    var btn = document.getElementById("sidebar-toggle");
    if (!btn) return;
    btn.addEventListener("click", function () {
      var open = document.body.classList.toggle("sidebar-open");
      btn.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  // ------------------------------------------------------------------- TOC: collapsible and highlighted
  function tocFollow() {
    var toc = document.getElementById("TOC");
    if (!toc) return;
    var title = document.getElementById("toc-title");
    if (title) {
      title.setAttribute("role", "button");
      title.setAttribute("tabindex", "0");
      var flip = function () { toc.classList.toggle("toc-open"); };
      title.addEventListener("click", flip);
      title.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); flip(); } });
    }
    var links = Array.prototype.slice.call(toc.querySelectorAll("a[href^='#']"));
    var targets = links.map(function (a) { return document.getElementById(decodeURIComponent(a.getAttribute("href").slice(1))); });
    var current = null;
    function update() {
      var offset = Math.max(120, window.innerHeight * 0.3), best = -1;   // the section in the top third is current
      for (var i = 0; i < targets.length; i++) {
        if (targets[i] && targets[i].getBoundingClientRect().top <= offset) best = i;
      }
      if (best < 0 && targets.length) best = 0;
      var a = links[best];
      if (a === current) return;
      if (current) current.classList.remove("active");
      if (a) a.classList.add("active");
      current = a;
      if (a && toc.scrollHeight > toc.clientHeight + 4 && getComputedStyle(toc).position === "sticky") {
        toc.scrollTop = Math.max(0, a.offsetTop - toc.clientHeight / 2);   // keep the current entry in view
      }
    }
    var pending = false;
    window.addEventListener("scroll", function () {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(function () { pending = false; update(); });
    }, {passive: true});
    update();
  }

  // --------------------------------------------------------------------------------------- copy buttons
  function copyText(text, done) {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text); done(); });
    } else { fallbackCopy(text); done(); }
  }
  function fallbackCopy(text) {
    var ta = document.createElement("textarea");
    ta.value = text; ta.setAttribute("readonly", ""); ta.style.position = "fixed"; ta.style.opacity = "0";
    document.body.appendChild(ta); ta.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing more to try */ }
    document.body.removeChild(ta);
  }
  function copyButtons() {
    var blocks = document.querySelectorAll("main div.sourceCode");
    Array.prototype.forEach.call(blocks, function (div) {
      if (div.closest(".cell-output")) return;   // outputs are not code to copy
      var pre = div.querySelector("pre");
      if (!pre) return;
      var b = document.createElement("button");
      b.type = "button"; b.className = "code-copy"; b.title = "Copy to clipboard";
      b.setAttribute("aria-label", "Copy to clipboard"); b.textContent = "Copy";
      b.addEventListener("click", function () {
        copyText(pre.innerText.replace(/\n$/, ""), function () {
          b.textContent = "Copied"; b.classList.add("copied");
          setTimeout(function () { b.textContent = "Copy"; b.classList.remove("copied"); }, 1500);
        });
      });
      div.classList.add("has-copy");
      div.insertBefore(b, div.firstChild);
    });
  }

  // ----------------------------------------------------------------------------------- heading anchors
  function headingAnchors() {
    var hs = document.querySelectorAll("main h2[id], main h3[id], main h4[id]");
    Array.prototype.forEach.call(hs, function (h) {
      if (h.querySelector("a.anchor")) return;
      var a = document.createElement("a");
      a.className = "anchor"; a.href = "#" + h.id; a.setAttribute("aria-label", "Link to this section");
      a.textContent = "#";
      h.appendChild(a);
    });
  }

  // --------------------------------------------------------------------------------------------- search
  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src; s.onload = resolve;
      s.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(s);
    });
  }
  var searchReady = null;
  function searchIndex() {
    if (!searchReady) {
      searchReady = loadScript(root + "site_libs/lunr/lunr.min.js")
        .then(function () { return loadScript(root + "site_libs/search_index.js"); })
        .then(function () {
          var data = window.SITE_SEARCH, docs = {};
          data.docs.forEach(function (d) { docs[d.id] = d; });
          var idx = data.index ? lunr.Index.load(data.index) : lunr(function () {
            this.ref("id"); this.field("title", {boost: 10}); this.field("text");
            var self = this;
            data.docs.forEach(function (d) { self.add(d, {boost: d.boost}); });
          });
          return {idx: idx, docs: docs};
        });
    }
    return searchReady;
  }
  function escapeHtml(s) {
    return s.replace(/[&<>"]/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]; });
  }
  function snippet(text, words) {
    var lower = text.toLowerCase(), at = -1;
    for (var i = 0; i < words.length && at < 0; i++) at = lower.indexOf(words[i].toLowerCase());
    var start = Math.max(0, at - 60);
    var s = (start > 0 ? "\u2026" : "") + text.slice(start, start + 180) + (text.length > start + 180 ? "\u2026" : "");
    s = escapeHtml(s);
    words.forEach(function (w) {
      if (w.length < 2) return;
      s = s.replace(new RegExp("(" + w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + ")", "ig"), "<mark>$1</mark>");
    });
    return s;
  }
  function runSearch(idx, q) {
    var words = q.trim().split(/\s+/).filter(Boolean);
    if (!words.length) return [];
    var query = words.map(function (w) { return w.replace(/[:~^+\-*]/g, ""); }).filter(Boolean);
    try {
      var res = idx.query(function (qb) {
        query.forEach(function (w) {
          var t = w.toLowerCase();
          qb.term(t, {boost: 10, usePipeline: true});   // stemmed, as the index is: "gradients" finds "gradient"
          qb.term(t, {boost: 1, usePipeline: false, wildcard: lunr.Query.wildcard.TRAILING});   // prefixes
        });
      });
      return res;
    } catch (e) { return []; }
  }
  function search() {
    var input = document.getElementById("search-input"), box = document.getElementById("search-results");
    if (!input || !box) return;
    var timer = null, active = -1;
    function show(items) {
      box.innerHTML = items; box.hidden = !items;
      active = -1;
    }
    function go() {
      var q = input.value;
      if (!q.trim()) { show(""); return; }
      searchIndex().then(function (s) {
        if (input.value !== q) return;
        var words = q.trim().split(/\s+/);
        var res = runSearch(s.idx, q).slice(0, 12);
        if (!res.length) { show('<p class="search-none">No results for \u201c' + escapeHtml(q) + '\u201d</p>'); return; }
        show(res.map(function (r) {
          var d = s.docs[r.ref];
          return '<a class="search-result" href="' + escapeHtml(root + d.url) + '"><span class="search-title">'
            + escapeHtml(d.title) + '</span><span class="search-page">' + escapeHtml(d.page) + '</span>'
            + '<span class="search-snippet">' + snippet(d.text, words) + "</span></a>";
        }).join(""));
      }, function (e) { show('<p class="search-none">Search is unavailable: ' + escapeHtml(e.message) + "</p>"); });
    }
    input.addEventListener("focus", function () { searchIndex(); });
    input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(go, 120); });
    input.addEventListener("keydown", function (e) {
      var items = box.querySelectorAll("a.search-result");
      if (e.key === "Escape") { show(""); input.blur(); return; }
      if (!items.length) return;
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        if (active >= 0) items[active].classList.remove("active");
        if (e.key === "ArrowDown") active = (active + 1) % items.length;
        else active = active <= 0 ? items.length - 1 : active - 1;
        items[active].classList.add("active");
        items[active].scrollIntoView({block: "nearest"});
      } else if (e.key === "Enter") {
        e.preventDefault();
        window.location.href = items[Math.max(active, 0)].href;
      }
    });
    document.addEventListener("click", function (e) {
      if (!box.contains(e.target) && e.target !== input) show("");
    });
    box.addEventListener("click", function () { show(""); });
    document.addEventListener("keydown", function (e) {
      if (e.key === "/" && document.activeElement !== input && !/INPUT|TEXTAREA/.test(document.activeElement.tagName)) {
        e.preventDefault(); input.focus();
      }
    });
  }

  // ----------------------------------------------------- a link into a folded section opens its folds
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var t = id && document.getElementById(id);
    if (!t) return;
    var opened = false;
    for (var e = t.parentElement; e; e = e.parentElement) {
      if (e.tagName === "DETAILS" && !e.open) { e.open = true; opened = true; }
    }
    if (opened) t.scrollIntoView();
  }

  ready(function () {
    openTarget();
    window.addEventListener("hashchange", openTarget);
    sidebarToggle();
    headingAnchors();
    copyButtons();
    tocFollow();
    search();
  });
})();
