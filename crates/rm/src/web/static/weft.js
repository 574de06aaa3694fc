// Weft ResourceManager UI: live refresh of each page's #live part and the client-side row
// filter. Hand-written, no dependencies, served by the RM from /static/weft.js.
(function () {
  "use strict";
  var INTERVAL_MS = 3000;
  var live = document.getElementById("live");
  var stamp = document.getElementById("updated");
  var marker = document.getElementById("live-marker");
  var refreshes = 0;
  var inFlight = false;

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function showTime() {
    if (!stamp) { return; }
    var d = new Date();
    stamp.textContent = pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
  }

  // Hides table rows whose text does not contain every word typed in the filter box.
  function applyFilter() {
    var box = document.getElementById("text-filter");
    if (!box) { return; }
    var table = document.getElementById(box.getAttribute("data-table"));
    if (!table || !table.tBodies.length) { return; }
    var words = box.value.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
    var rows = table.tBodies[0].rows;
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      if (row.classList.contains("empty")) { continue; }
      var text = row.textContent.toLowerCase();
      var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
      row.hidden = !ok;
      if (ok) { shown++; }
    }
    table.setAttribute("data-shown", String(shown));
  }

  // Sorting: a click on a column header sorts that table's rows (again: reverse). The choice
  // survives refreshes. The queue table keeps its tree order.
  var sortState = null;
  var UNITS = { MB: 1, GB: 1024, TB: 1048576 };
  function sortKey(cell) {
    var t = cell ? cell.textContent.trim() : "";
    var size = /^(-?\d+(?:\.\d+)?) (MB|GB|TB)\b/.exec(t);
    if (size) { return parseFloat(size[1]) * UNITS[size[2]]; }
    var span = /^(?:(\d+)h ?)?(?:(\d+)m ?)?(?:(\d+)s)?( ago)?$/.exec(t);
    if (span && (span[1] || span[2] || span[3])) {
      return (+(span[1] || 0)) * 3600 + (+(span[2] || 0)) * 60 + (+(span[3] || 0));
    }
    var num = /^(-?\d+(?:\.\d+)?)%?(?: |$)/.exec(t);
    if (num) { return parseFloat(num[1]); }
    return t.toLowerCase();
  }
  function applySort() {
    if (!sortState) { return; }
    var table = document.getElementById(sortState.table);
    if (!table || !table.tBodies.length || !table.tHead) { return; }
    var body = table.tBodies[0];
    var col = sortState.col;
    var dir = sortState.dir;
    var rows = Array.prototype.slice.call(body.rows).filter(function (r) {
      return !r.classList.contains("empty");
    });
    rows.sort(function (a, b) {
      var x = sortKey(a.cells[col]);
      var y = sortKey(b.cells[col]);
      if (typeof x !== typeof y) { x = String(x); y = String(y); }
      return x < y ? -dir : (x > y ? dir : 0);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    var heads = table.tHead.rows[0].cells;
    for (var i = 0; i < heads.length; i++) {
      heads[i].classList.toggle("sorted-asc", i === col && dir === 1);
      heads[i].classList.toggle("sorted-desc", i === col && dir === -1);
    }
  }
  document.addEventListener("click", function (ev) {
    var th = ev.target.closest ? ev.target.closest("table.grid th") : null;
    if (!th) { return; }
    var table = th.closest("table");
    if (!table.id || table.classList.contains("queues")) { return; }
    var same = sortState && sortState.table === table.id && sortState.col === th.cellIndex;
    sortState = { table: table.id, col: th.cellIndex, dir: same ? -sortState.dir : 1 };
    applySort();
  });

  // A table wider than the window scrolls sideways inside its box; mark those boxes (a shadow
  // on the right says "more this way") and count them on <body data-overflow="N">, which also
  // counts the page itself when it is wider than the window.
  function markOverflow() {
    var boxes = document.querySelectorAll(".scroll");
    var count = 0;
    for (var i = 0; i < boxes.length; i++) {
      var wide = boxes[i].scrollWidth > boxes[i].clientWidth + 1;
      boxes[i].classList.toggle("overflowing", wide);
      if (wide) { count++; }
    }
    var doc = document.documentElement;
    if (doc.scrollWidth > doc.clientWidth + 1) { count++; }
    document.body.setAttribute("data-overflow", String(count));
  }
  window.addEventListener("resize", markOverflow);

  // The app page's Kill and Move buttons: after a confirmation, the same REST calls any
  // client makes (so the same ACL checks), as the browser's user (the hadoop.auth cookie, or
  // user.name from this page's address); the RM's refusal is shown beside the buttons.
  document.addEventListener("click", function (ev) {
    var button = ev.target.closest ? ev.target.closest("#app-actions button[data-action]") : null;
    if (!button) { return; }
    var box = button.closest("#app-actions");
    var app = box.getAttribute("data-app");
    var status = box.querySelector(".action-status");
    var base = "/ws/v1/cluster/apps/" + encodeURIComponent(app);
    var request;
    if (button.getAttribute("data-action") === "kill") {
      request = { url: base + "/state", body: { state: "KILLED" }, question: "Kill application " + app + "?" };
    } else {
      var queue = box.querySelector("select[name=queue]").value;
      if (!queue) { status.textContent = "Choose a queue first."; return; }
      request = { url: base + "/queue", body: { queue: queue }, question: "Move application " + app + " to " + queue + "?" };
    }
    if (!window.confirm(request.question)) { return; }
    var user = new URLSearchParams(location.search).get("user.name");
    var url = request.url + (user ? "?user.name=" + encodeURIComponent(user) : "");
    button.disabled = true;
    status.className = "action-status";
    status.textContent = "Working…";
    fetch(url, {
      method: "PUT",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify(request.body)
    })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (j) { return { ok: r.ok, status: r.status, json: j }; });
      })
      .then(function (res) {
        if (res.ok) { location.reload(); return; }
        var e = res.json && res.json.RemoteException;
        status.className = "action-status failed";
        status.textContent = "Refused: " + (e && e.message ? e.message : "HTTP " + res.status);
        button.disabled = false;
      })
      .catch(function () {
        status.className = "action-status failed";
        status.textContent = "The ResourceManager did not answer.";
        button.disabled = false;
      });
  });

  function refresh() {
    if (!live || inFlight || document.hidden) { return; }
    var src = live.getAttribute("data-src");
    if (!src) { return; }
    inFlight = true;
    fetch(src, { cache: "no-store", headers: { "Accept": "text/html" } })
      .then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.text();
      })
      .then(function (html) {
        live.innerHTML = html;
        applySort();
        applyFilter();
        markOverflow();
        refreshes++;
        document.body.setAttribute("data-refreshed", String(refreshes));
        if (marker) { marker.classList.remove("stale"); }
        showTime();
      })
      .catch(function () {
        // The RM may be restarting: keep the last content, mark it stale, retry next round.
        if (marker) { marker.classList.add("stale"); }
      })
      .then(function () { inFlight = false; });
  }

  // Links may carry view settings in the hash: #filter=words&sort=N (column N from 1
  // ascending, -N descending) for the page's first sortable table.
  var linkParams = {};
  location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
    var eq = kv.indexOf("=");
    if (eq <= 0) { return; }
    try {
      linkParams[kv.slice(0, eq)] = decodeURIComponent(kv.slice(eq + 1));
    } catch (e) {
      // A malformed escape in a hand-made link: ignore that setting.
    }
  });
  var sortParam = /^(-?)(\d+)$/.exec(linkParams.sort || "");
  var firstTable = live ? live.querySelector("table.grid:not(.queues)") : null;
  if (sortParam && firstTable && firstTable.id && +sortParam[2] >= 1) {
    sortState = { table: firstTable.id, col: +sortParam[2] - 1, dir: sortParam[1] ? -1 : 1 };
    applySort();
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) { refresh(); }
  });
  var box = document.getElementById("text-filter");
  if (box) {
    box.addEventListener("input", applyFilter);
    // A link may carry the filter (#filter=words); otherwise it is kept across reloads.
    var key = "weft-filter:" + location.pathname;
    try {
      box.value = linkParams.filter !== undefined ? linkParams.filter : (sessionStorage.getItem(key) || "");
      box.addEventListener("input", function () { sessionStorage.setItem(key, box.value); });
    } catch (e) {
      // Storage may be disabled; the filter still works by typing.
    }
    applyFilter();
  }
  showTime();
  markOverflow();
  setInterval(refresh, INTERVAL_MS);
})();
