"""An Arena pull bot in Python: `python pull_bot.py ws://HOST:PORT BOT_TOKEN` (needs `pip install websockets`).

It connects out to `arena serve` (no open port needed), says hello with its bot token, and answers
every `act` with {"action": <one of legal_actions>, "match_id": ...}. This one plays a random legal
move; put your own choice in `choose`. It reconnects when the connection drops.
"""
import json
import random
import sys
import time

from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import connect


def choose(message):
    return random.choice(message["legal_actions"])


def play(url, token):
    url = "ws" + url[4:] if url.startswith("http") else url  # http://... -> ws://..., https://... -> wss://...
    with connect(url.rstrip("/") + "/api/v1/bots/connect") as socket:
        socket.send(json.dumps({"type": "hello", "protocol": 1, "token": token}))
        welcome = json.loads(socket.recv())
        if welcome["type"] != "welcome":
            sys.exit(f"refused: {welcome.get('error')}")
        print(f"connected to {url} as {welcome['agent']}", flush=True)
        for text in socket:
            message = json.loads(text)
            if message["type"] == "act":
                socket.send(json.dumps({"action": choose(message), "match_id": message["match_id"], "seq": message["seq"]}))


if __name__ == "__main__":
    while True:
        try:
            play(sys.argv[1], sys.argv[2])
        except (OSError, ConnectionClosed, InvalidHandshake) as exc:
            print(f"connection lost ({exc}); again in 1 s", flush=True)
            time.sleep(1)
