"""Plugin discovery: entry points, loose files, failures, duplicates, a pip-installed third-party package."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from arena.plugins import load
from tests.conftest import FIXTURES, TEST_PLUGINS, Arena, loose_plugin

REPO = Path(__file__).resolve().parent.parent


def test_builtins_come_from_entry_points():
    registry = load()
    sources = {p.name: p.source for p in registry.plugins}
    assert sources["tic_tac_toe"].startswith("entry point") and sources["greedy"].startswith("entry point")
    assert {"tic_tac_toe", "connect_four"} <= set(registry.games) and {"random", "greedy"} <= set(registry.agents)


def test_loose_files_and_a_broken_plugin(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no ./plugins here
    registry = load([FIXTURES / "broken"])
    assert "fine" in registry.agents
    assert any("does_not_import" in e and "broken on purpose" in e for e in registry.errors)


def test_installed_modules_are_the_entry_points_that_loaded(monkeypatch, tmp_path):
    """What isolated agents' forkserver preloads (arena.isolation): importable modules only, no loose files."""
    monkeypatch.chdir(tmp_path)
    registry = load([FIXTURES / "broken"])
    modules = registry.installed_modules()
    assert {"games.connect_four", "agents.greedy", "agents.neural"} <= set(modules)
    assert not any(name.startswith("arena_plugin_") for name in modules)  # the loose files ("fine")
    assert all(name in sys.modules for name in modules)


