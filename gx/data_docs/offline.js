/* LARA gate: a tiny stand-in for the jQuery / Bootstrap / bootstrap-table
   calls of GX Data Docs, so that the pages work offline. It renders the
   JavaScript-fed index tables as plain tables and turns the rest into no-ops. */
(function () {
  "use strict";
  function Q(nodes) { this.nodes = nodes; this.length = nodes.length; }
  function select(selector) {
    if (selector === document || selector === window || selector instanceof Element) {
      return new Q([selector]);
    }
    if (typeof selector !== "string") { return new Q([]); }
    try { return new Q(Array.prototype.slice.call(document.querySelectorAll(selector))); }
    catch (error) { return new Q([]); }
  }
  function ready(fn) {
    if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", fn); }
    else { fn(); }
  }
  function $(selector) {
    if (typeof selector === "function") { ready(selector); return new Q([]); }
    return select(selector);
  }
  var noop = function () { return this; };
  Q.prototype.each = function (fn) {
    this.nodes.forEach(function (node, index) { fn.call(node, index, node); });
    return this;
  };
  Q.prototype.parent = function () {
    return new Q(this.nodes.map(function (n) { return n.parentElement; }).filter(Boolean));
  };
  Q.prototype.fadeIn = function () { return this.each(function () { this.style.display = ""; }); };
  Q.prototype.fadeOut = function () { return this.each(function () { this.style.display = "none"; }); };
  Q.prototype.addClass = function (c) { return this.each(function () { this.classList.add(c); }); };
  Q.prototype.removeClass = function (c) { return this.each(function () { this.classList.remove(c); }); };
  Q.prototype.data = function (key) {
    var node = this.nodes[0];
    return node ? node.getAttribute("data-" + key) : undefined;
  };
  Q.prototype.ready = function (fn) { ready(fn); return this; };
  Q.prototype.on = noop; Q.prototype.modal = noop; Q.prototype.tooltip = noop;
  Q.prototype.popover = noop; Q.prototype.collapse = noop; Q.prototype.tab = noop;
  Q.prototype.bootstrapTable = function (options) {
    if (!options || typeof options !== "object") { return this; }
    var columns = options.columns || [];
    var rows = options.data || [];
    return this.each(function () {
      var table = this;
      var head = "<thead><tr>" + columns.map(function (c) {
        return "<th>" + (c.title || c.field) + "</th>";
      }).join("") + "</tr></thead>";
      table.innerHTML = head + "<tbody></tbody>";
      var body = table.querySelector("tbody");
      rows.forEach(function (row) {
        var tr = document.createElement("tr");
        tr.innerHTML = columns.map(function (c) {
          var value = row[c.field];
          return "<td>" + (value === undefined || value === null ? "" : value) + "</td>";
        }).join("");
        if (row._table_row_link_path) {
          tr.className = "clickable-row";
          tr.addEventListener("click", function (event) {
            if (event.target.tagName !== "A") { window.location = row._table_row_link_path; }
          });
        }
        body.appendChild(tr);
      });
    });
  };
  window.$ = window.jQuery = $;
  window.vegaEmbed = function () { return { then: noop, catch: noop }; };
})();
