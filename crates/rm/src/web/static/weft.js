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
        applyFilter();
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

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) { refresh(); }
  });
  var box = document.getElementById("text-filter");
  if (box) {
    box.addEventListener("input", applyFilter);
    // Keeps the filter text across reloads of the same page.
    // A link may carry the filter as #filter=words; otherwise keep it across reloads.
    var key = "weft-filter:" + location.pathname;
    var linked = /^#filter=(.*)$/.exec(location.hash);
    try {
      box.value = linked ? decodeURIComponent(linked[1]) : (sessionStorage.getItem(key) || "");
      box.addEventListener("input", function () { sessionStorage.setItem(key, box.value); });
    } catch (e) {
      // Storage may be disabled (or the hash malformed); the filter still works by typing.
    }
    applyFilter();
  }
  showTime();
  setInterval(refresh, INTERVAL_MS);
})();
