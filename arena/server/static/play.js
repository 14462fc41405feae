// The play page: long-polls its game, draws the seat's board, and posts the clicked legal move.
"use strict";
(function () {
  var box = document.getElementById("table");
  if (!box) { return; }
  var id = box.dataset.id, form = box.dataset.form, seen = -1, over = false;
  var api = "/api/v1/play/" + id;
  var FINAL = ["over", "cancelled", "failed"];

  function post(path, body) {
    return fetch(api + path, {method: "POST", credentials: "same-origin", body: JSON.stringify(body || {}),
                              headers: {"Content-Type": "application/json", "X-Arena-Form": form}})
      .then(function (response) {
        return response.json().then(function (data) {
          if (!response.ok) { throw new Error(data.error || ("HTTP " + response.status)); }
          return data;
        });
      });
  }

  // The end as the seat was told it, else as stored (an opponent that fails before the person's first move).
  function ending(t) {
    if (t.end) { return t.end; }
    if (!t.result) { return null; }
    var mine = t.result.seats.filter(function (s) { return s.seat === t.seat; })[0];
    return {outcome: mine ? mine.outcome : null, turns: t.result.turns, reason: t.result.reason, detail: t.result.detail};
  }

  function outcome(t) {
    var end = ending(t);
    var words = {win: "You win", loss: "You lose", draw: "A draw"};
    var text = (words[end ? end.outcome : null] || "The game ended");
    if (end) {
      text += " after " + end.turns + (end.turns === 1 ? " move" : " moves");
      if (end.reason !== "normal") { text += " (" + end.reason + (end.detail ? ": " + end.detail : "") + ")"; }
    }
    return text + ".";
  }

  function show(t) {
    seen = t.version;
    box.dataset.version = t.version;
    box.dataset.status = t.status;
    var status = document.getElementById("status");
    if (t.status === "your_move") { status.textContent = "Your move (move " + t.move + ")."; }
    else if (FINAL.indexOf(t.status) >= 0) { status.textContent = t.status === "over" ? outcome(t) : "The game was not scored: " + (t.error || t.status); }
    else if (t.status === "finishing") { status.textContent = outcome(t) + " Storing it..."; }
    else { status.textContent = "Waiting for the opponent..." + (t.played ? " (you played " + t.played + ")" : ""); }
    var board = document.getElementById("board");
    if (t.board && t.board.svg) { board.innerHTML = '<div class="board">' + t.board.svg + "</div>"; }
    else if (t.board) { board.innerHTML = ""; var pre = document.createElement("pre"); pre.className = "board"; pre.textContent = t.board.text; board.appendChild(pre); }
    var moves = document.getElementById("moves");
    moves.innerHTML = "";
    t.legal.forEach(function (m) {
      var button = document.createElement("button");
      button.type = "button"; button.className = "move"; button.dataset.action = m.id; button.textContent = m.name;
      button.title = "action " + m.id;
      moves.appendChild(button);
    });
    if (t.result) {
      var result = document.getElementById("result");
      result.innerHTML = "";
      var p = document.createElement("p");
      p.id = "stored";
      p.appendChild(document.createTextNode("Stored as "));
      var a = document.createElement("a"); a.href = "/matches/" + t.result.id; a.textContent = "match " + t.result.id; p.appendChild(a);
      p.appendChild(document.createTextNode(" (its replay); see the "));
      var l = document.createElement("a"); l.href = "/leaderboard?game=" + encodeURIComponent(t.game); l.textContent = "leaderboard"; p.appendChild(l);
      p.appendChild(document.createTextNode(". "));
      var again = document.createElement("a"); again.href = "/play"; again.textContent = "Play again"; p.appendChild(again);
      result.appendChild(p);
    }
    if (FINAL.indexOf(t.status) >= 0) { over = true; document.getElementById("leave").disabled = true; }
  }

  document.getElementById("moves").addEventListener("click", function (event) {
    var button = event.target.closest("button.move");
    if (!button) { return; }
    document.querySelectorAll("#moves button").forEach(function (b) { b.disabled = true; });
    document.getElementById("error").textContent = "";
    post("/move", {action: Number(button.dataset.action)}).then(show).catch(function (e) {
      document.getElementById("error").textContent = e.message;
      document.querySelectorAll("#moves button").forEach(function (b) { b.disabled = false; });
    });
  });
  document.getElementById("leave").addEventListener("click", function () {
    post("/leave").then(show).catch(function (e) { document.getElementById("error").textContent = e.message; });
  });

  // The game is gone (404: the server restarted without it) or the person signed out (401): say so and stop asking.
  function gone(message, href, label) {
    over = true;
    box.dataset.status = "gone";
    document.querySelectorAll("#moves button").forEach(function (b) { b.disabled = true; });
    document.getElementById("leave").disabled = true;
    var status = document.getElementById("status");
    status.textContent = message + " ";
    var link = document.createElement("a"); link.href = href; link.textContent = label; status.appendChild(link);
  }

  function poll() {
    if (over) { return; }
    fetch(api + "?seen=" + seen + "&wait=15", {credentials: "same-origin"})
      .then(function (response) {
        if (response.status === 404) {
          gone("This game is no longer on the server (it was restarted).", "/play", "Start another game");
          return null;
        }
        if (response.status === 401) {
          gone("You are signed out.", "/signin?next=" + encodeURIComponent(window.location.pathname), "Sign in again");
          return null;
        }
        return response.json().then(function (data) { if (!response.ok) { throw new Error(data.error); } return data; });
      })
      .then(function (t) { if (t) { show(t); setTimeout(poll, 0); } })
      .catch(function (e) { document.getElementById("error").textContent = e.message; setTimeout(poll, 2000); });
  }
  poll();
})();
