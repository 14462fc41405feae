"""The architecture the folder names promise: the two skins (the CLI, the server) reach storage only through
arena's library (DESIGN.md, Server: "Neither skin imports `db`")."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKINS = [ROOT / "arena" / name for name in ("cli.py", "cli_report.py", "cli_server.py")] + sorted((ROOT / "arena" / "server").rglob("*.py"))


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
    return modules


def test_neither_skin_imports_db() -> None:
    assert len(SKINS) > 5
    offenders = {path.relative_to(ROOT).as_posix(): sorted(m for m in imported_modules(path) if m == "db" or m.startswith("db."))
                 for path in SKINS}  # fmt: skip
    assert {path: found for path, found in offenders.items() if found} == {}
