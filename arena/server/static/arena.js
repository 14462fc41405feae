// Arena's pages work without this script; with it, progress bars move and the replay viewer steps.
"use strict";
document.documentElement.classList.add("js");

// Progress bars. One bar (a tournament's page): its EventSource (ids are matches stored, so reconnects resume).
// Several (the home page): one poll of the tournaments' listing every 2 s while any is live; an EventSource each
// would hold one of the browser's 6 connections to this server apiece, and 6 live tournaments left no connection
// for any other page of the site.
var FINAL = ["done", "cancelled", "failed"];
function showProgress(box, data) {
  var bar = box.querySelector("progress");
  bar.max = data.matches || 1;
  bar.value = data.done;
  box.querySelector(".count").textContent = data.done + " / " + data.matches;
  var status = box.querySelector(".status");
  status.textContent = data.status;
  status.className = "status status-" + data.status;
  box.dataset.done = data.done;
  box.dataset.status = data.status;
}
(function () {
  var boxes = Array.prototype.slice.call(document.querySelectorAll("[data-events]"));
  if (boxes.length === 1) {
    var box = boxes[0];
    var source = new EventSource(box.dataset.events);
    source.addEventListener("progress", function (event) { showProgress(box, JSON.parse(event.data)); });
    source.addEventListener("end", function (event) {
      showProgress(box, JSON.parse(event.data));
      source.close();
      if (box.dataset.reload) { window.location.reload(); }
    });
    return;
  }
  function live() {
    return boxes.filter(function (b) { return FINAL.indexOf(b.dataset.status) < 0; });
  }
  function poll() {
    if (live().length === 0) { return; }
    fetch("/api/v1/tournaments", {headers: {"Accept": "application/json"}}).then(function (response) {
      return response.ok ? response.json() : [];
    }).then(function (rows) {
      var byId = {};
      rows.forEach(function (row) { byId[row.id] = row; });
      boxes.forEach(function (b) { if (byId[b.dataset.id]) { showProgress(b, byId[b.dataset.id]); } });
    }).catch(function () {}).then(function () { setTimeout(poll, 2000); });
  }
  poll();
})();

// The replay viewer: buttons and arrow keys step through the positions.
(function () {
  var viewer = document.getElementById("viewer");
  if (!viewer) { return; }
  var positions = viewer.querySelectorAll(".position");
  var last = positions.length - 1;
  var current = 0;
  function go(index) {
    current = Math.max(0, Math.min(last, index));
    positions.forEach(function (p, i) { p.classList.toggle("current", i === current); });
    document.querySelectorAll("#moves tbody tr").forEach(function (row) {
      row.classList.toggle("current", Number(row.dataset.position) === current);
    });
    document.getElementById("where").textContent = "position " + current + " of " + last;
    viewer.dataset.current = current;
  }
  document.getElementById("first").addEventListener("click", function () { go(0); });
  document.getElementById("prev").addEventListener("click", function () { go(current - 1); });
  document.getElementById("next").addEventListener("click", function () { go(current + 1); });
  document.getElementById("last").addEventListener("click", function () { go(last); });
  document.querySelectorAll("#moves tbody tr").forEach(function (row) {
    row.addEventListener("click", function () { go(Number(row.dataset.position)); });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "ArrowRight") { go(current + 1); event.preventDefault(); }
    else if (event.key === "ArrowLeft") { go(current - 1); event.preventDefault(); }
    else if (event.key === "Home") { go(0); event.preventDefault(); }
    else if (event.key === "End") { go(last); event.preventDefault(); }
  });
  go(0);
})();
