"""The README's plugin examples are real code: load them as plugins and run the conformance suite."""

import re
from pathlib import Path

from arena.plugins import load
from arena.testing import check_agent, check_game

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_plugin_examples_work(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    plugin_blocks = [b for b in blocks if "@arena.hookimpl" in b]
    assert len(plugin_blocks) == 2
    for i, block in enumerate(plugin_blocks):
        (tmp_path / f"readme_example_{i}.py").write_text(block)
    monkeypatch.chdir(tmp_path)
    registry = load([tmp_path])
    assert not registry.errors
    nim = registry.games["nim"]()
    check_game(nim)
    check_agent(registry.agents["first_legal"], nim, {"noise": 0.5})
    check_agent(registry.agents["first_legal"], registry.games["connect_four"]())
    (conformance,) = [b for b in blocks if "from arena.testing import check_agent" in b]  # the README's conformance example runs as written
    names = {"Nim": registry.games["nim"], "FirstLegal": registry.agents["first_legal"]}
    monkeypatch.setenv("ARENA_UPDATE_GOLDEN", "1")  # the golden files written, as a plugin author first does
    exec(conformance, dict(names))
    written = sorted(p.name for p in (tmp_path / "tests" / "golden").iterdir())
    assert written == ["nim_greedy.txt", "nim_random.txt"] and "take " in (tmp_path / "tests/golden/nim_greedy.txt").read_text()
    monkeypatch.delenv("ARENA_UPDATE_GOLDEN")
    exec(conformance, dict(names))  # then compared with them
    (properties,) = [b for b in blocks if "from arena.testing import check_position" in b]  # and the property test's
    scope = dict(names)
    exec(properties, scope)
    scope["test_nim_positions"]()


def readme_commands() -> list[list[str]]:
    """Every `arena ...` command in the README's shell blocks, continuation lines joined, as argv."""
    import shlex

    commands = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("arena "):
                commands.append(shlex.split(line)[1:])
    return commands


def test_readme_commands_parse(tmp_path, monkeypatch):
    """The README's commands name real commands and options with valid values (parsed, not run)."""
    import click

    from arena.cli import cli

    commands = readme_commands()
    assert len(commands) >= 20
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        for word in argv:  # files the examples read (a checkpoint the example before wrote)
            if word.endswith((".npz", ".onnx", ".pt", ".pt2")):
                (tmp_path / word).touch()
        command: click.Command = cli
        context = cli.make_context("arena", list(argv))
        while isinstance(command, click.Group):
            if command.invoke_without_command and not [*context._protected_args, *context.args]:
                break  # a group that is a command of its own too (`arena tournaments`)
            name, sub, rest = command.resolve_command(context, [*context._protected_args, *context.args])
            assert sub is not None, argv
            command, context = sub, sub.make_context(name, rest, parent=context)
