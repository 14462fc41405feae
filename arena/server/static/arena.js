// Arena's pages work without this script; with it, progress bars move and the replay viewer steps.
"use strict";
document.documentElement.classList.add("js");

// Progress bars: one EventSource per tournament (ids are matches stored, so reconnects resume).
document.querySelectorAll("[data-events]").forEach(function (box) {
  var source = new EventSource(box.dataset.events);
  function show(event) {
    var data = JSON.parse(event.data);
    var bar = box.querySelector("progress");
    bar.max = data.matches || 1;
    bar.value = data.done;
    box.querySelector(".count").textContent = data.done + " / " + data.matches;
    var status = box.querySelector(".status");
    status.textContent = data.status;
    status.className = "status status-" + data.status;
    box.dataset.done = data.done;
  }
  source.addEventListener("progress", show);
  source.addEventListener("end", function (event) {
    show(event);
    source.close();
    if (box.dataset.reload) { window.location.reload(); }
  });
});

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
