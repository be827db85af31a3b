"""Compound and atom divergence of two distributions, and the incremental counts that let a split
search move examples between train and test without recomputing anything from all examples.

Divergence (Keysers et al. 2020): ``1 - C_alpha(P || Q)`` with the Chernoff coefficient
``C_alpha(P || Q) = sum_k p_k^alpha q_k^(1 - alpha)``, P the train and Q the test distribution.
Per feature kind the tracker keeps the raw counts of both sides and the running sum
``S = sum_k c1_k^alpha c2_k^(1 - alpha)``; since ``p_k = c1_k / N1``,
``C = S / (N1^alpha N2^(1 - alpha))``. Moving one example changes only its own keys.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

Features = Callable[[Any], "Iterable[str] | Mapping[str, int]"]


def as_counter(features: "Iterable[str] | Mapping[str, int]") -> Counter:
    return Counter(features) if not isinstance(features, Mapping) else Counter(dict(features))


def chernoff_coefficient(p_counts: Mapping[str, float], q_counts: Mapping[str, float], alpha: float) -> float:
    """``sum_k p_k^alpha q_k^(1-alpha)`` of the two count tables, each normalized to frequencies."""
    _check_alpha(alpha)
    n_p = sum(p_counts.values())
    n_q = sum(q_counts.values())
    if n_p <= 0 or n_q <= 0:
        return 0.0
    terms = ((p_counts[k] / n_p) ** alpha * (q_counts[k] / n_q) ** (1.0 - alpha)
             for k in p_counts.keys() & q_counts.keys() if p_counts[k] > 0 and q_counts[k] > 0)
    return math.fsum(terms)


def divergence(p_counts: Mapping[str, float], q_counts: Mapping[str, float], alpha: float) -> float:
    """``1 - C_alpha(P || Q)``: 0 for identical distributions, 1 for disjoint ones."""
    return 1.0 - chernoff_coefficient(p_counts, q_counts, alpha)


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")


# ---------------------------------------------------------------- incremental counts


@dataclass(frozen=True)
class FeatureIndex:
    """Features of every example as a sparse matrix: example ``e`` owns entries
    ``offsets[e]:offsets[e+1]`` of ``ids`` (feature numbers) and ``counts``."""

    keys: tuple[str, ...]
    offsets: np.ndarray  # (E + 1,) int64
    ids: np.ndarray  # (nnz,) int64
    counts: np.ndarray  # (nnz,) float64
    totals: np.ndarray  # (E,) float64, sum of the example's counts

    @classmethod
    def build(cls, examples: Sequence[Any], features_of: Features, min_examples: int = 1) -> "FeatureIndex":
        """``min_examples``: keys held by fewer examples of the pool are dropped (a key that a single
        example holds can never be on both sides, so it carries no train/test signal)."""
        features = [as_counter(features_of(example)) for example in examples]
        if min_examples > 1:
            held = Counter(key for counter in features for key, count in counter.items() if count > 0)
            features = [Counter({k: c for k, c in counter.items() if held[k] >= min_examples}) for counter in features]
        key_id: dict[str, int] = {}
        offsets, ids, counts = [0], [], []
        for counter in features:
            for key, count in counter.items():
                if count <= 0:
                    continue
                ids.append(key_id.setdefault(key, len(key_id)))
                counts.append(float(count))
            offsets.append(len(ids))
        off = np.asarray(offsets, dtype=np.int64)
        cnt = np.asarray(counts, dtype=np.float64)
        totals = np.bincount(np.repeat(np.arange(len(examples)), np.diff(off)), weights=cnt, minlength=len(examples))
        return cls(tuple(key_id), off, np.asarray(ids, dtype=np.int64), cnt, totals.astype(np.float64))

    def entries(self, examples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Entry positions of ``examples`` and, for each, the position of its example in ``examples``."""
        starts = self.offsets[examples]
        lens = self.offsets[examples + 1] - starts
        owner = np.repeat(np.arange(len(examples)), lens)
        first = np.cumsum(lens) - lens
        pos = np.arange(int(lens.sum())) - np.repeat(first, lens) + np.repeat(starts, lens)
        return pos, owner

    def holders(self) -> tuple[np.ndarray, np.ndarray]:
        """Inverted index: the examples holding key ``k`` are ``examples[starts[k]:starts[k+1]]``."""
        owner = np.repeat(np.arange(len(self.totals)), np.diff(self.offsets))
        order = np.argsort(self.ids, kind="stable")
        starts = np.searchsorted(self.ids[order], np.arange(len(self.keys) + 1))
        return starts.astype(np.int64), owner[order]

    def counter(self, example: int) -> Counter:
        lo, hi = self.offsets[example], self.offsets[example + 1]
        return Counter({self.keys[i]: c for i, c in zip(self.ids[lo:hi], self.counts[lo:hi])})


