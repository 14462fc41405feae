"""The sequential probability ratio test "is B stronger than A?": pure functions of the result counts.

The test is a generalized SPRT (GSPRT) as Fishtest and fastchess run it: the results are counted as
a trinomial (losses, draws, wins of B, one per game) or, when games come in pairs that share an
opening with the seats swapped, as a pentanomial over pairs (B's score in the pair: 0, 0.5, 1,
1.5, 2, counted as LL, LD, WL+DD, WD, WW). For each hypothesis the maximum-likelihood distribution
of those categories under the hypothesis' expected score is found (a secular equation, solved
by Brent's method), and the log-likelihood ratio is the sum over the observed results of
log(p1 / p0). Bounds are Wald's: log(beta / (1 - alpha)) and log((1 - beta) / alpha).

Models: `logistic` (default) tests logistic Elo, the Elo of the leaderboard: H0 says B's expected
score is 1 / (1 + 10^(-elo0/400)), H1 the same with elo1. `normalized` tests normalized Elo
(Fishtest's default), a t-value of the score, so a bound means the same effort at any draw rate.

Nothing is stored but the counts: the state of a test (LLR, decision) is recomputed from them, so
repeating the computation is always safe (as Fishtest's update_SPRT is).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist

from arena.errors import ArenaError

MODELS = ("logistic", "normalized")
#: A category never seen gets this count, so that the maximum-likelihood distributions stay defined (as Fishtest).
REGULARIZE = 1e-3
#: The smallest alpha or beta: a bound of about +-21 (tiny rates such as 1e-320 would make it infinite).
MIN_ERROR_RATE = 1e-9
#: Normalized Elo per unit of t-value (Fishtest's nelo_divided_by_nt).
NELO_PER_T = 800.0 / math.log(10.0)
H0, H1 = "H0", "H1"


@dataclass(frozen=True)
class SprtParams:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "logistic"

    @property
    def lower_bound(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper_bound(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    def to_json(self) -> dict[str, float | str]:
        return asdict(self)


def parse_sprt(text: str) -> SprtParams:
    """`elo0=0,elo1=10[,alpha=0.05,beta=0.05,model=logistic]` (the --sprt option)."""
    values: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in ("elo0", "elo1", "alpha", "beta", "model"):
            raise ArenaError(f"--sprt takes elo0=E0,elo1=E1[,alpha=A,beta=B,model=logistic|normalized], not '{item}'")
        if key in values:
            raise ArenaError(f"--sprt {key} given twice")
        values[key] = value.strip()
    if "elo0" not in values or "elo1" not in values:
        raise ArenaError("--sprt needs elo0 and elo1, e.g. --sprt elo0=0,elo1=10")
    numbers = {}
    for key in ("elo0", "elo1", "alpha", "beta"):
        if key in values:
            try:
                numbers[key] = float(values[key])
            except ValueError:
                raise ArenaError(f"--sprt {key} must be a number, got '{values[key]}'") from None
            if not math.isfinite(numbers[key]):
                raise ArenaError(f"--sprt {key} must be finite, got '{values[key]}'")
    params = SprtParams(**numbers, model=values.get("model", "logistic"))  # type: ignore[arg-type]
    check(params)
    return params


#: The largest |elo0|, |elo1| of each model: logistic, an expected score of 0.99999 (at about 6,400 Elo it rounds to 1
#: and no test exists); normalized, 200 (from about 240 the MLE of Fishtest's method has no solution: (mean - 1/2) / sd
#: that far from 0 is out of reach from its start).
MAX_ELO = {"logistic": 2000.0, "normalized": 200.0}


def check(params: SprtParams) -> None:
    if params.model not in MODELS:
        raise ArenaError(f"--sprt model must be one of {', '.join(MODELS)}, got '{params.model}'")
    limit = MAX_ELO[params.model]
    for name, value in (("elo0", params.elo0), ("elo1", params.elo1)):
        if abs(value) > limit:
            raise ArenaError(f"--sprt {name} must be between -{limit:g} and {limit:g} ({params.model} Elo), got {value:g}")
    if not params.elo0 < params.elo1:
        raise ArenaError(f"--sprt needs elo0 < elo1, got {params.elo0:g} and {params.elo1:g}")
    for name, value in (("alpha", params.alpha), ("beta", params.beta)):
        if not MIN_ERROR_RATE <= value < 0.5:
            raise ArenaError(f"--sprt {name} must be at least {MIN_ERROR_RATE:g} and below 0.5, got {value:g}")


def logistic(elo: float) -> float:
    """Expected score at a logistic Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def _pdf(counts: Sequence[float]) -> tuple[float, list[tuple[float, float]]]:
    """(N, [(score, frequency)]): scores 0..1 in equal steps (per game, or per game of a pair)."""
    regular = [c if c > 0 else REGULARIZE for c in counts]
    total = sum(regular)
    last = len(counts) - 1
    return total, [(i / last, c / total) for i, c in enumerate(regular)]


