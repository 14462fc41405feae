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
