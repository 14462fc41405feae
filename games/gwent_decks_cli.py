"""`arena evolve-decks`: the genetic algorithm of games.gwent_decks from the command line (added by the gwent_lite plugin)."""

from __future__ import annotations

from typing import Any

import click

from arena.executors import parse_workers
from arena.executors.local import LocalPool
from arena.output import print_table
from arena.plugins import CommandContext, command_db, command_registry, plugins_dir_option
from games.gwent_decks import EvolveConfig, evolve

DEFAULTS = EvolveConfig()


def _line(row: dict[str, Any], seconds: float, generations: int) -> str:
    bench = row["benchmark"]
    against = f", against the benchmark {bench['win_rate']:.3f}" if bench else ""
    return (f"generation {row['generation']}/{generations}: best {row['best_win_rate']:.3f}, survivors "
            f"{row['survivors_win_rate']:.3f}{against} ({seconds:.1f} s)")  # fmt: skip


@click.command("evolve-decks")
@click.option("--game", "game_spec", default=DEFAULTS.game, show_default=True, help="The game whose decks evolve (gwent_lite).")
@click.option("--agent", default=DEFAULTS.agent, show_default=True,
              help="The agent that plays every deck, in both seats: a spec (greedy, mcts:simulations=50, neural:checkpoint=FILE) "
                   "or a registered name.")
@click.option("--population", type=int, default=DEFAULTS.population, show_default=True, help="Decks in the pool.")
@click.option("--generations", type=int, default=DEFAULTS.generations, show_default=True)
@click.option("--games", type=int, default=DEFAULTS.games, show_default=True,
              help="Games each pair of decks plays per generation (even: seats swapped).")
@click.option("--survivors", type=int, default=DEFAULTS.survivors, show_default=True,
              help="Decks with the highest win rate kept for the next generation.")
@click.option("--offspring", type=int, default=DEFAULTS.offspring, show_default=True, help="Mutated copies of each survivor.")
@click.option("--mutation", type=float, default=DEFAULTS.mutation, show_default=True, help="Chance that a card of a copy mutates.")
@click.option("--sigma", type=float, default=DEFAULTS.sigma, show_default=True, help="Spread of a mutation's normal step.")
@click.option("--benchmark", type=int, default=DEFAULTS.benchmark, show_default=True, metavar="DECKS",
              help="Fixed random decks the best deck also plays each generation (0: none).")
@click.option("--seed", type=int, default=DEFAULTS.seed, show_default=True)
@click.option("--workers", default="1", show_default=True, help="Processes that play the games (a number or 'auto').")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The log: JSON Lines, one line per generation.")
@click.option("--db", "db_url", metavar="URL", help="Where an --agent given by name is registered (default $ARENA_DB, else ./arena.db).")
@plugins_dir_option
@click.pass_obj
def evolve_decks_command(ctx: CommandContext | None, game_spec: str, agent: str, population: int, generations: int, games: int,
                         survivors: int, offspring: int, mutation: float, sigma: float, benchmark: int, seed: int, workers: str,
                         out: str, db_url: str | None, plugins_dirs: tuple[str, ...]) -> None:  # fmt: skip
    """Evolve Gwent Lite decks by a genetic algorithm (report 003): every generation each deck plays every other, the
    best survive with mutated copies, random decks fill the pool. Prints the best deck as an agent spec."""
    registry, dirs = command_registry(ctx, plugins_dirs)
    config = EvolveConfig(agent=agent, population=population, generations=generations, games=games, survivors=survivors,
                          offspring=offspring, mutation=mutation, sigma=sigma, benchmark=benchmark, seed=seed, game=game_spec,
                          db=command_db(ctx, db_url))  # fmt: skip
    executor = LocalPool(parse_workers(workers))
    rows = evolve(config, registry, executor, out, lambda row, seconds: click.echo(_line(row, seconds, generations), err=True),
                  plugins_dirs=dirs)  # fmt: skip
    print_table(f"Deck evolution ({out})", ["generation", "best", "survivors", "benchmark", "best deck"],
                [[row["generation"], row["best_win_rate"], row["survivors_win_rate"],
                  row["benchmark"]["win_rate"] if row["benchmark"] else None, row["best"]["deck"]] for row in rows],
                note="win rates against the generation's pool (benchmark: the best deck against fixed random decks); "
                     "a draw is half")  # fmt: skip
    click.echo(f"best deck: {rows[-1]['best']['spec']}")
