"""Plugin discovery and the typed registry in front of `pm.hook`.

Sources, in order: the `arena` entry-point group (built-ins and installed packages), then loose
`*.py` files from `./plugins/`, `$ARENA_PLUGINS_DIR` and `--plugins-dir`. A plugin that fails to
import is reported by name and skipped; a duplicate game or agent id is an error naming both.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import pluggy

from arena import hookspecs
from arena.api import Agent, Game
from arena.errors import ArenaError, did_you_mean
from arena.params import ID_RULE, Param, default_problem, is_id

ENTRY_POINT_GROUP = "arena"
#: PluginInfo.source of the plugins Arena itself ships (its built-in games and agents).
BUILTIN_SOURCE = "entry point (arena)"


@dataclass(frozen=True)
class PluginInfo:
    name: str
    source: str  # "entry point (dist)" or a file path
    version: str
    hooks: tuple[str, ...]


#: Where a game or agent type that is not known could come from: said with "unknown game/agent type".
WHERE_PLUGINS = ("a plugin package must be installed in this environment (pip install it); loose-file plugins load from "
                 "./plugins, $ARENA_PLUGINS_DIR and --plugins-dir")


@dataclass
class Registry:
    """Everything the plugins registered, plus what went wrong while loading them."""

    pm: pluggy.PluginManager
    games: dict[str, type[Game]] = field(default_factory=dict)
    agents: dict[str, type[Agent]] = field(default_factory=dict)
    plugins: list[PluginInfo] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _owner: dict[tuple[str, str], str] = field(default_factory=dict)

    def game_class(self, game_id: str) -> type[Game]:
        try:
            return self.games[game_id]
        except KeyError:
            known = ", ".join(sorted(self.games)) or "none"
            raise ArenaError(f"unknown game '{game_id}'{did_you_mean(game_id, self.games)} (known: {known}; {WHERE_PLUGINS})") from None

    def installed_modules(self) -> list[str]:
        """The importable modules of the plugins installed as packages (entry points) that loaded here."""
        modules = (self.pm.get_plugin(info.name) for info in self.plugins if info.source.startswith("entry point"))
        return [module.__name__ for module in modules if isinstance(module, ModuleType)]

    def agent_class(self, agent_id: str) -> type[Agent]:
        try:
            return self.agents[agent_id]
        except KeyError:
            known = ", ".join(sorted(self.agents)) or "none"
            raise ArenaError(f"unknown agent type '{agent_id}'{did_you_mean(agent_id, self.agents)} (known: {known}; "
                             f"{WHERE_PLUGINS})") from None  # fmt: skip

    def owner(self, kind: str, item_id: str) -> str:
        return self._owner[(kind, item_id)]

    def is_builtin(self, kind: str, item_id: str) -> bool:
        """Was `item_id` registered by one of Arena's own plugins (an entry point of the arena distribution)?"""
        owner = self._owner.get((kind, item_id))
        return any(p.name == owner and p.source == BUILTIN_SOURCE for p in self.plugins)


def _plugin_dirs(extra: Iterable[str | os.PathLike[str]]) -> list[Path]:
    dirs = [Path("plugins")]
    env = os.environ.get("ARENA_PLUGINS_DIR")
    if env:
        dirs.extend(Path(p) for p in env.split(os.pathsep) if p)
    dirs.extend(Path(p) for p in extra)
    unique: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [u.resolve() for u in unique]:
            unique.append(d)
    return unique


def _load_file(path: Path) -> ModuleType:
    module_name = f"arena_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _hooks_of(pm: pluggy.PluginManager, plugin: object) -> tuple[str, ...]:
    return tuple(sorted(caller.name for caller in pm.get_hookcallers(plugin) or []))


