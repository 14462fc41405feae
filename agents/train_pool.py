"""Self-play against past checkpoint files: the pool `arena train --opponent self` draws opponents from.

Every `snapshot_every` episodes (from episode 0) the learner is written as a checkpoint file into the
pool directory, `NAME-EPISODES.SUFFIX` (the episodes trained so far; the trained file is copied there
too at the end), and read back as an opponent: the opponent of each episode is drawn by the seeded
RNG from the files given with `--opponent-pool` (read once, when training starts) and the last
`self_pool` files this run wrote. The pool directory is `--opponent-pool`'s directory when it names
one, else `OUT`'s name with `.pool` (`ttt.npz` -> `ttt.pool/`). A later run, or a run that goes on
where this one stopped, passes that directory (or some of its files) as `--opponent-pool` and plays
against them. Any file the `neural` agent plays is accepted (`.npz` MLPs and Q-tables, TorchScript,
ONNX, of any network shape) as long as it fits the game; an opponent plays a draw from the softmax
of its outputs, as the in-memory snapshots did.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

import arena

Values = Callable[[np.ndarray], np.ndarray]

POOL_SUFFIX = ".pool"
CHECKPOINT_SUFFIXES = (".npz", ".pt", ".pt2", ".onnx")  # what a pool directory's checkpoints are named


def file_values(path: str | os.PathLike[str], game: arena.Game) -> Values:
    """The file as the `neural` agent loads it, checked against `game`: a flattened observation -> one value per action."""
    from agents.models import check_fits, load_model
    from agents.neural import observation_shape, require_policy

    model = load_model(str(path))
    check_fits(model, game, with_params=True)
    require_policy(model, str(path))
    shape = observation_shape(game)
    return lambda observation: model.run(observation.reshape(1, *shape))[0][0]


@dataclass(frozen=True)
class Pool:
    """Where this run's snapshots go, and the files given to draw opponents from besides them."""

    directory: Path
    given: tuple[Path, ...]
    stem: str
    suffix: str

    def snapshot_path(self, episodes: int) -> Path:
        return self.directory / f"{self.stem}-{episodes:07d}{self.suffix}"


def checkpoints_in(directory: Path) -> list[Path]:
    """A pool directory's checkpoint files, by name."""
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix.lower() in CHECKPOINT_SUFFIXES)


def parse_pool(text: str | None, out: str) -> tuple[Path | None, tuple[Path, ...]]:
    """`--opponent-pool DIR` or `FILE,FILE,...`: the directory named (at most one) and every file in the pool now."""
    if not text:
        return None, ()
    directory: Path | None = None
    files: list[Path] = []
    for item in (part.strip() for part in text.split(",")):
        path = Path(item)
        if not item:
            raise arena.ArenaError(f"--opponent-pool takes a directory or checkpoint files separated by commas, got {text!r}")
        if path.is_dir():
            if directory is not None:
                raise arena.ArenaError(f"--opponent-pool names two directories ({directory}, {path}); give one, and files")
            directory = path
            files.extend(checkpoints_in(path))
        elif path.is_file():
            files.append(path)
        elif path.suffix.lower() in CHECKPOINT_SUFFIXES:
            raise arena.ArenaError(f"--opponent-pool: no checkpoint file {path}")
        else:  # a directory that does not exist yet: this run's snapshots start it
            directory = _new_directory(path, directory)
    if Path(out).resolve() in {f.resolve() for f in files}:
        raise arena.ArenaError(f"--opponent-pool holds {out}, the file this run writes: give another --out")
    return directory, tuple(dict.fromkeys(files))


def _new_directory(path: Path, directory: Path | None) -> Path:
    if directory is not None:
        raise arena.ArenaError(f"--opponent-pool names two directories ({directory}, {path}); give one, and files")
    if not path.parent.is_dir():
        raise arena.ArenaError(f"--opponent-pool: {path} is neither a checkpoint file nor a directory "
                               f"(nor can it be made: no {path.parent})")
    return path


def plan_pool(text: str | None, out: str, episodes: int, snapshot_every: int, start: int = 0,
              resumed: Mapping[str, Any] | None = None) -> Pool:  # fmt: skip
    """Check the pool before training: its files exist, and none of the snapshots this run writes (from episode
    `start` on) is there already, unless it is the resumed run's own (`resumed`: its stored pool, see `resumed_files`)."""
    directory, given = parse_pool(text, out)
    target = Path(out)
    pool = Pool(directory or target.with_suffix(POOL_SUFFIX), given, target.stem, target.suffix)
    if pool.directory.exists() and not pool.directory.is_dir():
        raise arena.ArenaError(f"the snapshot pool {pool.directory} is a file, not a directory: give --opponent-pool DIR")
    mine = resumed_files(pool, resumed, episodes, snapshot_every)
    # A resumed run also writes a snapshot where it starts when it has no past version to play yet.
    written = [pool.snapshot_path(n) for n in sorted({*(n for n in snapshot_episodes(episodes, snapshot_every) if n >= start), start})]
    taken = [p for p in written if p.exists() and p.resolve() not in mine]
    if taken:
        raise arena.ArenaError(f"the pool {pool.directory} already holds {taken[0].name} (another run named {target.stem}): "
                               f"give another --out name or --opponent-pool directory")  # fmt: skip
    # A resumed run's own snapshots are not given opponents: it draws from them as it did before it stopped.
    return replace(pool, given=tuple(p for p in given if p.resolve() not in mine))


def resumed_files(pool: Pool, resumed: Mapping[str, Any] | None, episodes: int, snapshot_every: int) -> set[Path]:
    """The files a resumed run wrote into its pool (snapshots, and the copy of its file at the end), and, when this run
    writes into the same pool under the same name, the snapshots it is about to write again."""
    if not resumed:
        return set()
    mine = {Path(p).resolve() for p in [*resumed["own"], *([resumed["end"]] if resumed.get("end") else [])]}
    same = (Path(resumed["directory"]).resolve(), resumed["stem"], resumed["suffix"]) == (pool.directory.resolve(), pool.stem, pool.suffix)
    if same:
        mine |= {pool.snapshot_path(n).resolve() for n in snapshot_episodes(episodes, snapshot_every)}
    return mine


def pool_record(pool: Pool, own: list[Path], end: Path | None) -> dict[str, Any]:
    """What a training state stores of its pool (absolute paths, so a run resumed from elsewhere finds its files)."""
    return {"directory": str(pool.directory.resolve()), "stem": pool.stem, "suffix": pool.suffix,
            "own": [str(p.resolve()) for p in own], "end": str(end.resolve()) if end else None}  # fmt: skip


def load_own(resumed: Mapping[str, Any] | None, keep: int, game: arena.Game) -> list[tuple[Path, Values]]:
    """The last `keep` snapshots a resumed run wrote, read back as opponents."""
    if not resumed:
        return []
    paths = [Path(p) for p in resumed["own"]][-keep:]
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise arena.ArenaError(f"--resume: the run's self-play snapshot {missing[0]} is gone; it cannot go on as it would have")
    return [(p, file_values(p, game)) for p in paths]


def snapshot_episodes(episodes: int, every: int) -> list[int]:
    """After how many episodes the run writes a snapshot: 0, every, 2 * every, ..., and the end."""
    return sorted(set(range(0, episodes, every)) | {episodes})


def load_given(pool: Pool, game: arena.Game) -> list[Values]:
    """The given files as opponents, each checked against the game (ArenaError, one line, naming the file)."""
    return [file_values(path, game) for path in pool.given]
