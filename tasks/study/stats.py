"""Statistics a sceptic asks for: mean and sample standard deviation over seeds, and a paired bootstrap
interval of a difference between two arms evaluated on the same test problems with the same seeds."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

FEW_SEEDS = 3  # a study of fewer seeds gets a warning: its intervals resample test problems, not seeds


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 with one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


@dataclass(frozen=True)
class Interval:
    difference: float  # mean over seeds of (accuracy of a - accuracy of b)
    low: float  # 2.5th percentile of the bootstrap distribution
    high: float  # 97.5th
    seeds: int
    problems: int
    resamples: int

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def paired_bootstrap(a: Mapping[int, Mapping[str, bool]], b: Mapping[int, Mapping[str, bool]],
                     resamples: int = 2000, seed: int = 0) -> Interval:
    """95% interval of mean_seeds(acc_a - acc_b). ``a`` and ``b`` map seed -> problem id -> correct;
    only seeds and problems present in both are used. Each resample draws seeds and then test problems
    with replacement, the same draw for both arms (the pairing)."""
    seeds = sorted(set(a) & set(b))
    if not seeds:
        raise ValueError("no seed evaluated in both arms")
    problems = sorted(set.intersection(*(set(a[s]) & set(b[s]) for s in seeds)))
    if not problems:
        raise ValueError("no test problem evaluated in both arms")
    import numpy as np

    diff = np.array([[int(a[s][p]) - int(b[s][p]) for p in problems] for s in seeds], dtype=np.float64)  # (S, P)
    point = float(diff.mean(axis=1).mean())
    rng = np.random.default_rng(seed)
    n_s, n_p = diff.shape
    rows = rng.integers(0, n_s, size=(resamples, n_s))  # (R, S) seeds drawn
    cols = rng.integers(0, n_p, size=(resamples, n_s, n_p))  # (R, S, P) problems drawn for each
    draws = diff[rows[:, :, None], cols].mean(axis=2).mean(axis=1)  # (R,)
    low, high = np.percentile(draws, [2.5, 97.5])
    return Interval(point, float(low), float(high), n_s, n_p, resamples)


def paired_bootstrap_per_seed(a: Mapping[int, Mapping[str, bool]], b: Mapping[int, Mapping[str, bool]],
                              resamples: int = 2000, seed: int = 0) -> Interval:
    """As :func:`paired_bootstrap`, for runs whose seed also draws the test side (a seeded split): each
    seed's difference is taken over its own test problems (those both runs of that seed evaluated),
    and a resample draws seeds, then problems within each drawn seed, the same problems for both."""
    seeds = sorted(set(a) & set(b))
    if not seeds:
        raise ValueError("no seed evaluated in both arms")
    import numpy as np

    rng = np.random.default_rng(seed)
    per_seed, points, total = [], [], 0
    for s in seeds:
        problems = sorted(set(a[s]) & set(b[s]))
        if not problems:
            raise ValueError(f"seed {s}: no test problem evaluated in both arms")
        diff = np.array([int(a[s][p]) - int(b[s][p]) for p in problems], dtype=np.float64)
        points.append(diff.mean())
        total += len(problems)
        # a problem resample of this seed for every resample and every position a seed is drawn into
        per_seed.append(diff[rng.integers(0, len(diff), size=(resamples, len(seeds), len(diff)))].mean(axis=2))
    boot = np.stack(per_seed)  # (S, R, S positions)
    rows = rng.integers(0, len(seeds), size=(resamples, len(seeds)))  # seeds drawn
    draws = boot[rows, np.arange(resamples)[:, None], np.arange(len(seeds))[None, :]].mean(axis=1)
    low, high = np.percentile(draws, [2.5, 97.5])
    return Interval(float(np.mean(points)), float(low), float(high), len(seeds), total, resamples)


def format_values(values: Sequence[float]) -> str:
    """Mean ± std over seeds and how many, for a report cell ("-" for none)."""
    if not values:
        return "-"
    mean, std = mean_std(values)
    return f"{mean:.3f} ± {std:.3f} (n={len(values)})"


def format_interval(iv: Interval | None) -> str:
    """A paired difference with its interval, marked when the interval includes 0."""
    if iv is None:
        return "-"
    mark = "" if iv.excludes_zero else ", includes 0"
    return f"{iv.difference:+.3f} [{iv.low:+.3f}, {iv.high:+.3f}{mark}]"