def load(plugins_dirs: Iterable[str | os.PathLike[str]] = (), warn: Callable[[str], None] | None = None) -> Registry:
    """Discover every plugin and collect what they register."""
    pm = pluggy.PluginManager("arena")
    pm.add_hookspecs(hookspecs)
    registry = Registry(pm=pm)

    def report(message: str) -> None:
        registry.errors.append(message)
        if warn is not None:
            warn(message)

    loaded: dict[str, str] = {}  # entry-point name -> its distribution
    # Arena's own first (a package registering a built-in id cannot take it over), then by name and distribution (the
    # same order whatever the order of sys.path).
    found = _with_distributions(metadata.entry_points(group=ENTRY_POINT_GROUP))
    for ep, dist, version in sorted(found, key=lambda e: (e[1] != OWN_DISTRIBUTION, e[0].name, e[1])):
        if ep.name in loaded:
            if loaded[ep.name] != dist:  # (the same distribution seen twice on sys.path is no news)
                report(f"plugin '{ep.name}' (entry point of {dist}): a plugin of that name is already loaded (entry point of "
                       f"{loaded[ep.name]}): skipped; one of the two packages must rename its entry point")  # fmt: skip
            continue
        loaded[ep.name] = dist
        try:
            module = ep.load()
        except (Exception, SystemExit) as exc:  # sys.exit() or argparse at import too: reported, not the end of Arena
            report(f"plugin '{ep.name}' (entry point of {dist}) failed to load: {type(exc).__name__}: {exc}")
            continue
        _register(pm, registry, module, ep.name, f"entry point ({dist})", version, report)

    for directory in _plugin_dirs(plugins_dirs):
        with _helpers_importable(directory):
            for path in sorted(directory.glob("*.py")):
                if not path.name.startswith("_"):  # a helper module: imported by the plugins that use it
                    _load_loose(pm, registry, path, report)

    pm.check_pending()
    _collect(registry)
    return registry


def _load_loose(pm: pluggy.PluginManager, registry: Registry, path: Path, report: Callable[[str], None]) -> None:
    name = path.stem
    try:
        module = _load_file(path)
    except (Exception, SystemExit) as exc:  # sys.exit() or argparse at import too: reported, not the end of Arena
        report(f"plugin '{name}' ({path}) failed to load: {type(exc).__name__}: {exc}")
        return
    version = str(getattr(module, "__version__", "-"))
    _register(pm, registry, module, name, str(path), version, report)


#: Every plugins folder whose plugins have loaded in this process (resolved): where helper modules came from.
_helper_folders: set[Path] = set()


@contextlib.contextmanager
def _helpers_importable(directory: Path) -> Iterator[None]:
    """`directory` at the end of sys.path while its plugins load, so that they import its helper modules (`from _util
    import first`); installed modules keep their names. Its helpers are imported afresh, as its plugins are, never
    another plugins folder's of the same name; sys.path is as it was afterwards."""
    folder = directory.resolve()
    _forget_helpers(folder)
    entry = str(folder)
    added = entry not in sys.path
    if added:
        sys.path.append(entry)
    importlib.invalidate_caches()  # a folder written a moment ago
    try:
        yield
    finally:
        _helper_folders.add(folder)
        if added and entry in sys.path:
            sys.path.remove(entry)


def _forget_helpers(folder: Path) -> None:
    """Drop from sys.modules what a plugins folder's helpers imported under the name of one of `folder`'s helpers."""
    names = {p.stem for p in folder.glob("_*.py")} | {p.name for p in folder.glob("_*") if (p / "__init__.py").is_file()}
    for name in [n for n in sys.modules if n in names or n.partition(".")[0] in names]:
        origin = getattr(sys.modules[name], "__file__", None)
        if origin is not None and any(Path(origin).resolve().is_relative_to(f) for f in _helper_folders | {folder}):
            del sys.modules[name]


#: The distribution of Arena's own (built-in) plugins: they load before any other package's.
OWN_DISTRIBUTION = "arena"


def _with_distributions(entry_points: Iterable[metadata.EntryPoint]) -> list[tuple[metadata.EntryPoint, str, str]]:
    """Each entry point with its distribution's name and version. A distribution's metadata file is parsed once, not once
    per entry point and question (its `name` and `version` parse the whole file each time: 0.4 s of every command)."""
    parsed: dict[int, tuple[str, str]] = {}  # id of the distribution object, which its entry points share
    found = []
    for ep in entry_points:
        if ep.dist is None:
            found.append((ep, "?", "?"))
            continue
        if id(ep.dist) not in parsed:
            meta = ep.dist.metadata
            parsed[id(ep.dist)] = (meta["Name"], meta["Version"])
        found.append((ep, *parsed[id(ep.dist)]))
    return found


