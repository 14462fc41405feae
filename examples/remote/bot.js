// An Arena pull bot for Node.js, standard library only: `node bot.js URL TOKEN` (URL: http://HOST:PORT of `arena serve`).
// It connects out over a WebSocket, says hello with its bot token, answers every `act` with a random legal move
// (put your own choice in `choose`), and reconnects when the connection drops. Node 22+ has WebSocket built in;
// Node 20 gets it with --experimental-websocket, which this script adds itself: it runs again as its own child, which
// ends when this process ends (killed, it could not pass a signal on while it waits).
const { spawnSync } = require("node:child_process");

if (typeof WebSocket === "undefined") {
  const env = { ...process.env, ARENA_BOT_PARENT: String(process.pid) };
  const run = spawnSync(process.execPath, ["--experimental-websocket", ...process.argv.slice(1)], { stdio: "inherit", env });
  process.exit(run.status ?? 1);
}
if (process.env.ARENA_BOT_PARENT) {
  const parent = process.env.ARENA_BOT_PARENT;
  setInterval(() => process.ppid === Number(parent) || process.exit(0), 500).unref();
}

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error("usage: node bot.js URL TOKEN");
  process.exit(2);
}

function choose(message) {
  const legal = message.legal_actions;
  return legal[Math.floor(Math.random() * legal.length)];
}

function connect() {
  let retrying = false;
  const retry = () => {
    if (!retrying) {
      retrying = true;
      setTimeout(connect, 1000);
    }
  };
  const socket = new WebSocket(url.replace(/^http/, "ws").replace(/\/$/, "") + "/api/v1/bots/connect");
  socket.onopen = () => socket.send(JSON.stringify({ type: "hello", protocol: 1, token }));
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "welcome") console.log(`connected to ${url} as ${message.agent}`);
    else if (message.type === "error") {
      console.error(`refused: ${message.error}`);
      process.exit(1);
    } else if (message.type === "act") {
      socket.send(JSON.stringify({ action: choose(message), match_id: message.match_id, seq: message.seq }));
    }
  };
  socket.onclose = retry;
  socket.onerror = retry; // Node 20 reports a refused connection with an error and no close
}

connect();