def test_env_plugins_dir(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARENA_PLUGINS_DIR", str(TEST_PLUGINS))
    assert "forever" in load().games


def test_repository_plugins_folder_is_loaded(monkeypatch):
    monkeypatch.chdir(REPO)
    registry = load()
    assert "center" in registry.agents
    assert any(p.name == "example_agent" and p.source.endswith("example_agent.py") and p.version == "1.0" for p in registry.plugins)


def test_duplicate_id_names_both_plugins_and_keeps_the_first():
    registry = load([FIXTURES / "duplicate"])
    assert any(re.search("duplicate agent id 'random'.*'random_agent' and 'another_random'", e) for e in registry.errors)
    assert registry.owner("agent", "random") == "random_agent"  # built-ins load first


def test_bad_registrations_are_reported_and_the_rest_loads(tmp_path):
    plugins = loose_plugin(
        tmp_path / "plugins",
        "sloppy",
        "import arena\n\n"
        "class Good(arena.Agent):\n    info = arena.AgentInfo(id='good')\n    def act(self, state):\n        return state.legal_actions()[0]\n\n"
        "class Colon(Good):\n    info = arena.AgentInfo(id='bad:id')\n\n"
        "@arena.hookimpl\ndef register_agents(register):\n    register(42)\n    register(Colon)\n"
        "    register(Good)\n"
    )
    registry = load([plugins])
    assert "good" in registry.agents and "bad:id" not in registry.agents and "random" in registry.agents
    assert any("registered 42, which is not an arena.Agent class" in e for e in registry.errors)
    assert any("agent id 'bad:id'" in e for e in registry.errors)


def test_a_hook_without_its_decorator_is_reported_not_silently_ignored(tmp_path):
    plugins = loose_plugin(
        tmp_path / "plugins",
        "undecorated",
        "import arena\n\n"
        "class Good(arena.Agent):\n    info = arena.AgentInfo(id='good')\n    def act(self, state):\n        return state.legal_actions()[0]\n\n"
        "def register_agents(register):\n    register(Good)\n",
    )
    registry = load([plugins])
    assert "good" not in registry.agents
    assert [e for e in registry.errors if "undecorated" in e] == [
        f"plugin 'undecorated' ({plugins / 'undecorated.py'}): register_agents has no @arena.hookimpl, so Arena never calls it"
    ]
    assert not [e for e in load([]).errors if "hookimpl" in e]  # the built-ins and installed plugins are all decorated
    empty = loose_plugin(tmp_path / "plugins", "notes", "WEIGHTS = (1, 2, 3)\n")
    loose_plugin(empty, "_helpers", "WEIGHTS = (1, 2, 3)\n")  # a leading '_': a helper, skipped without a word
    assert [e for e in load([empty]).errors if "registers nothing" in e] == [
        f"plugin 'notes' ({empty / 'notes.py'}) registers nothing: it has no @arena.hookimpl function "
        "(a helper module in a plugins folder is named with a leading '_', which Arena skips)"
    ]


def test_cli_reports_broken_plugin_and_lists_plugins(tmp_path):
    arena = Arena(tmp_path / "a.db", plugins_dirs=(FIXTURES / "broken",))
    result = arena("plugins")
    assert "fine" in result.stdout and "does_not_import" in result.stderr
    listed = arena.json("plugins")
    fine = next(p for p in listed if p["name"] == "fine")
    assert fine["hooks"] == ["register_agents"] and fine["source"].endswith("fine.py")
    dup = Arena(tmp_path / "a.db", plugins_dirs=(FIXTURES / "duplicate",))("plugins")
    assert dup.exit_code == 0 and "duplicate agent id 'random'" in dup.stderr  # a warning: the command still works


def test_pip_installed_third_party_plugin(tmp_path):
    """A real package, built and installed with pip, found through its own entry point."""
    target = tmp_path / "site"
    source = shutil.copytree(FIXTURES / "thirdparty", tmp_path / "src")  # building writes next to the sources
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--target", str(target),
         str(source)],
        check=True, capture_output=True,
    )  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(target), ARENA_DB=str(tmp_path / "t.db"))
    arena = [sys.executable, "-m", "arena.cli"]
    listed = subprocess.run(arena + ["plugins"], env=env, capture_output=True, text=True, cwd=tmp_path, check=True)
    assert "thirdparty" in listed.stdout and "arena-thirdparty" in listed.stdout and "2.5.0" in listed.stdout
    run = subprocess.run(arena + ["run-tournament", "--game", "tic_tac_toe", "--agents", "last_legal,random", "--rounds", "2"],
                         env=env, capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "last_legal" in run.stdout


def test_head_revision_constant_matches_alembic():
    from db.session import HEAD_REVISION, head_revision

    assert head_revision() == HEAD_REVISION


def _fake_distribution(site: Path, name: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """An installed package as pip leaves one: its modules and a dist-info folder with its entry points."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[arena]\n" + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))
    for module, source in modules.items():
        (site / f"{module}.py").write_text(source)


def test_a_package_cannot_take_over_a_built_in_id_nor_hide_another_package(tmp_path):
    """Entry points load Arena's own first: a package registering 'tic_tac_toe' or 'random' is told its id is taken
    (an entry point sorting before 'tic_tac_toe' took it over silently, but for a warning naming it as kept); two
    packages' entry points of one name: the second is reported, not dropped in silence (which one won depended on
    sys.path)."""
    site = tmp_path / "site"
    hijack = (
        "import arena\nfrom games.tic_tac_toe import TicTacToe\nfrom agents.random_agent import RandomAgent\n"
        "class Fake(TicTacToe):\n    info = arena.GameInfo(id='tic_tac_toe', version='9', name='fake')\n"
        "class Bad(RandomAgent):\n    info = arena.AgentInfo(id='random', version='9', description='fake')\n"
        "@arena.hookimpl\ndef register_games(register):\n    register(Fake)\n"
        "@arena.hookimpl\ndef register_agents(register):\n    register(Bad)\n"
    )  # fmt: skip
    _fake_distribution(site, "arena-aaa", {"a_hijack": "aaa_hijack"}, {"aaa_hijack": hijack})
    _fake_distribution(site, "arena-bbb", {"a_hijack": "bbb_other"}, {"bbb_other": "x = 1\n"})
    env = dict(os.environ, PYTHONPATH=str(site), ARENA_DB=str(tmp_path / "t.db"))
    listed = subprocess.run([sys.executable, "-m", "arena", "games", "--json"], env=env, capture_output=True, text=True,
                            cwd=tmp_path, check=True)  # fmt: skip
    games = {g["id"]: g for g in json.loads(listed.stdout)}
    assert games["tic_tac_toe"]["plugin"] == "tic_tac_toe" and games["tic_tac_toe"]["version"] == "1"
    assert "duplicate game id 'tic_tac_toe': registered by plugins 'tic_tac_toe' and 'a_hijack'; the one of 'tic_tac_toe' is kept" in listed.stderr
    assert "duplicate agent id 'random': registered by plugins 'random_agent' and 'a_hijack'" in listed.stderr
    assert "plugin 'a_hijack' (entry point of arena-bbb): a plugin of that name is already loaded (entry point of arena-aaa)" in listed.stderr


HELLO = "import arena\nimport click\n\n@arena.hookimpl\ndef register_commands(cli):\n    @cli.command('hello')\n    def hello():\n        click.echo('hi')\n"
KAPUT = "import arena\n\n@arena.hookimpl\ndef register_commands(cli):\n    raise RuntimeError('kaput')\n"


def test_a_plugin_command_from_a_plugins_dir_folder_is_a_command(tmp_path):
    plugins = loose_plugin(tmp_path / "plugins", "hello", HELLO)
    arena = Arena(tmp_path / "a.db", plugins_dirs=(plugins,))
    assert arena("hello").stdout == "hi\n"
    assert re.search(r"^  hello\b", arena("--help").stdout, re.M)  # --help lists it, and the built-in plugins' commands
    assert "train" in arena("--help").stdout
    assert "No such command 'hello'" in Arena(tmp_path / "a.db", plugins_dirs=())("hello", ok=False).stderr  # not elsewhere
    after = Arena(tmp_path / "a.db", plugins_dirs=())("hello", "--plugins-dir", str(plugins), ok=False)  # its folder after it
    assert after.exit_code == 2 and after.stderr.splitlines() == [
        f"Error: No such command 'hello': a plugin's command loads from --plugins-dir given before it (arena --plugins-dir "
        f"{plugins} hello ...)"]  # fmt: skip


def test_a_plugin_whose_register_commands_raises_is_a_warning_and_every_other_command_works(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_PLUGINS_DIR", str(loose_plugin(tmp_path / "plugins", "kaput", KAPUT)))
    arena = Arena(tmp_path / "a.db", plugins_dirs=(loose_plugin(tmp_path / "more", "hello", HELLO),))
    warning = "warning: plugin 'kaput' failed in register_commands: RuntimeError: kaput"
    shown = arena("--help")
    assert shown.stderr.splitlines() == [warning] and "plugins" in shown.stdout and "train" in shown.stdout
    unknown = arena("nosuch", ok=False)
    assert unknown.exit_code == 2 and unknown.stderr.splitlines() == [warning, "Error: No such command 'nosuch'."]
    assert arena("hello").stdout == "hi\n" and arena("plugins").exit_code == 0


def test_a_plugin_imports_a_helper_module_of_its_folder(tmp_path, monkeypatch):
    """README: a helper module of a plugins folder is named with a leading '_' and a plugin imports it by that name;
    each folder its own helper, the same name or not, and sys.path as it was."""
    monkeypatch.chdir(tmp_path)
    source = ("import arena\nfrom _util import first\n\nclass First(arena.Agent):\n    info = arena.AgentInfo(id={id!r})\n"
              "    def act(self, state):\n        return first(state.legal_actions())\n\n"
              "@arena.hookimpl\ndef register_agents(register):\n    register(First)\n")  # fmt: skip
    folders = []
    for name, body in (("one", "def first(a):\n    return a[0]\n"), ("two", "def first(a):\n    return a[-1]\n")):
        folders.append(loose_plugin(tmp_path / name, f"uses_util_{name}", source.format(id=f"first_{name}")))
        (folders[-1] / "_util.py").write_text(body)
    path = list(sys.path)
    registry = load(folders)
    assert not registry.errors and sys.path == path
    picks = {name: registry.agents[f"first_{name}"].act(None, type("S", (), {"legal_actions": lambda self: [3, 4]})())
             for name in ("one", "two")}  # fmt: skip
    assert picks == {"one": 3, "two": 4}
    arena = Arena(tmp_path / "a.db", plugins_dirs=(folders[0],))  # agent processes load the folder as well
    arena("run-tournament", "--game", "tic_tac_toe", "--agents", "first_one,random", "--rounds", "2", "--isolate")
    assert [match["reason"] for match in arena.json("matches")] == ["normal", "normal"]


def test_a_plugin_that_exits_at_import_is_reported_by_name(tmp_path):
    plugins = loose_plugin(tmp_path / "plugins", "quitter", "import sys\nsys.exit(3)\n")
    loose_plugin(plugins, "argv", "import argparse\nargparse.ArgumentParser().parse_args(['--nope'])\n")
    result = Arena(tmp_path / "a.db", plugins_dirs=(plugins,))("plugins")
    assert f"warning: plugin 'quitter' ({plugins / 'quitter.py'}) failed to load: SystemExit: 3" in result.stderr
    assert f"warning: plugin 'argv' ({plugins / 'argv.py'}) failed to load: SystemExit: 2" in result.stderr
    assert "random_agent" in result.stdout  # the others load


AGENT_BASE = ("import abc\nimport arena\n\nclass Base(arena.Agent):\n    def act(self, state):\n"
              "        return state.legal_actions()[0]\n\n")  # fmt: skip


def test_bad_params_declarations_are_skipped_one_by_one_naming_the_agent_or_game(tmp_path):
    plugins = loose_plugin(tmp_path / "plugins", "params_mistakes", AGENT_BASE + (
        "class AList(Base):\n    info = arena.AgentInfo(id='p_list', params=[arena.Param('k', 5)])\n"
        "class NoComma(Base):\n    info = arena.AgentInfo(id='p_nocomma', params=(arena.Param('noise', 0.0)))\n"
        "class Names(Base):\n    info = arena.AgentInfo(id='p_names', params=('k',))\n"
        "class Fine(Base):\n    info = arena.AgentInfo(id='p_fine', params=(arena.Param('k', 5),))\n"
        "class Raising(Base):\n    info = arena.AgentInfo(id='p_raising', params=(arena.Param('k', 5, min='x'),))\n"
        "from games.tic_tac_toe import TicTacToe\n"
        "class ListGame(TicTacToe):\n    info = arena.GameInfo(id='g_list', version='1', name='g', params=[])\n"
        "@arena.hookimpl\ndef register_agents(register):\n"
        "    for agent in (AList, NoComma, Names, Raising, Fine):\n        register(agent)\n"
        "@arena.hookimpl\ndef register_games(register):\n    register(ListGame)\n"))  # fmt: skip
    registry = load([plugins])
    assert "p_fine" in registry.agents and not {"p_list", "p_nocomma", "p_names", "p_raising"} & set(registry.agents)
    assert "g_list" not in registry.games
    mine = [e for e in registry.errors if "params_mistakes" in e]
    assert mine == [
        "plugin 'params_mistakes' registered game 'g_list': its params is a list, not a tuple of arena.Param: skipped",
        "plugin 'params_mistakes' registered agent 'p_list': its params is a list, not a tuple of arena.Param: skipped",
        "plugin 'params_mistakes' registered agent 'p_nocomma': its params is one arena.Param, not a tuple of them (a one-item "
        "tuple needs a trailing comma: (Param(...),)): skipped",
        "plugin 'params_mistakes' registered agent 'p_names': its params holds 'k', which is not an arena.Param: skipped",
        "plugin 'params_mistakes' registered agent class Raising, which cannot be checked: TypeError: '<' not supported between "
        "instances of 'int' and 'str': skipped",
    ]
    arena = Arena(tmp_path / "a.db", plugins_dirs=(plugins,))
    assert "p_fine" in [agent["type"] for agent in arena.json("agents", "list")["types"]]
    refused = arena("run-tournament", "--game", "tic_tac_toe", "--agents", "p_list,random", ok=False)
    assert refused.exit_code == 2 and refused.stderr.splitlines()[-1].startswith("Error: unknown agent 'p_list'")


def test_an_abstract_agent_or_game_class_is_refused_at_registration(tmp_path):
    plugins = loose_plugin(tmp_path / "plugins", "abstracts", AGENT_BASE + (
        "class Chooser(arena.Agent):\n    info = arena.AgentInfo(id='chooser')\n"
        "    def choose(self, state):\n        return state.legal_actions()[0]\n"
        "class Fine(Base):\n    info = arena.AgentInfo(id='fine_one')\n"
        "class NoStart(arena.Game):\n    info = arena.GameInfo(id='no_start', version='1', name='n')\n"
        "    num_distinct_actions = 3\n"
        "@arena.hookimpl\ndef register_agents(register):\n    register(Chooser)\n    register(Fine)\n"
        "@arena.hookimpl\ndef register_games(register):\n    register(NoStart)\n"))  # fmt: skip
    registry = load([plugins])
    assert "chooser" not in registry.agents and "fine_one" in registry.agents and "no_start" not in registry.games
    assert [e for e in registry.errors if "abstracts" in e] == [
        "plugin 'abstracts' registered game 'no_start', an abstract class: it does not define new_initial_state(): skipped",
        "plugin 'abstracts' registered agent 'chooser', an abstract class: it does not define act(): skipped",
    ]