def _register(
    pm: pluggy.PluginManager,
    registry: Registry,
    module: ModuleType,
    name: str,
    source: str,
    version: str,
    report: Callable[[str], None],
) -> None:
    if pm.get_plugin(name) is not None:
        report(f"plugin '{name}' ({source}) skipped: a plugin of that name is already loaded")
        return
    try:
        pm.register(module, name=name)
    except Exception as exc:  # pluggy rejects bad hook signatures here
        report(f"plugin '{name}' ({source}) failed to register: {exc}")
        return
    try:
        pm.check_pending()  # a misspelled hook name (register_agentz): this plugin's, the others passed already
    except pluggy.PluginValidationError as exc:
        pm.unregister(module, name=name)
        report(f"plugin '{name}' ({source}) failed to register: {exc}")
        return
    hooks = _hooks_of(pm, module)
    unmarked = _unmarked_hooks(pm, module, hooks)
    for hook in unmarked:
        report(f"plugin '{name}' ({source}): {hook} has no @arena.hookimpl, so Arena never calls it")
    if not hooks and not unmarked:
        report(f"plugin '{name}' ({source}) registers nothing: it has no @arena.hookimpl function "
               f"(a helper module in a plugins folder is named with a leading '_', which Arena skips)")
    registry.plugins.append(PluginInfo(name, source, version, hooks))


def _unmarked_hooks(pm: pluggy.PluginManager, module: ModuleType, hooks: tuple[str, ...]) -> list[str]:
    """Functions of the module named like a hook (register_agents) that pluggy did not take: the decorator is missing."""
    names = sorted(name for name in vars(hookspecs) if name.startswith("register_"))
    return [name for name in names if name not in hooks and callable(getattr(module, name, None))
            and getattr(getattr(module, name), "__module__", None) == module.__name__]  # fmt: skip


def _collect(registry: Registry) -> None:
    """Call each plugin's register_* hooks with a `register` that knows which plugin is calling."""
    pm = registry.pm
    for hook_name, kind, table, base in (
        ("register_games", "game", registry.games, Game),
        ("register_agents", "agent", registry.agents, Agent),
    ):
        hook = getattr(pm.hook, hook_name)
        # get_hookimpls() is in registration order (built-ins first), so a duplicate names the later plugin.
        for impl in hook.get_hookimpls():
            register = functools.partial(_add, registry, impl.plugin_name, kind, table, base)  # knows the plugin calling
            try:
                impl.function(register)
            except Exception as exc:
                registry.errors.append(f"plugin '{impl.plugin_name}' failed in {hook_name}: {type(exc).__name__}: {exc}")


def _add(registry: Registry, plugin: str, kind: str, table: dict[str, Any], base: type, item: Any) -> None:
    """Register one game or agent class of `plugin`. A bad registration is reported and skipped; the plugin's other items
    and every other plugin still load."""
    try:
        problem = _registration_problem(item, kind, base)
        placeholder = None if problem is not None else default_problem(item.info.params, f"{kind} '{item.info.id}'")
    except Exception as exc:  # an `info` that is no GameInfo/AgentInfo, a Param whose checks raise
        problem = f"{kind} class {getattr(item, '__name__', repr(item))}, which cannot be checked: {type(exc).__name__}: {exc}"
    if problem is not None:
        registry.errors.append(f"plugin '{plugin}' registered {problem}: skipped")
        return
    item_id = item.info.id
    if placeholder is not None:  # a placeholder for a value to give, or a mistake: said now, refused where used
        registry.errors.append(f"plugin '{plugin}' registered {kind} '{item_id}': {placeholder}; a spec must give it")
    if item_id in table:
        first = registry._owner[(kind, item_id)]
        registry.errors.append(f"duplicate {kind} id '{item_id}': registered by plugins '{first}' and "
                               f"'{plugin}'; the one of '{first}' is kept")  # fmt: skip
        return
    table[item_id] = item
    registry._owner[(kind, item_id)] = plugin


def _registration_problem(item: Any, kind: str, base: type) -> str | None:
    """Why `item` cannot be registered as a `kind` of class `base` (None: it can), said after "plugin 'x' registered "."""
    if not (isinstance(item, type) and issubclass(item, base)):
        return f"{item!r}, which is not an arena.{base.__name__} class"
    item_id = item.info.id  # type: ignore[attr-defined]  # a Game or Agent class, checked above
    if not is_id(item_id):
        return f"{kind} id {item_id!r}: {ID_RULE}"
    if inspect.isabstract(item):
        missing = ", ".join(f"{name}()" for name in sorted(getattr(item, "__abstractmethods__", ())))
        return f"{kind} '{item_id}', an abstract class: it does not define {missing}"
    problem = _params_problem(item.info.params)  # type: ignore[attr-defined]
    return None if problem is None else f"{kind} '{item_id}': {problem}"