def _mean_var(pdf: Sequence[tuple[float, float]]) -> tuple[float, float]:
    mean = sum(p * a for a, p in pdf)
    return mean, sum(p * (a - mean) ** 2 for a, p in pdf)


def _secular(pdf: Sequence[tuple[float, float]]) -> float:
    """The root x of f(x) = sum p_i a_i / (1 + x a_i) = 0 between the poles -1/max(a) and -1/min(a).

    f decreases strictly there (f' = -sum p_i a_i^2 / (1 + x a_i)^2), so Newton's method kept
    inside a shrinking bracket (bisection when a step would leave it) finds the one root; about 50
    times faster than scipy's brentq on a Python callable, which matters when simulating many tests.
    """
    low_a, high_a = min(a for a, _ in pdf), max(a for a, _ in pdf)
    if low_a * high_a >= 0:
        raise ValueError("the scores must straddle the hypothesis")
    epsilon = 1e-9
    low, high = -1.0 / high_a + epsilon, -1.0 / low_a - epsilon  # f(low) > 0 > f(high)
    x = 0.0
    for _ in range(200):
        value = slope = 0.0
        for a, p in pdf:
            term = 1.0 / (1.0 + x * a)
            value += p * a * term
            slope -= p * a * a * term * term
        if value > 0:
            low = x
        else:
            high = x
        if abs(value) < 1e-15 or high - low < 1e-15:
            break
        step = x - value / slope
        x = step if low < step < high else (low + high) / 2.0
    return x


def _mle_expected(pdf: Sequence[tuple[float, float]], score: float) -> list[float]:
    """The distribution over the same categories closest (maximum likelihood) to `pdf` with expected score `score`."""
    shifted = [(a - score, p) for a, p in pdf]
    x = _secular(shifted)
    return [p / (1.0 + x * a) for a, p in shifted]


def _mle_t_value(pdf: Sequence[tuple[float, float]], t: float, reference: float = 0.5) -> list[float]:
    """The maximum-likelihood distribution with (mean - reference) / sd = t (Fishtest's MLE_t_value)."""
    probabilities = [1.0 / len(pdf)] * len(pdf)
    for _ in range(10):
        mean, var = _mean_var([(a, q) for (a, _), q in zip(pdf, probabilities)])
        sd = math.sqrt(var)
        shifted = [(a - reference - t * sd * (1.0 + ((mean - a) / sd) ** 2) / 2.0, p) for a, p in pdf]
        x = _secular(shifted)
        updated = [p / (1.0 + x * a) for a, p in shifted]
        converged = max(abs(u - q) for u, q in zip(updated, probabilities)) < 1e-9
        probabilities = updated
        if converged:
            break
    return probabilities


def llr(counts: Sequence[float], params: SprtParams) -> float:
    """The log-likelihood ratio of H1 against H0 for trinomial [L, D, W] or pentanomial [LL, LD, WL+DD, WD, WW] counts."""
    if len(counts) not in (3, 5):
        raise ValueError("counts must be trinomial (3) or pentanomial (5)")
    if sum(counts) <= 0:
        return 0.0
    total, pdf = _pdf(counts)
    if params.model == "logistic":
        p0, p1 = (_mle_expected(pdf, logistic(elo)) for elo in (params.elo0, params.elo1))
    else:
        scale = 1.0 if len(counts) == 3 else math.sqrt(2.0)  # a pair's score has the spread of two games
        p0, p1 = (_mle_t_value(pdf, elo / NELO_PER_T * scale) for elo in (params.elo0, params.elo1))
    return total * sum(p * (math.log(b) - math.log(a)) for (_, p), a, b in zip(pdf, p0, p1))


def decision(value: float, params: SprtParams) -> str | None:
    """H1 (B is stronger by elo1) or H0 (not by more than elo0) once the LLR leaves its bounds, else None."""
    if value >= params.upper_bound:
        return H1
    if value <= params.lower_bound:
        return H0
    return None


