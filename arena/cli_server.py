"""`arena serve` and `arena tokens`: the HTTP server and the tokens that let people and bots write to it.

Attached to the group at the end of arena.cli, like arena.cli_report; fastapi and uvicorn are
imported only when the server starts, so other commands do not pay for them.
"""

from __future__ import annotations

import math
import socket
from pathlib import Path
from typing import Any

import click

from arena.cli_report import _Context, db_options
from arena.executors import EXECUTORS, make_executor
from arena.library import tokens
from arena.library.storage import check_writable
from arena.output import print_json, print_table
from arena.plugins import folder_type
from arena.reach import Reach
from arena.remote.hosts import BotHosts


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """click's FloatRange lets nan through (every comparison with nan is false): a lease of nan seconds never ends."""
    if not math.isfinite(value):
        raise click.BadParameter(f"a number of seconds, got {value}")
    return value


def _bot_hosts(ctx: click.Context, param: click.Parameter, value: str | None) -> BotHosts | None:
    try:
        return None if value is None else BotHosts.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(0, 64),
              help="Tournaments played at once, each in its own process (0: serve, play nothing).")
@click.option("--match-workers", default=1, show_default=True, type=click.IntRange(1, 256),
              help="Worker processes per tournament for its matches (as run-tournament --workers).")
@click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
              help="Play each tournament's matches in local processes (--match-workers) or as Ray tasks.")
@click.option("--ray-address", default=None, metavar="ADDRESS",
              help="With --executor ray: the cluster (default: a local Ray per tournament).")
@click.option("--private", is_flag=True, help="Reads need a token too (writes always do).")
@click.option("--lease", "lease_seconds", default=30.0, show_default=True, type=click.FloatRange(1, 3600), callback=_finite,
              help="Seconds a tournament's claim lasts without renewal; a dead server's tournaments are taken over after this.")
@click.option("--ladder-turn", "ladder_turn_seconds", default=60.0, show_default=True, type=click.FloatRange(1, 86400), callback=_finite,
              help="Seconds a playing ladder keeps a queue worker while another ladder waits for one (they take turns).")
@click.option("--server-id", default=None, help="This server's name in the queue (default MACHINE:ADDRESS:PORT, as it listens); "
              "restarted with the same name, it takes its tournaments back at once.")
@click.option("--play-time-per-move", "play_time_per_move", default=10.0, show_default=True, type=click.FloatRange(0.1, 3600),
              callback=_finite, help="Seconds an opponent on the play page may think per move (search agents stop in time).")
@click.option("--bot-hosts", "bot_hosts", default=None, metavar="HOSTS", callback=_bot_hosts,
              help="Hosts that agents given by requests may call (http:url=...): names, addresses or networks, "
              "comma-separated (bots.example.org,10.0.0.0/8). Default: any host; set it when token holders are not all "
              "trusted, as an http agent makes the server send requests to its URL and report what came back.")
@click.option("--models-dir", "models_dir", default=None, metavar="DIR", type=folder_type(),
              help="The folder whose files agents given by requests may read (neural:checkpoint=..., model=..., weights "
              "files; links followed). Default: any file the server can read; set it when token holders are not all trusted.")