def _params_problem(params: object) -> str | None:
    """What is wrong with a declared `params` (None: a tuple of arena.Param, as it must be)."""
    if isinstance(params, Param):
        return "its params is one arena.Param, not a tuple of them (a one-item tuple needs a trailing comma: (Param(...),))"
    if not isinstance(params, tuple):
        return f"its params is a {type(params).__name__}, not a tuple of arena.Param"
    wrong = [item for item in params if not isinstance(item, Param)]
    if wrong:
        return f"its params holds {wrong[0]!r}, which is not an arena.Param"
    return None


_cache: dict[tuple[str, ...], Registry] = {}


def get_registry(plugins_dirs: Iterable[str | os.PathLike[str]] = (), warn: Callable[[str], None] | None = None) -> Registry:
    """The registry for these plugin directories, loaded once per process."""
    key = tuple(str(Path(p).resolve()) for p in plugins_dirs) + (os.environ.get("ARENA_PLUGINS_DIR", ""), os.getcwd())
    if key not in _cache:
        _cache[key] = load(plugins_dirs, warn)
    return _cache[key]


class CommandContext(Protocol):
    """The part of arena.cli.Context a plugin's command uses (None when the command runs outside the `arena` group)."""

    plugins_dirs: list[str]
    db_url: str | None

    def registry(self) -> Registry: ...


def command_registry(ctx: CommandContext | None, plugins_dirs: Iterable[str]) -> tuple[Registry, tuple[str, ...]]:
    """A plugin command's registry and every plugin directory in use: the `arena` group's, with the command's own
    --plugins-dir added, or (the command run on its own, as tests do) one loaded here for its --plugins-dir."""
    if ctx is None:
        dirs = tuple(plugins_dirs)
        return get_registry(dirs), dirs
    ctx.plugins_dirs.extend(plugins_dirs)
    return ctx.registry(), tuple(ctx.plugins_dirs)


def plugins_dir_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """The --plugins-dir option of every command (the group's, arena.cli's, plugins'): repeatable, an existing directory."""
    import click  # here: worker processes import this module and never need click

    return click.option("--plugins-dir", "plugins_dirs", multiple=True, metavar="DIR", type=folder_type(),
                        help="Load loose-file plugins from DIR.")(command)  # fmt: skip


def folder_type() -> Any:
    """A click type for an option naming an existing folder (--plugins-dir, serve's --models-dir). click's own
    Path(exists=True, file_okay=False) refuses a regular file but lets a device through (/dev/null, then read as an
    empty folder): this refuses anything that is not a folder, in one line."""
    import click

    class Folder(click.Path):
        def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
            path = super().convert(value, param, ctx)
            if not os.path.isdir(path):
                self.fail(f"{os.fsdecode(value)!r} is not a folder", param, ctx)
            return path

    return Folder(exists=True, file_okay=False)


def db_option(db_url: str) -> str:
    """A --db value as given, refused in one line when empty (every command's --db, the group's and plugins')."""
    if not db_url.strip():
        raise ArenaError("--db is empty: give a database URL or a SQLite file (or leave --db out for $ARENA_DB, else ./arena.db)")
    return db_url


def command_db(ctx: CommandContext | None, db_url: str | None) -> str | None:
    """A plugin command's database: its own --db, else the `arena` group's, else None ($ARENA_DB, else ./arena.db)."""
    if db_url is not None:
        return db_option(db_url)
    return ctx.db_url if ctx is not None else None


def register_commands(registry: Registry, cli: Any) -> list[str]:
    """Let plugins add CLI commands to `cli`; returns one line per plugin whose register_commands raised (the others'
    commands are added all the same)."""
    problems = []
    for impl in reversed(registry.pm.hook.register_commands.get_hookimpls()):  # pluggy's order of calling them
        try:
            impl.function(**dict.fromkeys(impl.argnames, cli))
        except Exception as exc:
            problems.append(f"plugin '{impl.plugin_name}' failed in register_commands: {type(exc).__name__}: {exc}")
    return problems