def trinomial(scores: Iterable[float]) -> list[int]:
    """[losses, draws, wins] of B from its score in each game (0, 0.5 or 1)."""
    counts = [0, 0, 0]
    for score in scores:
        counts[round(score * 2)] += 1
    return counts


def pentanomial(pair_scores: Iterable[float]) -> list[int]:
    """[LL, LD, WL+DD, WD, WW] from B's total score in each pair (0 to 2 in halves)."""
    counts = [0, 0, 0, 0, 0]
    for score in pair_scores:
        counts[round(score * 2)] += 1
    return counts


def elo_interval(counts: Sequence[float]) -> tuple[float, float, float, float]:
    """B's logistic Elo difference, its 95% interval and the likelihood of superiority (LOS), from the counts.

    The estimate is the mean score of the counts as they are (as fastchess's; infinite when B won, or lost,
    everything). The interval is the score (Wilson) interval of that mean: the expected scores mu that a score test
    at level 5% keeps, N (mean - mu)^2 <= z^2 Var(mu), Var(mu) the variance of a result under the distribution over
    the same categories likeliest to have given the counts with expected score mu (the one the test's LLR uses; per
    game, or per pair, which keeps the correlation an opening brings). For wins and losses alone it is Wilson's
    interval for a proportion: the estimate always inside it, a finite end wherever the record has a result on that
    side (49 wins and a loss of 50: +372 .. +980), an infinite one where it has none (50 of 50: +446 .. no upper
    limit; the exact binomial bound is +446), and a perfect or all-drawn record keeps a width a Wald interval on
    the counts would shrink to nothing (30 draws of 30: +-40 Elo, not +-1). With many results it is fastchess's
    interval. LOS is the same test's probability that the true score exceeds one half: it is above 97.5% exactly
    when the interval's lower end is above 0 (one win of one game is 84%, not the 99% the bare mean gave)."""
    total = float(sum(counts))
    if total <= 0:
        return 0.0, -math.inf, math.inf, 0.5
    last = len(counts) - 1
    mean = sum(i / last * c for i, c in enumerate(counts)) / total
    _, pdf = _pdf(counts)
    z = NormalDist().inv_cdf(0.975)

    def variance(score: float) -> float:
        likeliest = _mle_expected(pdf, score)
        return _mean_var([(a, p) for (a, _), p in zip(pdf, likeliest)])[1]

    def outside(score: float) -> bool:
        return total * (mean - score) ** 2 > z * z * variance(score)

    def end(extreme: float) -> float:
        """The first score from the mean towards `extreme` (0 or 1) that the test rejects: a scan, then bisection."""
        steps = 64
        inside = mean
        for k in range(1, steps):
            score = mean + (extreme - mean) * k / steps
            if outside(score):
                for _ in range(50):
                    middle = (inside + score) / 2.0
                    inside, score = (inside, middle) if outside(middle) else (middle, score)
                return (inside + score) / 2.0
            inside = score
        return extreme  # every score up to the extreme is kept (the record has no result on that side)

    low = end(0.0) if mean > 0 else 0.0
    high = end(1.0) if mean < 1 else 1.0
    los = NormalDist().cdf((mean - 0.5) * math.sqrt(total / variance(0.5)))
    return _elo(mean), _elo(low), _elo(high), los


def _elo(score: float) -> float:
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def summary(params: SprtParams, counts: Sequence[int], test: str, base: str, finished: bool = False) -> dict[str, object]:
    """Everything `arena sprt` reports (the same dict for the table and --json)."""
    value = llr(counts, params)
    verdict = decision(value, params)
    elo, low, high, los = elo_interval(counts)
    return {
        "test": test, "base": base, **params.to_json(),
        "lower_bound": params.lower_bound, "upper_bound": params.upper_bound, "llr": value,
        "decision": verdict if verdict else ("inconclusive" if finished else "continue"),
        "statistic": "pentanomial" if len(counts) == 5 else "trinomial",
        "counts": list(counts), "pairs" if len(counts) == 5 else "games": int(sum(counts)),
        "elo": _finite(elo + 0.0), "elo_low": _finite(low), "elo_high": _finite(high), "los": los,  # (+ 0.0: no -0.0)
    }  # fmt: skip


def _finite(value: float) -> float | None:
    """None for an infinite end of the interval (B won, or lost, about everything): JSON has no infinity."""
    return value if math.isfinite(value) else None