@db_options
def serve_command(ctx: _Context, host: str, port: int, workers: int, match_workers: int, executor: str,
                  ray_address: str | None, private: bool, lease_seconds: float, ladder_turn_seconds: float,
                  server_id: str | None, play_time_per_move: float, bot_hosts: BotHosts | None,
                  models_dir: str | None) -> None:  # fmt: skip
    """Serve the JSON API (/api/v1, docs at /docs) and the web pages, and play queued tournaments."""
    import logging

    if not host.strip():
        raise click.BadParameter("give an address to listen on (127.0.0.1, the default: this machine only)", param_hint="'--host'")
    if server_id is not None and not server_id.strip():
        raise click.BadParameter("give a name, or leave the option out for MACHINE:ADDRESS:PORT", param_hint="'--server-id'")
    try:
        import uvicorn

        from arena.server import Settings, create_app
    except ImportError as exc:
        raise click.ClickException(f"the server needs its extra: pip install 'arena[server]' ({exc.name} is missing)") from None
    make_executor(executor, match_workers, ray_address)  # bad combinations fail now, not per tournament
    database, registry = ctx.database(), ctx.registry()
    if workers > 0:  # one line now (read-only), not a failed start inside uvicorn; --workers 0 may serve a read-only one
        check_writable(database)
    # The port is taken before the app starts: uvicorn would start it (and its queue, which takes back the tournaments
    # of this server id) before binding, so a second server started on a busy port would take the first one's.
    listening = listen(host, port)
    port = listening.getsockname()[1]  # --port 0: the one the system chose
    settings = Settings(
        private=private, workers=workers, match_workers=match_workers, worker_id=server_id or f"{socket.gethostname()}:{host}:{port}",
        lease_seconds=lease_seconds, ladder_turn_seconds=ladder_turn_seconds,
        plugins_dirs=tuple(str(Path(d).resolve()) for d in ctx.plugins_dirs), executor=executor, ray_address=ray_address,
        play_time_per_move=play_time_per_move, reach=Reach.of(bot_hosts, models_dir),
    )  # fmt: skip
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    where = f"[{host}]" if ":" in host else host
    logging.getLogger("arena.server").info("serving on http://%s:%s (Ctrl-C stops); database %s; %s queue workers; reads %s; "
                                           "agents given by requests may call %s and read %s",
                                           where, port, database.url, workers, "need a token" if private else "public",
                                           bot_hosts or "any host", settings.reach.models or "any file")  # fmt: skip
    app = create_app(database, registry, settings)

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # Before uvicorn closes the bots' sockets: a match waiting on a pull bot is replayed, not lost by the bot;
            # and first, the queue workers claim nothing more (else each claims the tournament the hub just stopped).
            runner = getattr(app.state, "queue_runner", None)
            if runner is not None:
                runner.stop_soon()
            hub = getattr(app.state, "bot_hub", None)
            if hub is not None:
                hub.stop_threadsafe()
            super().handle_exit(sig, frame)

    config = uvicorn.Config(app, host=host, port=port, access_log=False, timeout_graceful_shutdown=3, log_level="info")
    Server(config).run(sockets=[listening])


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, as uvicorn would make it (IPv6 for a host with ':', else IPv4); a port in use
    or an address not of this machine is one line (exit 2). Listening at once, not only bound: two sockets may bind
    one port (SO_REUSEADDR) until one listens. Connections made before the app is up wait in the backlog."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart need not wait out TIME_WAIT
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except (OSError, UnicodeError) as exc:
        sock.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}") from None
    return sock


#: Connections the listening socket queues (uvicorn's own default).
LISTEN_BACKLOG = 2048


@click.group("tokens")
def tokens_group() -> None:
    """API tokens for `arena serve`: writes need one (`Authorization: Bearer TOKEN`)."""


@tokens_group.command("create")
@click.argument("name")
@click.option("--bot", is_flag=True, help="A bot token (for pull bots connecting to the server), not a user token.")
@db_options
def tokens_create(ctx: _Context, name: str, bot: bool) -> None:
    """Make a token for NAME and print it once (only its digest is stored)."""
    token = tokens.create(ctx.database(), name, "bot" if bot else "user")
    click.echo(token)
    click.echo(f"token '{name}' ({'bot' if bot else 'user'}) created: keep it now, it is not shown again", err=True)


@tokens_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@db_options
def tokens_list(ctx: _Context, as_json: bool) -> None:
    """List tokens (name, kind, prefix, dates; never the token)."""
    rows = tokens.listing(ctx.database(create=False))
    if as_json:
        print_json(rows)
        return
    columns = ["name", "kind", "prefix", "created_at", "last_used_at"]
    print_table("Tokens", columns, [[r[c] for c in columns] for r in rows])


@tokens_group.command("revoke")
@click.argument("name")
@db_options
def tokens_revoke(ctx: _Context, name: str) -> None:
    """Revoke NAME's token: it stops working at once."""
    tokens.revoke(ctx.database(create=False), name)
    click.echo(f"revoked token '{name}'")


@click.command("connect")
@click.argument("agent_spec")
@click.option("--server", required=True, help="The server's URL, e.g. http://arena.example:8000.")
@click.option("--token", required=True, envvar="ARENA_BOT_TOKEN", show_envvar=True,
              help="A bot token (`arena tokens create --bot NAME` on the server); from the environment, `ps` does not show it.")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, writable=True),
              help="Append every message the server sends (start, act, end) to this file, one JSON object a line.")
@db_options
def connect_command(ctx: _Context, agent_spec: str, server: str, token: str, log_path: str | None) -> None:
    """Serve an agent (e.g. minimax:depth=4) to a remote `arena serve` as a pull bot, until interrupted."""
    from arena.remote.connect import serve

    serve(ctx.registry(), server, token, agent_spec, say=lambda text: click.echo(text), log_path=log_path)
