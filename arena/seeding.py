"""Seeds derived from seeds: stable across runs, platforms and Python versions."""

import hashlib


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts; `derive_seed(tournament_seed, match_index)` seeds one match."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def game_seed(game: object, match_seed: int, secret: str | None) -> int:
    """The seed of a game's own chance in one match (the deal). For a game of hidden information it mixes in the
    tournament's secret, so that nothing an agent knows (the tournament seed, the match index, its own seed)
    predicts the deal; without a secret (tournaments from before it existed) and for perfect information
    it is the match seed, as it always was."""
    info = getattr(game, "info", None)
    if secret is None or getattr(info, "perfect_information", True):
        return match_seed
    return derive_seed(match_seed, "game", secret)
