// Build the site's lunr index from the search documents on stdin (tools/site_search.py); print it as JSON.
// Usage: node build_index.js /usr/share/javascript/lunr/lunr.js < docs.json
"use strict";
const lunr = require(process.argv[2]);
const docs = JSON.parse(require("fs").readFileSync(0, "utf8"));
const idx = lunr(function () {
  this.ref("id");
  this.field("title", {boost: 10});
  this.field("text");
  docs.forEach((d) => this.add(d, {boost: d.boost}), this);
});
process.stdout.write(JSON.stringify(idx));
