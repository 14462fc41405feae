"""Seeds derived from seeds: stable across runs, platforms and Python versions."""

import hashlib


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts; `derive_seed(tournament_seed, match_index)` seeds one match."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1
