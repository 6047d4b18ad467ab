// agentwire report: sortable tables and pagination. No network, no eval, no inline handlers.
(function () {
  "use strict";
  var PAGE = 100;
  function cellValue(row, i) {
    var c = row.cells[i];
    if (!c) { return ""; }
    var v = c.getAttribute("data-v");
    if (v !== null && v !== "" && !isNaN(Number(v))) { return Number(v); }
    return c.textContent;
  }
  function paginate(table) {
    var body = table.tBodies[0];
    if (!body || body.rows.length <= PAGE) { return; }
    var pager = table.previousElementSibling;
    if (!pager || !pager.classList.contains("pager")) {
      pager = document.createElement("div");
      pager.className = "pager";
      table.parentNode.insertBefore(pager, table);
    }
    var page = Number(table.getAttribute("data-page") || "0");
    var pages = Math.ceil(body.rows.length / PAGE);
    for (var r = 0; r < body.rows.length; r++) {
      body.rows[r].classList.toggle("hidden", Math.floor(r / PAGE) !== page);
    }
    pager.textContent = "";
    var info = document.createElement("span");
    info.textContent = "rows " + (page * PAGE + 1) + "–" + Math.min(body.rows.length, (page + 1) * PAGE) + " of " + body.rows.length;
    [["« first", 0], ["‹ prev", page - 1], ["next ›", page + 1], ["last »", pages - 1]].forEach(function (b) {
      var btn = document.createElement("button");
      btn.type = "button";
      btn.textContent = b[0];
      btn.disabled = b[1] < 0 || b[1] >= pages || b[1] === page;
      btn.addEventListener("click", function () { table.setAttribute("data-page", String(b[1])); paginate(table); });
      pager.appendChild(btn);
    });
    pager.appendChild(info);
    var all = document.createElement("button");
    all.type = "button";
    all.textContent = "show all";
    all.addEventListener("click", function () {
      for (var r = 0; r < body.rows.length; r++) { body.rows[r].classList.remove("hidden"); }
      pager.textContent = body.rows.length + " rows";
    });
    pager.appendChild(all);
  }
  function sortable(table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, i) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var asc = !th.classList.contains("asc");
        Array.prototype.forEach.call(heads, function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        rows.sort(function (x, y) {
          var a = cellValue(x, i), b = cellValue(y, i);
          var r = (typeof a === "number" && typeof b === "number") ? a - b : String(a).localeCompare(String(b));
          return asc ? r : -r;
        });
        rows.forEach(function (r) { body.appendChild(r); });
        table.setAttribute("data-page", "0");
        paginate(table);
      });
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), sortable);
  Array.prototype.forEach.call(document.querySelectorAll("table.paged"), paginate);
}());
