"""arena.files: where Arena may write, checked before any work, and files written whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.files import check_writable, write_atomically


def test_check_writable_refuses_what_cannot_be_written_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "a_folder").mkdir()
    refused = [
        (tmp_path / "missing" / "out.png", False, f"folder {tmp_path / 'missing'} does not exist"),
        (tmp_path / "a_folder", False, "it is a folder"),
        (tmp_path / "a_file" / "out.png", False, f"{tmp_path / 'a_file'} is not a folder"),
        (tmp_path / "missing" / "report", True, f"folder {tmp_path / 'missing'} does not exist"),
        (tmp_path / "a_file", True, f"{tmp_path / 'a_file'} is not a folder"),
    ]
    for target, new_folder, words in refused:
        with pytest.raises(ArenaError) as caught:
            check_writable(target, new_folder=new_folder)
        assert str(caught.value) == f"cannot write {target}: {words}"
    assert check_writable(tmp_path / "new.onnx") == tmp_path / "new.onnx"
    check_writable(tmp_path / "a_folder", new_folder=True)  # a report's folder that exists
    check_writable(tmp_path / "report", new_folder=True)  # or one to make in a folder that does
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "a_folder"]  # no probe, nothing made


def test_write_atomically_writes_whole_files_or_nothing(tmp_path: Path) -> None:
    target = tmp_path / "weights.npz"
    umask = os.umask(0o022)
    try:
        write_atomically(target, b"first")
    finally:
        os.umask(umask)
    assert target.read_bytes() == b"first" and (target.stat().st_mode & 0o777) == 0o644  # the umask's mode, not mkstemp's 0600

    def refuse(path: str) -> None:
        assert Path(path).read_bytes() == b"second"  # the check sees the whole new file
        raise ArenaError("outputs differ")

    with pytest.raises(ArenaError, match="outputs differ"):
        write_atomically(target, b"second", check=refuse)
    assert target.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["weights.npz"]  # no temporary file left
