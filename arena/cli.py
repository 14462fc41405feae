"""The `arena` command line: thin click commands over the library."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import click
from sqlalchemy.exc import SQLAlchemyError

from arena import results, tournament, verify
from arena.errors import ArenaError
from arena.executors import EXECUTORS, make_executor, parse_workers
from arena.isolation import MEMORY_LIMIT_RANGE
from arena.leaderboard import ROW_FIELDS, SYSTEMS, distinct_warning, rank_column
from arena.library import analysis, catalog
from arena.library import ladders as ladders_library
from arena.library import matches as matches_library
from arena.library import tournaments as tournaments_library
from arena.library.storage import (
    HEAD_REVISION,
    Database,
    StorageError,
    database_exists,
    database_status,
    display_url,
    open_database,
    resolve_url,
)
from arena.match import DEFAULT_MAX_TURNS
from arena.output import Drop, Shorten, fits, json_cell, numbered, print_csv, print_json, print_record_csv, print_table
from arena.params import parse_assignments, parse_spec
from arena.plugins import Registry, db_option, get_registry, plugins_dir_option
from arena.plugins import register_commands as add_plugin_commands
from arena.progress import ProgressBar
from arena.remote.check import MAX_SERVER_SEEDS, check_agent_spec, check_through_server, pull_name
from arena.sprt_run import DEFAULT_SPRT_ROUNDS, sprt_report, sprt_report_if_run, summary_lines
from arena.stats import MATRIX_KINDS


class Context:
    """What every command shares: where the database is and where extra plugins are."""

    def __init__(self) -> None:
        self.db_url: str | None = None
        self.plugins_dirs: list[str] = []
        self._database: Database | None = None
        self._warned = False

    def registry(self) -> Registry:
        registry = get_registry(self.plugins_dirs)
        if not self._warned:
            self._warned = True
            for message in registry.errors:
                click.echo(f"warning: {message}", err=True)
        return registry

    def database(self, create: bool = True) -> Database:
        """The database; a command that only reads passes create=False, so a mistyped --db creates no file."""
        if self._database is None:
            self._database = open_database(self.db_url, create=create)
        return self._database

    def database_after(self, check: Callable[[Database], object]) -> Database:
        """The database (created if need be) once `check`, the command's own writing, has passed on an empty in-memory
        one where the SQLite file does not exist yet: input it refuses leaves no new, empty database file."""
        if not database_exists(self.db_url):
            with open_database("sqlite://") as scratch:
                check(scratch)
        return self.database()

    def close(self) -> None:
        if self._database is not None:
            self._database.close()
            self._database = None


def _common(command: Callable[..., Any]) -> Callable[..., Any]:
    """--db and --plugins-dir on every command, as well as on the group."""

    @click.option("--db", "db_url", metavar="URL", help="Database URL or SQLite file (default $ARENA_DB, else ./arena.db).")
    @plugins_dir_option
    @click.pass_obj
    @functools.wraps(command)
    def wrapper(ctx: Context, db_url: str | None, plugins_dirs: tuple[str, ...], **kwargs: Any) -> Any:
        if db_url is not None:
            ctx.db_url = db_option(db_url)
        ctx.plugins_dirs.extend(plugins_dirs)
        return command(ctx, **kwargs)

    return wrapper


def _output_options(csv: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        command = click.option("--json", "as_json", is_flag=True, help="Print JSON (see README for the shapes).")(command)
        if csv:
            command = click.option("--csv", "as_csv", is_flag=True, help="Print CSV.")(command)
        return command

    return decorate


#: click 8.2+ raises this for a group given no command (8.1 prints the help and exits by itself).
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())
#: Keys of the group's click context meta: its --plugins-dir folders, read first, and the plugins' commands.
_PLUGINS_DIRS = "arena.plugins_dirs"
_PLUGIN_COMMANDS = "arena.plugin_commands"


class ArenaGroup(click.Group):
    """Every failure the user can fix is one line on stderr and exit code 2; plugins' commands join on first look-up."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[_PLUGINS_DIRS] = self._plugins_dirs_in(ctx, args)  # before --help lists or click resolves the command
        return super().parse_args(ctx, args)

    def _plugins_dirs_in(self, ctx: click.Context, args: list[str]) -> tuple[str, ...]:
        """The group's --plugins-dir values among `args` (a mistake in them is for the real parsing to report)."""
        try:
            opts, _, _ = self.make_parser(ctx).parse_args(args=list(args))
        except click.UsageError:
            return ()
        return tuple(opts.get("plugins_dirs") or ())

    def _plugin_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        """The commands of the plugins (those of the group's --plugins-dir folders too), added once per invocation; a
        plugin whose register_commands raises is a warning, and every other command still works."""
        if _PLUGIN_COMMANDS not in ctx.meta:
            added = click.Group()
            ctx.meta[_PLUGIN_COMMANDS] = added.commands
            try:
                problems = add_plugin_commands(get_registry(ctx.meta.get(_PLUGINS_DIRS, ())), added)
            except ArenaError:
                problems = []  # a broken plugin set: the command itself reports it as one clean line
            for message in problems:
                click.echo(f"warning: {message}", err=True)
        commands: dict[str, click.Command] = ctx.meta[_PLUGIN_COMMANDS]
        return commands

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        return command if command is not None else self._plugin_commands(ctx).get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._plugin_commands(ctx)})

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:  # a plugin's command, its folder given after it: say where --plugins-dir goes
            tail = args[1:]
            folders = [tail[i + 1] if arg == "--plugins-dir" and i + 1 < len(tail) else arg.partition("=")[2] or "DIR"
                       for i, arg in enumerate(tail) if arg == "--plugins-dir" or arg.startswith("--plugins-dir=")]  # fmt: skip
            if not folders:
                raise
            raise click.UsageError(f"{exc.message.rstrip('.')}: a plugin's command loads from --plugins-dir given before it "
                                   f"(arena --plugins-dir {folders[0]} {args[0]} ...)", ctx) from None  # fmt: skip

    def main(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(130)
        except _NO_ARGS_IS_HELP as exc:  # `arena` or `arena db` alone: the help, as click shows it (not an "Error: ")
            exc.show()
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(2)
        except (ArenaError, StorageError) as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(2)
        except SQLAlchemyError as exc:
            orig = getattr(exc, "orig", None)
            click.echo(f"Error: database: {str(orig if orig is not None else exc).splitlines()[0]}", err=True)
            sys.exit(2)


@click.group(cls=ArenaGroup)
@click.option("--db", "db_url", metavar="URL", help="Database URL or SQLite file (default $ARENA_DB, else ./arena.db).")
@plugins_dir_option
@click.version_option(package_name="arena")
@click.pass_context
def cli(ctx: click.Context, db_url: str | None, plugins_dirs: tuple[str, ...]) -> None:
    """Arena: run tournaments between game-playing agents and rank them."""
    obj = ctx.ensure_object(Context)
    obj.db_url = None if db_url is None else db_option(db_url)
    obj.plugins_dirs = list(plugins_dirs)
    ctx.call_on_close(obj.close)


# ---------------------------------------------------------------- plugins, games, agent types


@cli.command("plugins")
@_common
@_output_options()
def plugins_command(ctx: Context, as_json: bool, as_csv: bool) -> None:
    """List loaded plugins: name, where from, version, hooks."""
    registry = ctx.registry()
    rows = [[p.name, p.source, p.version, ", ".join(p.hooks)] for p in registry.plugins]
    if as_json:
        print_json([{"name": r[0], "source": r[1], "version": r[2], "hooks": list(p.hooks)} for r, p in zip(rows, registry.plugins)])
        return
    if as_csv:
        print_csv(["name", "source", "version", "hooks"], rows)
        return
    print_table("Plugins", ["name", "source", "version", "hooks"], rows)  # (problems: said as warnings when loading)


@cli.command("games")
@_common
@_output_options()
def games_command(ctx: Context, as_json: bool, as_csv: bool) -> None:
    """List games with their players and parameters."""
    registry = ctx.registry()
    data = catalog.games(registry)
    if as_json:
        print_json(data)
        return
    columns = ["id", "version", "players", "parameters", "observation", "actions", "plugin"]
    rows = []
    for item in data:
        info = registry.games[item["id"]].info
        players = str(info.min_players) if info.min_players == info.max_players else f"{info.min_players}-{info.max_players}"
        shape = "x".join(str(n) for n in item["observation_shape"]) if item["observation_shape"] is not None else "-"
        rows.append([info.id, info.version, players, " ".join(p.describe() for p in info.params) or "-", shape,
                     item["num_actions"], item["plugin"]])  # fmt: skip
    if as_csv:
        print_csv(columns, rows)
    else:
        print_table("Games", columns, rows, fit=[Drop("plugin"), Shorten("parameters", 24), Drop("version")])


# ---------------------------------------------------------------- named agents


@cli.group("agents")
def agents_group() -> None:
    """Agent types and named agents (a type plus parameters, saved in the database)."""


@agents_group.command("list")
@_common
@_output_options()
def agents_list(ctx: Context, as_json: bool, as_csv: bool) -> None:
    """List agent types (from plugins) and named agents (from the database)."""
    data = catalog.agents(ctx.registry(), ctx.database(create=False))
    types, named = data["types"], data["named"]
    if as_json:
        print_json(data)
        return
    columns = ["name", "type", "params", "game", "checkpoint"]
    rows = [[n["name"], n["type"], ",".join(f"{k}={v}" for k, v in n["params"].items()) or "-", n["game"], n["checkpoint"]] for n in named]
    if as_csv:
        print_csv(columns, rows)
        return
    print_table("Agent types", ["type", "version", "parameters", "description"],
                [[t["type"], t["version"], " ".join(t["params"]), t["description"]] for t in types],
                fit=[Shorten("description", 30), Shorten("parameters", 24), Drop("version"), Drop("description")])  # fmt: skip
    print_table("Named agents", columns, rows, fit=[Shorten("checkpoint", 16), Shorten("params", 16), Drop("checkpoint")])


@agents_group.command("register")
@click.argument("name")
@click.option("--type", "type_id", required=True, help="Agent type, e.g. greedy or minimax.")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE", help="A parameter (repeatable).")
@click.option("--game", "game_spec", default=None, help="Restrict (and check) the agent for this game.")
@click.option("--checkpoint", default=None, type=click.Path(exists=True, dir_okay=False), help="A checkpoint file.")
@_common
def agents_register(ctx: Context, name: str, type_id: str, params: tuple[str, ...], game_spec: str | None,
                    checkpoint: str | None) -> None:  # fmt: skip
    """Save an agent type plus parameters under NAME, usable wherever an agent is expected."""
    registry, raw = ctx.registry(), parse_assignments(params)

    def register(database: Database) -> None:
        catalog.register_agent(registry, database, name, type_id, raw, game_spec, checkpoint)

    register(ctx.database_after(register))
    click.echo(f"registered agent '{name}' ({type_id})")


@agents_group.command("show")
@click.argument("name")
@_common
@_output_options()
def agents_show(ctx: Context, name: str, as_json: bool, as_csv: bool) -> None:
    """Show a named agent."""
    data = catalog.named_agent(ctx.database(create=False), name)
    if as_json:
        print_json(data)
        return
    if as_csv:
        print_record_csv(data)
        return
    for key, value in data.items():
        click.echo(f"{key}: {value if value is not None else '-'}")


@agents_group.command("remove")
@click.argument("name")
@_common
def agents_remove(ctx: Context, name: str) -> None:
    """Remove a named agent (its past results stay)."""
    catalog.remove_agent(ctx.database(create=False), name)
    click.echo(f"removed agent '{name}'")


# ---------------------------------------------------------------- tournaments


@cli.command("run-tournament")
@click.option("--game", "game_spec", help="Game spec, e.g. connect_four or connect_four:rows=5,columns=6.")
@click.option("--agents", "agents_text", help="Comma-separated agents: types with parameters or registered names.")
@click.option("--rounds", type=int, default=None,
              help="Rounds; each plays every pair (or table) once. [default: 1; with --sprt the limit, 1000]")
@click.option("--seed", type=int, default=0, show_default=True, help="Tournament seed; every match seed derives from it.")
@click.option("--max-turns", type=int, default=DEFAULT_MAX_TURNS, show_default=True,
              help="A match still running after this many actions is a draw.")
@click.option("--time-per-move", type=float, default=None, help="Seconds an agent may think per move; more is a loss by timeout.")
@click.option("--name", default=None, help="A unique name for the tournament.")
@click.option("--format", "format_", type=click.Choice(tournament.FORMATS), default="round-robin", show_default=True)
@click.option("--challenger", default=None, help="With --format gauntlet: the agent that plays all others.")
@click.option("--budget", type=int, default=None, metavar="MATCHES",
              help="With --format adaptive: matches in all (a first round, then the most informative pairs); optional for a ladder.")
@click.option("--players", type=int, default=None, help="Seats per match for games of more than two players.")
@click.option("--openings", default=None, metavar="random:N|FILE",
              help="Start each set of matches (a pair, seats swapped; N players: every seating) from an opening: "
                   "N random plies, or one line of FILE.")
@click.option("--sprt", "sprt_text", default=None, metavar="elo0=E0,elo1=E1[,alpha=A,beta=B,model=M]",
              help="With --agents A,B: play until a sequential test decides whether B is stronger than A (or the round limit).")
@click.option("--workers", default="1", show_default=True,
              help="Worker processes, or 'auto' for one per core (with --executor ray and no address: the local Ray's CPUs).")
@click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
              help="Play on this machine's processes, or as Ray tasks.")
