"""`arena check-agent`: play one agent (a remote bot above all) through the conformance checks and say what failed.

A pull bot plays only through the server it is connected to, so it is checked there: `POST /api/v1/bots/NAME/check`
runs check_agent_spec in the server, and `arena check-agent pull:name=NAME --server URL` asks for it
(check_through_server) and prints the same report.
"""

from __future__ import annotations

import statistics
from typing import Any
from urllib.parse import quote

from arena.agents import resolve
from arena.errors import ArenaError, shown
from arena.match import DEFAULT_NETWORK_ALLOWANCE, MatchResult
from arena.params import Spec, parse_spec
from arena.plugins import Registry
from arena.testing import agent_problems
from arena.tournament import make_game, named_agents
from db.session import Database

#: Round trips around this many milliseconds are the signature of Nagle's algorithm meeting a delayed ACK.
NAGLE_BAND_MS = (30.0, 60.0)
#: A move using more than this share of its deadline is reported as slow.
SLOW_SHARE = 0.5
#: The most seeds one check over HTTP plays: it holds a thread of the server, and the bot, until it ends.
MAX_SERVER_SEEDS = 10
#: The longest time per move (seconds) a check over HTTP may give: a stalled bot costs that much per match.
MAX_SERVER_TIME_PER_MOVE = 60.0
#: What check_agent_spec's report holds: a server's answer without them is no check's.
REPORT_KEYS = frozenset({"agent", "game", "matches", "ok", "problems", "warnings", "round_trip_ms"})


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def check_agent_spec(
    registry: Registry, database: Database, spec_text: str, game_spec: str, seeds: int = 3,
    time_per_move: float = 1.0, network_allowance: float = DEFAULT_NETWORK_ALLOWANCE,
) -> dict[str, Any]:  # fmt: skip
    """Play the agent in every seat of `seeds` matches against random; returns what failed and what looks wrong."""
    game = make_game(registry, game_spec)
    spec = parse_spec(spec_text)
    named = None
    if not spec.params:
        with database.session() as session:
            named = named_agents(session)(spec.id)
    entry = resolve(registry, spec, game, named)
    agent_cls = registry.agent_class(entry.type_id)
    params = {k: v for k, v in entry.params.items() if k != "seed"}
    round_trips: list[float] = []
    network: list[float] = []  # the round trips less the think time the bot reported
    start_statuses: set[int] = set()  # what a push bot answered to /start, other than 2xx
    matches: list[MatchResult] = []

    def watch(agent: Any, result: MatchResult) -> None:
        matches.append(result)
        round_trips.extend(getattr(agent, "round_trips", ()))
        network.extend(getattr(agent, "network_trips", ()))
        status = getattr(agent, "start_status", None)
        if status is not None and not 200 <= status < 300:
            start_statuses.add(status)

    problems = agent_problems(
        agent_cls, game, params, seeds=range(seeds), deterministic=not agent_cls.remote, time_per_move=time_per_move,
        network_allowance=network_allowance, on_match=watch,
    )  # fmt: skip
    warnings = []
    if start_statuses:
        shown = ", ".join(f"HTTP {status}" for status in sorted(start_statuses))
        warnings.append(f"/start answered {shown}: its answer is ignored in play, but check the URL (Arena POSTs to "
                        f"{{url}}/start, {{url}}/act and {{url}}/end)")  # fmt: skip
    trips_ms = [t * 1000.0 for t in round_trips]
    figures = None
    if trips_ms:
        figures = {"moves": len(trips_ms), "p50": round(statistics.median(trips_ms), 3),
                   "p99": round(_percentile(trips_ms, 0.99), 3), "max": round(max(trips_ms), 3)}  # fmt: skip
        low, high = NAGLE_BAND_MS
        wire = statistics.median(network) * 1000.0 if network else figures["p50"]  # a bot's own think_ms is not the network's
        if low <= wire <= high:
            warnings.append(
                f"round trips sit near 40 ms beyond the think time the bot reports (median {wire:.1f} ms): the bot probably "
                "leaves Nagle's algorithm on; set TCP_NODELAY (http.server: disable_nagle_algorithm = True) or write each "
                "answer in one piece"
            )
        limit_ms = (time_per_move + network_allowance) * 1000.0
        slow = [t for t in trips_ms if t > SLOW_SHARE * limit_ms]
        if slow:
            warnings.append(f"slow answers: {len(slow)} of {len(trips_ms)} moves took over {SLOW_SHARE:.0%} of the "
                            f"{limit_ms:g} ms deadline (slowest {max(slow):.1f} ms)")  # fmt: skip
    return {"agent": entry.label, "game": game.label(), "matches": len(matches), "ok": not problems,
            "problems": problems, "warnings": warnings, "round_trip_ms": figures}  # fmt: skip


def pull_name(spec: Spec) -> str | None:
    """NAME of a spec `pull:name=NAME`; None for any other agent."""
    return str(spec.params.get("name", "")) if spec.id == "pull" else None


def check_through_server(server: str, token: str, spec_text: str, game_spec: str, seeds: int = 3,
                         time_per_move: float = 1.0, network_allowance: float = DEFAULT_NETWORK_ALLOWANCE,
                         ) -> dict[str, Any]:  # fmt: skip
    """check_agent_spec's report for the pull bot `pull:name=NAME`, played by the server at `server` (which the bot is
    connected to), asked for with `token` (the bot's own, or a user token). A refusal is an ArenaError with the
    server's message."""
    import httpx

    from arena.remote.connect import server_url

    spec = parse_spec(spec_text)
    name = pull_name(spec)
    if name is None or set(spec.params) != {"name"}:
        raise ArenaError(f"--server checks a pull bot connected to that server: give pull:name=NAME, not {spec_text!r}")
    if seeds > MAX_SERVER_SEEDS:
        raise ArenaError(f"--seeds is at most {MAX_SERVER_SEEDS} with --server (a check holds a thread of the server), got {seeds}")
    if time_per_move > MAX_SERVER_TIME_PER_MOVE:
        raise ArenaError(f"--time-per-move is at most {MAX_SERVER_TIME_PER_MOVE:g} with --server, got {time_per_move:g}")
    base = server_url(server)
    body = {"game": game_spec, "seeds": seeds, "time_per_move": time_per_move,
            "network_allowance": network_allowance * 1000.0}  # fmt: skip
    try:  # no read timeout: the server bounds the check (seeds, time per move, turn limit)
        answer = httpx.post(f"{base}/api/v1/bots/{quote(name, safe='')}/check", json=body,
                            headers={"Authorization": f"Bearer {token}"}, timeout=httpx.Timeout(10.0, read=None))  # fmt: skip
    except httpx.HTTPError as exc:
        raise ArenaError(f"--server: cannot reach {base}: {type(exc).__name__}: {exc}") from None
    try:
        data = answer.json()
    except ValueError:
        data = None
    if answer.status_code == 200 and isinstance(data, dict) and REPORT_KEYS <= data.keys():
        return data
    said = data.get("error") if isinstance(data, dict) else None
    reason = str(said) if said else " ".join(answer.text.split())  # one line, whatever the server sent
    raise ArenaError(f"--server: {base} refused the check (HTTP {answer.status_code}): {shown(reason, 300) or 'no reason given'}")
