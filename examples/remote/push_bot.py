"""An Arena push bot in plain Python: `python push_bot.py [PORT]` serves http://127.0.0.1:PORT (default 9000).

Arena POSTs JSON to /start, /act and /end; /act is answered with {"action": <one of legal_actions>}.
This one plays a random legal move; put your own choice in `choose`.
"""
import json
import random
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def choose(message):
    return random.choice(message["legal_actions"])


class Bot(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep the connection open from move to move
    disable_nagle_algorithm = True  # else each answer waits ~40 ms for a delayed ACK (see the README)

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps({"action": choose(message)} if self.path == "/act" else {}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # no line per request
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 9000), Bot)
    print(f"push bot on http://127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()
