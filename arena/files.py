"""Files Arena writes: where they go checked before any work (checkpoints, exports, figures, reports), and checkpoints,
training states and exports written whole or not at all."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from arena.errors import ArenaError


def check_writable(path: str | os.PathLike[str], new_folder: bool = False) -> Path:
    """Raise ArenaError unless `path` can be written: a file (not a folder) in a folder that exists or, with
    `new_folder`, a folder that exists or can be made in one that does. Tried for real (a probe file, removed): a
    read-only file system or a folder without write permission is found before the work. A missing folder is refused,
    not made (as by arena train, export, report and --db); leaves nothing behind. Returns `path` as a Path."""
    target = Path(path)
    if new_folder:
        folder = target if target.exists() else target.parent
    else:
        if target.is_dir():
            raise ArenaError(f"cannot write {target}: it is a folder")
        folder = target.parent
    if not folder.exists():
        raise ArenaError(f"cannot write {target}: folder {folder} does not exist")
    if not folder.is_dir():
        raise ArenaError(f"cannot write {target}: {folder} is not a folder")
    probe = folder / f".{target.name}.{os.getpid()}.probe"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as exc:
        raise ArenaError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target


def write_atomically(path: str | os.PathLike[str], data: bytes, check: Callable[[str], object] | None = None) -> None:
    """Write through a temporary file in the same folder and rename, so a reader never sees half a file; `check` is
    called on the temporary file before the rename (what it raises leaves nothing written)."""
    target = check_writable(path)
    temporary = target.parent / f".{target.name}.{os.getpid()}.tmp"
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # the umask applies, as for open()
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        if check is not None:
            check(str(temporary))
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise ArenaError(f"cannot write {target}: {exc.strerror or exc}") from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