class DivergenceTracker:
    """Train/test counts of one feature kind and the running Chernoff sum, updated per move."""

    def __init__(self, index: FeatureIndex, in_test: np.ndarray, alpha: float):
        _check_alpha(alpha)
        self.index = index
        self.alpha = alpha
        n_keys = len(index.keys)
        self.train = np.zeros(n_keys)
        self.test = np.zeros(n_keys)
        owner_test = np.repeat(in_test, np.diff(index.offsets))
        np.add.at(self.test, index.ids[owner_test], index.counts[owner_test])
        np.add.at(self.train, index.ids[~owner_test], index.counts[~owner_test])
        self.n_train = float(self.train.sum())
        self.n_test = float(self.test.sum())
        self.term = self.train ** alpha * self.test ** (1.0 - alpha)
        self.total = math.fsum(self.term)

    def _coefficient(self, total, n_train, n_test):
        denom = np.power(n_train, self.alpha) * np.power(n_test, 1.0 - self.alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denom > 0, total / np.where(denom > 0, denom, 1.0), 0.0)

    def divergence(self) -> float:
        return float(1.0 - self._coefficient(self.total, self.n_train, self.n_test))

    def move(self, example: int, to_test: bool) -> None:
        """Move one example to the other side: O(keys of the example)."""
        lo, hi = self.index.offsets[example], self.index.offsets[example + 1]
        ids, counts = self.index.ids[lo:hi], self.index.counts[lo:hi]
        sign = 1.0 if to_test else -1.0
        self.train[ids] -= sign * counts
        self.test[ids] += sign * counts
        new_term = self.train[ids] ** self.alpha * self.test[ids] ** (1.0 - self.alpha)
        self.total += float(new_term.sum() - self.term[ids].sum())
        self.term[ids] = new_term
        moved = float(self.index.totals[example])
        self.n_train -= sign * moved
        self.n_test += sign * moved

    def divergence_after(self, examples: np.ndarray, to_test: bool) -> np.ndarray:
        """Divergence after moving each one of ``examples`` alone (vectorized, nothing is changed)."""
        pos, owner = self.index.entries(examples)
        ids, counts = self.index.ids[pos], self.index.counts[pos]
        sign = 1.0 if to_test else -1.0
        new_term = (self.train[ids] - sign * counts) ** self.alpha * (self.test[ids] + sign * counts) ** (1.0 - self.alpha)
        delta = np.bincount(owner, weights=new_term - self.term[ids], minlength=len(examples))
        moved = self.index.totals[examples]
        coef = self._coefficient(self.total + delta, self.n_train - sign * moved, self.n_test + sign * moved)
        return 1.0 - coef

    def _set_entries(self, sets: Sequence[np.ndarray]):
        """Per (set, key) cell: the set number, the key and the summed count of the set's members."""
        lens = np.asarray([len(members) for members in sets], dtype=np.int64)
        examples = np.concatenate(sets).astype(np.int64) if len(sets) else np.zeros(0, dtype=np.int64)
        group = np.repeat(np.arange(len(sets)), lens)
        pos, owner = self.index.entries(examples)
        n_keys = max(len(self.index.keys), 1)
        cell, inverse = np.unique(group[owner] * n_keys + self.index.ids[pos], return_inverse=True)
        counts = np.bincount(inverse, weights=self.index.counts[pos], minlength=len(cell))
        moved = np.bincount(group, weights=self.index.totals[examples], minlength=len(sets))
        return cell // n_keys, cell % n_keys, counts, moved

    def divergence_after_sets(self, sets: Sequence[np.ndarray], to_test: bool) -> np.ndarray:
        """Divergence after moving each set of examples (all its members together) alone: one
        vectorized pass over the members' keys; nothing is changed."""
        cell_group, ids, counts, moved = self._set_entries(sets)
        sign = 1.0 if to_test else -1.0
        new_term = np.maximum(self.train[ids] - sign * counts, 0.0) ** self.alpha \
            * np.maximum(self.test[ids] + sign * counts, 0.0) ** (1.0 - self.alpha)
        delta = np.bincount(cell_group, weights=new_term - self.term[ids], minlength=len(sets))
        coef = self._coefficient(self.total + delta, self.n_train - sign * moved, self.n_test + sign * moved)
        return 1.0 - coef

    def sets_would_empty_train(self, sets: Sequence[np.ndarray]) -> np.ndarray:
        """For sets of train examples: True where moving the whole set to test leaves a key absent from train."""
        cell_group, ids, counts, _ = self._set_entries(sets)
        lost = (self.train[ids] - counts) < 0.5
        return np.bincount(cell_group, weights=lost.astype(np.float64), minlength=len(sets)) > 0

    def would_empty_train(self, examples: np.ndarray) -> np.ndarray:
        """For train examples: True where moving it to test leaves one of its keys absent from train."""
        pos, owner = self.index.entries(examples)
        lost = (self.train[self.index.ids[pos]] - self.index.counts[pos]) < 0.5
        return np.bincount(owner, weights=lost.astype(np.float64), minlength=len(examples)) > 0

    def missing_from_train(self) -> list[str]:
        return [self.index.keys[i] for i in np.flatnonzero((self.test > 0) & (self.train < 0.5))]

    def recompute(self) -> None:
        """Exact sum from the counts (kills floating-point drift; O(all keys))."""
        self.term = self.train ** self.alpha * self.test ** (1.0 - self.alpha)
        self.total = math.fsum(self.term)
