"""95% intervals: Wilson for a proportion, a clustered percentile bootstrap for the rest.

Pure functions, no I/O. The bootstrap resamples *clusters* (in calibration: gold
rows, since the pairs written about one gold row are not independent) with
replacement, recomputes the statistic from the summed counts, and takes the 2.5th
and 97.5th percentiles. Resamples where the statistic is undefined (a zero
denominator; for kappa, also a resample without pairs of both labels) are dropped;
the interval is None when fewer than half remain.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

Z_95 = 1.959963984540054  # the 97.5th percentile of the standard normal
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261203


@dataclass(frozen=True)
class Estimate:
    """A figure and its 95% interval; ``value`` is None when the figure is undefined (0/0)."""

    value: float | None
    low: float | None
    high: float | None


def wilson(successes: int, n: int, z: float = Z_95) -> Estimate:
    """The share ``successes / n`` with its Wilson score interval (undefined when n is 0)."""
    if n == 0:
        return Estimate(None, None, None)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half_width = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Estimate(p, max(0.0, centre - half_width), min(1.0, centre + half_width))


Counts = tuple[int, int, int, int]  # true positives, false negatives, true negatives, false positives
Statistic = Callable[
    ["np.ndarray"], "np.ndarray"
]  # (resamples, 4) summed counts -> (resamples,) values, NaN = undefined


def cluster_bootstrap(
    clusters: Sequence[Counts],
    statistic: Statistic,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float | None, float | None]:
    """The percentile interval of ``statistic`` over resamples of whole clusters (seeded)."""
    import numpy as np  # imported when used: the scoring path never needs it

    if not clusters:
        return None, None
    counts = np.asarray(clusters, dtype=np.int64)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(counts), size=(resamples, len(counts)))
    values = statistic(counts[draws].sum(axis=1))
    values = values[~np.isnan(values)]
    if len(values) < resamples / 2:
        return None, None
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    import numpy as np

    out = np.full(numerator.shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def precision_of(summed: np.ndarray) -> np.ndarray:
    tp, _, _, fp = summed.T
    return _ratio(tp.astype(float), (tp + fp).astype(float))


def f1_of(summed: np.ndarray) -> np.ndarray:
    tp, fn, _, fp = summed.T
    return _ratio(2.0 * tp, (2 * tp + fp + fn).astype(float))


def kappa_of(summed: np.ndarray) -> np.ndarray:
    import numpy as np

    tp, fn, tn, fp = (column.astype(float) for column in summed.T)
    n = tp + fn + tn + fp
    observed = _ratio(tp + tn, n)
    chance = _ratio((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn), n * n)
    kappa = _ratio(observed - chance, 1.0 - chance)
    kappa[(tp + fn == 0) | (tn + fp == 0)] = np.nan  # a resample with one label only says nothing of agreement
    return kappa


def point(statistic: Statistic, counts: Counts) -> float | None:
    """The statistic on the whole sample's counts (None when undefined)."""
    import numpy as np

    value = float(statistic(np.asarray([counts], dtype=np.int64))[0])
    return None if math.isnan(value) else value