@click.option("--ray-address", default=None, metavar="ADDRESS",
              help="With --executor ray: the cluster (e.g. 10.0.0.1:6379 or auto); default: a local Ray for this run.")
@click.option("--resume", default=None, metavar="ID|NAME", help="Finish an interrupted tournament.")
@click.option("--isolate", is_flag=True, help="Run agents in their own processes, killed when they hang or crash.")
@click.option("--memory-limit", type=int, default=None, metavar="MB", help="Memory limit per agent process (implies --isolate).")
@click.option("--trust-agents", is_flag=True,
              help="Play agents of a hidden-information game in-process even when they are not Arena's own.")
@click.option("--network-allowance", type=float, default=50.0, show_default=True, metavar="MS",
              help="Milliseconds of round trip a remote agent gets on top of --time-per-move.")
@click.option("--concurrent-matches", "concurrent", type=int, default=1, show_default=True, metavar="N",
              help="Matches played at once in each worker, networks' decisions batched into one forward pass.")
@click.option("--queue", is_flag=True, help="Only write the tournament, queued: `arena serve` on this database plays it.")
@click.option("--quiet", is_flag=True, help="No progress bar and no leaderboard at the end.")
@_common
def run_tournament(ctx: Context, game_spec: str | None, agents_text: str | None, rounds: int | None, seed: int,
                   max_turns: int, time_per_move: float | None, name: str | None, format_: str, challenger: str | None,
                   budget: int | None, players: int | None, openings: str | None, sprt_text: str | None, workers: str,
                   executor: str, ray_address: str | None, resume: str | None, isolate: bool, memory_limit: int | None,
                   trust_agents: bool, network_allowance: float, concurrent: int, queue: bool, quiet: bool) -> None:  # fmt: skip
    """Play a tournament, store every match, and print its leaderboard."""
    registry = ctx.registry()
    n_workers = parse_workers(workers)
    runner = make_executor(executor, n_workers, ray_address)
    if memory_limit is not None and not MEMORY_LIMIT_RANGE[0] <= memory_limit <= MEMORY_LIMIT_RANGE[1]:
        low, high = MEMORY_LIMIT_RANGE
        raise ArenaError(f"--memory-limit must be between {low} and {high:,} (megabytes), got {memory_limit}")
    if concurrent < 1:
        raise ArenaError(f"--concurrent-matches must be at least 1, got {concurrent}")
    if resume is not None:
        settings = {"--game": game_spec, "--agents": agents_text, "--rounds": rounds, "--name": name, "--challenger": challenger,
                    "--budget": budget, "--players": players, "--openings": openings, "--sprt": sprt_text,
                    "--queue": True if queue else None}  # fmt: skip
        given = [option for option, value in settings.items() if value is not None]
        source = click.get_current_context().get_parameter_source
        given += [option for option, parameter in (("--seed", "seed"), ("--max-turns", "max_turns"), ("--time-per-move", "time_per_move"),
                                                   ("--format", "format_"), ("--network-allowance", "network_allowance"))
                  if source(parameter) not in (None, click.core.ParameterSource.DEFAULT)]  # given, even if equal to the default
        if given:
            raise ArenaError(f"--resume takes the tournament's own settings; do not give {', '.join(given)}")
        database = ctx.database(create=False)
        tournament_id = tournaments_library.one(database, resume)["id"]
        tournaments_library.take_here(database, tournament_id)
    else:
        if not game_spec or not agents_text:
            raise ArenaError("run-tournament needs --game and --agents (or --resume ID|NAME)")
        if rounds is None:
            rounds = DEFAULT_SPRT_ROUNDS if sprt_text else 1
        request = tournament.TournamentRequest(
            game=game_spec, agents=agents_text, rounds=rounds, seed=seed, max_turns=max_turns,
            time_per_move=time_per_move, name=name, format=format_, challenger=challenger, players=players,
            openings=openings, sprt=sprt_text, budget=budget,
            network_allowance=network_allowance / 1000.0,
        )  # fmt: skip
        status = "queued" if queue else "running"
        # bad input (a person seated in a queued one included) must not leave a new, empty database file
        database = ctx.database_after(lambda scratch: tournament.create(registry, scratch, request, status=status))
        tournament_id = tournament.create(registry, database, request, status=status)
        for note in tournaments_library.renamed_notes(database, tournament_id):
            click.echo(f"note: {note}", err=True)
        if queue:
            click.echo(f"tournament {tournament_id}: queued", err=True)
            return
    with _stop_signals():  # (the stop is written under it too: a second Ctrl-C cannot cut it short)
        try:
            with ProgressBar("matches", sys.stderr.isatty() and not quiet) as bar:
                progress = functools.partial(bar.update, text=lambda speed: f"{speed:.1f} games/s" if speed else "- games/s")
                log = None if quiet else functools.partial(click.echo, err=True)
                played = tournament.play(database, registry, tournament_id, n_workers, progress, ctx.plugins_dirs, isolate,
                                         memory_limit, concurrent, notify=lambda text: click.echo(f"note: {text}", err=True),
                                         log=log, executor=runner, trust_agents=trust_agents)  # fmt: skip
        except KeyboardInterrupt as exc:
            _stopped(database, tournament_id, isinstance(exc, Terminated))
        except ArenaError:  # play cannot go on (an agent's checkpoint gone, an opening no deal allows): what was played is kept
            tournaments_library.stop(database, tournament_id)  # stopped, not left `running` with nobody playing it
            raise
    click.echo(f"tournament {tournament_id}: played {played} {'match' if played == 1 else 'matches'}", err=True)
    if tournaments_library.one(database, tournament_id)["status"] == "cancelled":
        click.echo(f"tournament {tournament_id}: cancelled (`arena tournaments cancel`) during the run: nothing more is "
                   "played; what was played is kept", err=True)  # fmt: skip
    notice = results.game_error_notice(database, tournament_id)
    if notice:
        click.echo(notice, err=True)
    report = sprt_report_if_run(database, str(tournament_id))
    if report is not None:
        for line in summary_lines(report):
            click.echo(line)
    elif not quiet:
        selection = analysis.select(database, registry, tournament=str(tournament_id))
        rows, warning = analysis.leaderboard_and_warning(database, selection, "bt")
        _print_leaderboard(selection.title, rows, "bt", warning)


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, `timeout`, a service manager) during a run: stopped as Ctrl-C stops it."""


@contextlib.contextmanager
def _stop_signals() -> Iterator[None]:
    """While a run plays: Ctrl-C and SIGTERM stop it (KeyboardInterrupt), and once one has come the next are ignored,
    so that writing what was played and marking the tournament stopped are not cut short (a second Ctrl-C printed
    tracebacks from the database's teardown and could leave it `running`). Processes forked meanwhile keep the
    default behaviour. The handlers before are back after, unless a signal came: then the run is on its way out, and
    a late Ctrl-C must not kill it before it has said what it kept."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()
    came: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        if os.getpid() != owner:  # a worker forked with this handler: as without it
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        came.append(signum)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    previous = signal.signal(signal.SIGINT, stop), signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        if not came:
            signal.signal(signal.SIGINT, previous[0])
            signal.signal(signal.SIGTERM, previous[1])


def _stopped(database: Database, tournament_id: int, terminated: bool = False) -> NoReturn:
    """Ctrl-C (or SIGTERM) in a run: the tournament is marked stopped (what was played is kept) and the run says how to
    go on (while _stop_signals ignores further signals)."""
    line = tournaments_library.stop(database, tournament_id)
    if line:
        click.echo(line, err=True)
    click.echo("Terminated." if terminated else "Aborted.", err=True)
    sys.exit(143 if terminated else 130)


@cli.command("sprt")
@click.argument("tournament_key", metavar="TOURNAMENT")
@click.option("--sprt", "sprt_text", default=None, metavar="elo0=E0,elo1=E1[,alpha=A,beta=B,model=M]",
              help="Test parameters (default: the tournament's own); B is the second agent.")
@_common
@_output_options()
def sprt_command(ctx: Context, tournament_key: str, sprt_text: str | None, as_json: bool, as_csv: bool) -> None:
    """The SPRT of a tournament recomputed from its stored matches: LLR, decision, Elo difference, LOS."""
    report = sprt_report(ctx.database(create=False), tournament_key, sprt_text)
    if as_json:
        print_json(report)
        return
    if as_csv:
        print_record_csv(report)
        return
    for line in summary_lines(report):
        click.echo(line)


TOURNAMENT_COLUMNS = ["id", "name", "game", "agents", "format", "rounds", "status", "progress", "started"]


@cli.command("check-agent")
@click.argument("spec")
@click.option("--game", "game_spec", required=True, help="The game to check it on, e.g. connect_four.")
@click.option("--seeds", type=click.IntRange(1, tournament.MAX_SCHEDULED), default=3, show_default=True,
              help=f"Matches per seat (at most {tournament.MAX_SCHEDULED:,}, a tournament's limit; "
                   f"with --server at most {MAX_SERVER_SEEDS}).")  # fmt: skip
@click.option("--time-per-move", type=float, default=1.0, show_default=True, help="Seconds per move.")
@click.option("--network-allowance", type=float, default=50.0, show_default=True, metavar="MS",
              help="Milliseconds of round trip a remote agent gets on top of --time-per-move.")
@click.option("--server", help="Check a pull bot (pull:name=NAME) through the `arena serve` it is connected to, e.g. "
                               "http://127.0.0.1:8000.")  # fmt: skip
@click.option("--token", envvar="ARENA_BOT_TOKEN", show_envvar=True,
              help="With --server: the bot's own token (`arena tokens create --bot NAME`), or a user token.")
@_common
@_output_options(csv=False)
def check_agent_command(ctx: Context, spec: str, game_spec: str, seeds: int, time_per_move: float,
                        network_allowance: float, server: str | None, token: str | None, as_json: bool) -> None:  # fmt: skip
    """Play an agent (a remote bot: http:url=..., or pull:name=... with --server) through the conformance checks;
    exit 1 if any fails."""
    tournament.check_clock(time_per_move, network_allowance / 1000.0)
    if server is not None:
        if not token:
            raise ArenaError("--server needs --token: the bot's own token (`arena tokens create --bot NAME`) or a user "
                             "token, or $ARENA_BOT_TOKEN")  # fmt: skip
        report = check_through_server(server, token, spec, game_spec, seeds, time_per_move, network_allowance / 1000.0)
    elif pull_name(parse_spec(spec)) is not None:
        raise ArenaError("a pull bot is checked through the server it is connected to: add --server URL (and --token, "
                         f"the bot's own token or a user token): arena check-agent {spec} --game {game_spec} --server "
                         "http://HOST:PORT")  # fmt: skip
    else:
        report = check_agent_spec(ctx.registry(), ctx.database(create=False), spec, game_spec, seeds, time_per_move,
                                  network_allowance / 1000.0)  # fmt: skip
    if as_json:
        print_json(report)
    else:
        click.echo(f"{report['agent']} on {report['game']}: {report['matches']} matches, "
                   + ("passed" if report["ok"] else f"FAILED ({len(report['problems'])} problems)"))  # fmt: skip
        for line in report["problems"]:
            click.echo(f"  problem: {line}")
        for line in report["warnings"]:
            click.echo(f"  warning: {line}")
        trips = report["round_trip_ms"]
        if trips:
            click.echo(f"  round trips: {trips['moves']} moves, p50 {trips['p50']} ms, p99 {trips['p99']} ms, max {trips['max']} ms")
    if not report["ok"]:
        sys.exit(1)


@cli.command("play")
@click.option("--game", "game_spec", required=True, help="Game spec, e.g. connect_four.")
@click.option("--against", required=True, help="Your opponent(s): agent specs or registered names, comma-separated.")
@click.option("--seat", type=int, default=0, show_default=True, help="Your seat (0 moves first).")
@click.option("--name", default="human", show_default=True, help="Your name: ratings are kept per name.")
@click.option("--seed", type=int, default=None, help="The match seed (default: a random one).")
@click.option("--max-turns", type=int, default=DEFAULT_MAX_TURNS, show_default=True)
@_common
def play_command(ctx: Context, game_spec: str, against: str, seat: int, name: str, seed: int | None, max_turns: int) -> None:
    """Play a match yourself at the terminal against any agent; it is stored and rated like any other."""
    from arena.remote.play import human_spec, one_match, play_against

    registry = ctx.registry()
    database = ctx.database_after(lambda scratch: one_match(registry, scratch, game_spec, against, seat, human_spec(name), seed, max_turns))
    tournament_id = play_against(registry, database, game_spec, against, seat, name, seed, max_turns,
                                 plugins_dirs=ctx.plugins_dirs, notify=lambda text: click.echo(f"note: {text}", err=True))  # fmt: skip
    click.echo(f"stored as tournament {tournament_id}: `arena matches --tournament {tournament_id}`; "
               f"`arena leaderboard --game {game_spec}` rates it with every other match of the game")  # fmt: skip


@cli.group("tournaments", invoke_without_command=True)
@_common
@_output_options()
def tournaments_command(ctx: Context, as_json: bool, as_csv: bool) -> None:
    """List tournaments: game with its parameters, agents, format, rounds, status, progress, start time.

    `arena tournaments join LADDER AGENT` adds an agent to a ladder; `arena tournaments cancel ID|NAME` stops one."""
    if click.get_current_context().invoked_subcommand is not None:
        return
    rows = tournaments_library.listing(ctx.database(create=False))
    if as_json:
        print_json(rows)
        return
    if as_csv:
        columns = list(rows[0]) if rows else ["id"]
        print_csv(columns, [[",".join(v) if isinstance(v, list) else json_cell(v) for v in r.values()] for r in rows])
        return
    table = [[r["id"], r["name"], r["game_spec"], ",".join(r["agents"]),
              r["format"] + (f" ({r['challenger']})" if r["challenger"] else ""), r["rounds"], r["status"],
              f"{r['done']}/{r['matches']}", r["created_at"].replace("T", " ")[:16]] for r in rows]  # fmt: skip
    print_table("Tournaments", TOURNAMENT_COLUMNS, table,
                fit=[Shorten("agents", 24), Shorten("game", 20), Shorten("name", 12), Shorten("agents", 14), Drop("rounds"),
                     Drop("format"), Shorten("agents", 10), Drop("started"), Shorten("name", 6), Shorten("game", 12)])  # fmt: skip


@tournaments_command.command("join")
@click.argument("ladder_key", metavar="LADDER")
@click.argument("agent")
@_common
@_output_options(csv=False)
def tournaments_join(ctx: Context, ladder_key: str, agent: str, as_json: bool) -> None:
    """Add AGENT (a spec or a named agent) to a ladder: it plays the field at the ladder's next batch."""
    joined = ladders_library.join(ctx.registry(), ctx.database(create=False), ladder_key, agent)
    _json_or_line(joined, as_json, f"ladder {joined['id']}: {', '.join(joined['joining'])} will join at its next batch "
                                   f"({len(joined['agents'])} agents play now)")  # fmt: skip


@tournaments_command.command("cancel")
@click.argument("tournament_key", metavar="ID|NAME")
@_common
@_output_options(csv=False)
def tournaments_cancel(ctx: Context, tournament_key: str, as_json: bool) -> None:
    """Cancel a queued, running or stopped tournament or ladder: whoever plays it stops (a ladder at its next batch)."""
    row = tournaments_library.cancel(ctx.database(create=False), tournament_key)
    _json_or_line(row, as_json, f"tournament {row['id']}: {row['status']} ({row['done']}/{row['matches']} matches played)")


def _json_or_line(data: Any, as_json: bool, line: str) -> None:
    if as_json:
        print_json(data)
    else:
        click.echo(line)


# ---------------------------------------------------------------- queries


def _selection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option("--game", "game_spec", default=None, help="Every match of this game (same version and parameters).")(command)
    command = click.option("--tournament", "tournament_key", default=None, metavar="ID|NAME",
                           help="One tournament (default: the latest).")(command)
    return command


LEADERBOARD_COLUMNS = ["rank", "agent", "games", "wins", "draws", "losses", "win_rate", "bt", "bt_interval", "elo",
                       "trueskill_mu", "trueskill_sigma"]  # fmt: skip


LEADERBOARD_HEADERS = ["#", "agent", "games", "wins", "draws", "losses", "win rate", "BT", "BT 95%", "Elo",
                       "TrueSkill mu", "sigma"]  # fmt: skip


# Columns left out first when a leaderboard is wider than the terminal: never the sorting system's own.
_LEADERBOARD_FIT = {
    "bt": ["sigma", "TrueSkill mu", "Elo", "draws", "games", "losses", "wins"],
    "elo": ["sigma", "TrueSkill mu", "BT 95%", "BT", "draws", "games", "losses", "wins"],
    "trueskill": ["Elo", "BT 95%", "BT", "draws", "games", "losses", "wins"],
}


def _bt_interval(row: dict[str, Any]) -> str:
    """low..high, with < or > where the prior, not the games, sets that end (see arena.ratings.bradley_terry_counts)."""
    low = ("<" if row.get("bt_low_by_prior") else "") + f"{row['bt_low']:.0f}"
    high = (">" if row.get("bt_high_by_prior") else "") + f"{row['bt_high']:.0f}"
    return f"{low}..{high}"


def _print_leaderboard(title: str, rows: list[dict[str, Any]], system: str, warning: str | None = None) -> None:
    table = []
    for r in rows:
        r = dict(r, bt_interval=_bt_interval(r))
        table.append([r[c] for c in LEADERBOARD_COLUMNS])
    rank, note = rank_column(system)
    notes: list[str | tuple[str, str]] = [note]
    if any(r.get("bt_low_by_prior") or r.get("bt_high_by_prior") for r in rows):
        notes.append(("BT 95%", "BT 95%: >high (<low) = the games set no upper (lower) limit: the agent, with the agents that took "
                     "points from it, never lost a point to the rest (never scored one); the weak prior sets that end"))  # fmt: skip
    drops = [Drop(column) for column in _LEADERBOARD_FIT[system]]
    print_table(f"Leaderboard - {title} - sorted by {system}", [rank, *LEADERBOARD_HEADERS[1:]], table,
                fit=drops[:3] + [Shorten("agent", 16)] + drops[3:] + [Shorten("agent", 10)], note=notes)  # fmt: skip
    if warning:
        click.echo(warning, err=True)


@cli.command("leaderboard")
@_selection_options
@click.option("--system", type=click.Choice(SYSTEMS), default="bt", show_default=True, help="Sort by this rating (bt = Bradley-Terry).")
@click.option("--weighted", is_flag=True,
              help="An adaptive tournament's Bradley-Terry fit weighted by 1 / each match's selection probability.")
@_common
@_output_options()
def leaderboard_command(ctx: Context, tournament_key: str | None, game_spec: str | None, system: str, weighted: bool,
                        as_json: bool, as_csv: bool) -> None:  # fmt: skip
    """Ratings and results per agent."""
    database = ctx.database(create=False)
    selection = analysis.select(database, ctx.registry(), tournament_key, game_spec)
    rows, warning = analysis.leaderboard_and_warning(database, selection, system, weighted)
    if as_json:
        print_json(rows)
        if warning:
            click.echo(warning, err=True)
    elif as_csv:
        print_csv(ROW_FIELDS, [[r[c] for c in ROW_FIELDS] for r in rows])
        if warning:
            click.echo(warning, err=True)
    else:
        title = selection.title + (" - Bradley-Terry weighted by 1 / selection probability" if weighted else "")
        _print_leaderboard(title, rows, system, warning)


@cli.command("elo-history")
@_selection_options
@_common
@_output_options()
def elo_history_command(ctx: Context, tournament_key: str | None, game_spec: str | None, as_json: bool, as_csv: bool) -> None:
    """Elo of every agent after each match, in schedule order (JSON: only the agents of each match)."""
    selection = analysis.select(ctx.database(create=False), ctx.registry(), tournament_key, game_spec)
    history = analysis.elo_history_of(selection)
    if as_json:
        print_json(history)
        return
    agents = sorted({agent for p in history for agent in p["ratings"]})
    current: dict[str, float | None] = {agent: None for agent in agents}
    rows = []
    for point in history:
        current.update(point["ratings"])
        rows.append([point["n"], point["match_id"]] + [current[a] for a in agents])
    if as_csv:
        print_csv(["n", "match_id"] + agents, rows)
        return
    headers, note = ["n", "match"] + agents, None
    if not fits(headers, rows):
        numbers, note = numbered(agents)
        headers = ["n", "match"] + numbers
    print_table(f"Elo after each match - {selection.title}", headers, rows, fit=[Drop(h) for h in reversed(headers[2:])], note=note)


@cli.command("seats")
@_selection_options
@_common
@_output_options()
def seats_command(ctx: Context, tournament_key: str | None, game_spec: str | None, as_json: bool, as_csv: bool) -> None:
    """Score rate by seat, overall and per agent (first-mover advantage)."""
    selection = analysis.select(ctx.database(create=False), ctx.registry(), tournament_key, game_spec)
    data = analysis.seats_of(selection)
    if as_json:
        print_json(data)
        return
    seats = [s["seat"] for s in data["overall"]]
    columns = ["agent"] + [f"seat {s} games" for s in seats] + [f"seat {s} score rate" for s in seats]

    def row(name: str, entries: list[dict[str, Any]]) -> list[Any]:
        by_seat = {e["seat"]: e for e in entries}
        return ([name] + [by_seat[s]["games"] if s in by_seat else 0 for s in seats]
                + [by_seat[s]["score_rate"] if s in by_seat else None for s in seats])  # fmt: skip

    rows = [row("(all)", data["overall"])] + [row(agent, entries) for agent, entries in data["agents"].items()]
    if as_csv:
        print_csv(columns, rows)
        return
    print_table(f"Score by seat - {selection.title}", columns, rows)
    first = data["first_mover"]
    print_table("Whoever moved first", ["games", "score", "score rate"], [[first["games"], first["score"], first["score_rate"]]])


@cli.command("matrix")
@click.option("--kind", type=click.Choice(MATRIX_KINDS), default="net-wins", show_default=True)
@_selection_options
@_common
@_output_options()
def matrix_command(ctx: Context, kind: str, tournament_key: str | None, game_spec: str | None, as_json: bool,
                   as_csv: bool) -> None:  # fmt: skip
    """Pairwise matrix, row agent against column agent, agents in leaderboard order."""
    database = ctx.database(create=False)
    selection = analysis.select(database, ctx.registry(), tournament_key, game_spec)
    data = analysis.matrix_of(database, selection, kind)
    agents, values = data["agents"], data["values"]
    if as_json:
        print_json(data)
        return
    columns = ["agent"] + agents
    rows = [[agent] + row for agent, row in zip(agents, values)]
    if as_csv:
        print_csv(columns, rows)
        return
    note = None
    if not fits(columns, rows):  # number the agents: column i is the agent of row i
        columns = ["agent"] + numbered(agents)[0]
        rows = [[f"{i} {agent}"] + row for i, (agent, row) in enumerate(zip(agents, values), 1)]
        note = "Columns are numbered as the rows."
    print_table(f"{kind} (row vs column) - {selection.title}", columns, rows,
                fit=[Shorten("agent", 14)] + [Drop(c) for c in reversed(columns[1:])], note=note)  # fmt: skip


@cli.command("stats")
@_selection_options
@_common
@_output_options()
def stats_command(ctx: Context, tournament_key: str | None, game_spec: str | None, as_json: bool, as_csv: bool) -> None:
    """Match length, end reasons, legal moves per turn and think time."""
    database = ctx.database(create=False)
    selection = analysis.select(database, ctx.registry(), tournament_key, game_spec, with_legal_counts=True)
    data = analysis.stats_of(database, selection)
    if as_json:
        print_json(data)
        return
    if as_csv:  # several tables in one: long form, one figure per line
        print_csv(["table", "subject", "statistic", "value"], _stats_rows(data))
        return
    columns = ["", "count", "mean", "median", "p90", "max"]
    rows = [["all matches"] + [data["match_length"][k] for k in columns[1:]]]
    rows += [[pair] + [d[k] for k in columns[1:]] for pair, d in data["per_pair"].items()]
    rows += [[f"reason: {reason}"] + [d[k] for k in columns[1:]] for reason, d in data["per_reason"].items()]
    if data["rounds"]["count"]:
        rows.append(["rounds per match"] + [data["rounds"][k] for k in columns[1:]])
    print_table(f"Match length in turns - {selection.title}", columns, rows)
    legal = data["legal_moves_per_turn"]
    print_table("Legal moves per turn", ["count", "mean", "median", "max"], [[legal[k] for k in ("count", "mean", "median", "max")]])
    print_table("Think time per move (s)", ["agent", "seconds"], list(data["think_time_per_move"].items()))
    print_table("Distinct games (same seats, same moves = one game)", ["agents", "matches", "distinct", "repeated"],
                [[d["pair"], d["matches"], d["distinct"], "yes" if d["repeated"] else ""] for d in data["distinct_games"]])  # fmt: skip
    warning = distinct_warning(data["distinct_games"])
    if warning:
        click.echo(warning, err=True)


def _stats_rows(data: dict[str, Any]) -> list[list[Any]]:
    """`arena stats --json` as (table, subject, statistic, value) rows."""
    rows: list[list[Any]] = []
    lengths = [("all matches", data["match_length"]), *data["per_pair"].items(),
               *((f"reason: {reason}", d) for reason, d in data["per_reason"].items())]  # fmt: skip
    if data["rounds"]["count"]:
        lengths.append(("rounds per match", data["rounds"]))
    for subject, figures in lengths:
        rows += [["match_length", subject, key, value] for key, value in figures.items()]
    rows += [["legal_moves_per_turn", "all turns", key, value] for key, value in data["legal_moves_per_turn"].items()]
    rows += [["think_time_per_move", agent, "seconds", value] for agent, value in data["think_time_per_move"].items()]
    for group in data["distinct_games"]:
        rows += [["distinct_games", group["pair"], key, group[key]] for key in ("matches", "distinct", "repeated")]
    return rows


@cli.command("matches")
@_selection_options
@click.option("--agent", default=None, help="Only matches of this agent.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many (earliest first).")
@_common
@_output_options()
def matches_command(ctx: Context, tournament_key: str | None, game_spec: str | None, agent: str | None,
                    limit: int | None, as_json: bool, as_csv: bool) -> None:  # fmt: skip
    """List played matches."""
    selection = analysis.select(ctx.database(create=False), ctx.registry(), tournament_key, game_spec)
    data = matches_library.matches(ctx.database(create=False), selection, agent, limit)
    if as_json:
        print_json(data)
        return
    columns = ["id", "index", "seed", "turns", "reason", "seats"]
    rows = [[d["id"], d["index"], d["seed"], d["turns"], d["reason"],
             "  ".join(f"{s['agent']}:{s['outcome']}" for s in d["seats"])] for d in data]  # fmt: skip
    if as_csv:
        print_csv(columns, rows)
    else:
        print_table(f"Matches - {selection.title}", columns, rows)


@cli.command("replay")
@click.argument("match_id", type=int)
@click.option("--boards/--no-boards", default=True, help="Show the board after every move.")
@_common
@_output_options()
def replay_command(ctx: Context, match_id: int, boards: bool, as_json: bool, as_csv: bool) -> None:
    """Show a stored match move by move."""
    loaded = matches_library.load_replay(ctx.database(create=False), ctx.registry(), match_id)
    data = loaded.to_json()
    seats = data["seats"]
    names = {s["seat"]: s["agent"] for s in seats}
    if as_json:
        print_json(data)
        return
    if as_csv:  # one move per line; the opening's plies are nobody's (agent empty)
        print_csv(["turn", "seat", "agent", "action", "text", "opening"],
                  [[m["turn"], m["seat"], None if m["opening"] else names.get(m["seat"]), m["action"], m["text"], m["opening"]]
                   for m in data["moves"]])  # fmt: skip
        return
    click.echo(f"match {match_id}: {data['game']} seed {data['seed']}")
    click.echo("  " + "  ".join(f"seat {s['seat']}: {s['agent']} ({s['outcome']})" for s in seats))
    reason, detail = data["reason"], data["detail"]
    if boards:
        click.echo(loaded.initial.render())
    opening_plies = data["opening_plies"]
    for ply, seat, text, state in loaded.steps:
        if ply <= opening_plies:
            click.echo(f"   o{ply}. opening (seat {seat}): {text}")
        else:
            click.echo(f"{ply - opening_plies:>4}. {names.get(seat, seat)} (seat {seat}): {text}")
        if boards:
            click.echo(state.render())
    click.echo(f"end: {reason}" + (f" ({detail})" if detail else ""))


@cli.group("db")
def db_group() -> None:
    """Database maintenance."""


#: `arena db verify`'s exit code when every match it checked is fine but some could not be checked (their game is
#: not installed at the version they were played with).
VERIFY_UNCHECKED = 3


@db_group.command("verify")
@click.option("--tournament", "tournament_key", default=None, metavar="ID|NAME", help="One tournament (default: every match).")
@_common
@_output_options(csv=False)
def db_verify(ctx: Context, tournament_key: str | None, as_json: bool) -> None:
    """Replay stored matches; report those whose moves do not lead to the stored result (exit code 1 if any), and
    count the matches of games not installed at the version they were played with (not checked: exit code 3 if any,
    and no mismatch)."""
    database = ctx.database(create=False)
    tournament_id = tournaments_library.one(database, tournament_key)["id"] if tournament_key is not None else None
    report = verify.verify(database, ctx.registry(), tournament_id)
    if as_json:
        print_json(report)
    else:
        for item in report["mismatches"]:
            click.echo(f"match {item['match']} (tournament {item['tournament']}, {item['reason']}): {item['problem']}")
        click.echo(f"{report['checked']} matches replayed, {len(report['mismatches'])} do not lead to their stored result")
        unchecked = verify.unchecked_line(report["unchecked"])
        if unchecked is not None:
            click.echo(unchecked)
    if report["mismatches"]:
        sys.exit(1)
    if report["unchecked"]:
        sys.exit(VERIFY_UNCHECKED)


@db_group.command("upgrade")
@_common
def db_upgrade(ctx: Context) -> None:
    """Create or upgrade the schema (also done automatically on first use)."""
    database = ctx.database()
    click.echo(f"database {database.display} is at the newest schema ({HEAD_REVISION})")


@db_group.command("check")
@_common
@_output_options(csv=False)
def db_check(ctx: Context, as_json: bool) -> None:
    """Say which database this is (URL without password, server version) and its schema revision; change nothing."""
    exists = database_exists(ctx.db_url)
    with open_database(ctx.db_url, migrate=False, create=False) as database:  # looking creates no file
        data = {**database_status(database), "exists": exists}
    if not exists:
        data["url"] = display_url(resolve_url(ctx.db_url))
    if as_json:
        print_json(data)
        return
    if not exists:
        state = f"no file yet (a command that stores something creates it, at {data['head']})"
    elif data["foreign_tables"]:
        state = (f"another program's tables ({', '.join(data['foreign_tables'][:5])}) and no Arena schema: no command uses "
                 "it; give Arena a database of its own")  # fmt: skip
    elif data["revision"] is None:
        state = f"empty (any command creates the schema at {data['head']})"
    elif not data["known"]:
        state = (f"unknown to this Arena, whose newest is {data['head']} (a newer Arena's, or not Arena's): no command "
                 "can use it; upgrade Arena, or give another --db")  # fmt: skip
    elif data["current"]:
        state = "the newest"
    else:
        state = f"older than the newest, {data['head']} (any command upgrades it)"
    click.echo(f"database {data['url']} ({data['server']}): revision {data['revision'] or '-'}, {state}")


from arena.cli_report import plot_command, report_command  # noqa: E402  (at the end: it needs the group defined)

cli.add_command(report_command); cli.add_command(plot_command)  # noqa: E702
from arena.cli_server import connect_command, serve_command, tokens_group  # noqa: E402

cli.add_command(serve_command); cli.add_command(tokens_group); cli.add_command(connect_command)  # noqa: E702


def main() -> None:
    cli.main(prog_name="arena")


if __name__ == "__main__":
    main()
