"""Distribution-based compositional assessment (DBCA): the greedy compositional split and the I.I.D. split.

Generic on purpose (like google-research/language nqg's split utilities): what an atom or a compound
is comes in as two functions, ``atoms_of(example)`` and ``compounds_of(example)``, each returning an
iterable of strings (repeats count) or a mapping string -> count. The MWP definitions live in
:mod:`tasks.dbca.atoms`, the divergences and their incremental trackers in :mod:`tasks.dbca.divergence`.

Divergence (Keysers et al. 2020): ``1 - C_alpha(P || Q)`` with the Chernoff coefficient
``C_alpha(P || Q) = sum_k p_k^alpha q_k^(1 - alpha)``, P the train and Q the test distribution.

The greedy split keeps, per feature kind, the raw counts of both sides and the running sum
``S = sum_k c1_k^alpha c2_k^(1 - alpha)``; since ``p_k = c1_k / N1``,
``C = S / (N1^alpha N2^(1 - alpha))``. Moving one example changes only its own keys, so a move
costs O(keys of the example) and scoring a batch of candidate moves (single examples, or sets of
examples moved together) is one vectorized pass over their keys; nothing is recomputed from all
examples.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from tasks.dbca.divergence import DivergenceTracker, FeatureIndex, Features, as_counter, divergence

__all__ = ["SplitConfig", "SplitResult", "Snapshot", "greedy_split", "iid_split", "measure_divergences",
           "random_assignment"]

# ---------------------------------------------------------------- splits


SPLIT_METHODS = ("comdiv", "iid")  # maximum compound divergence (DBCA), or a random split measured the same way

@dataclass(frozen=True)
class SplitConfig:
    test_fraction: float = 0.2  # share of the pool that goes to test
    seed: int = 0  # seeds the initial random split and the candidate sampling
    atom_alpha: float = 0.5  # Chernoff alpha of the atom divergence (CFQ: 0.5)
    compound_alpha: float = 0.1  # Chernoff alpha of the compound divergence (CFQ: 0.1)
    max_atom_divergence: float = 0.02  # a swap may not push the atom divergence above this
    target_divergence: float | None = None  # stop once the compound divergence reaches it
    snapshot_divergences: tuple[float, ...] = ()  # also record the split when each is first reached
    max_iterations: int = 100_000  # budget of swap attempts
    candidates: int = 0  # examples scored per side and iteration (0 = all; a failed sample rescans all)
    tries: int = 100  # best first moves tried before a swap attempt counts as no improvement
    atom_slack: float = 1.5  # the first move of a swap may reach this times the atom bound
    repair: bool = True  # when stuck, try a swap that lowers DBCA^a at no cost in DBCA^c, then go on
    min_compound_examples: int = 2  # compounds held by fewer examples of the pool are left out
    group_moves: bool = True  # when stuck, move all train holders of one compound to test at once
    group_tries: int = 10  # compounds whose group move is tried before giving up
    max_group_share: float = 0.1  # a group move moves at most this share of the test size
    group_pool: int = 0  # test examples sampled as back-move candidates of a group move (0 = all)
    progress: bool = True  # tqdm bar on stderr


@dataclass(frozen=True)
class Snapshot:
    target: float  # the compound divergence asked for
    test: tuple[int, ...]  # example indices on the test side at that moment
    atom_divergence: float
    compound_divergence: float
    swaps: int


@dataclass(frozen=True)
class SplitResult:
    train: tuple[int, ...]  # example indices, ascending
    test: tuple[int, ...]
    atom_divergence: float
    compound_divergence: float
    initial_compound_divergence: float  # of the random start, after atom balancing
    iterations: int
    swaps: int
    stop_reason: str  # "target", "no_improvement", "iterations" or "random" (the I.I.D. split)
    snapshots: tuple[Snapshot, ...] = field(default=())
    repairs: int = 0  # swaps among ``swaps`` that lowered DBCA^a at no DBCA^c cost
    group_moves: int = 0  # swaps among ``swaps`` that moved all train holders of a compound at once


def random_assignment(n: int, test_fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of the test side: exactly ``round(n * test_fraction)`` examples, seeded."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must lie strictly between 0 and 1, got {test_fraction}")
    n_test = int(round(n * test_fraction))
    if n_test < 1 or n_test >= n:
        raise ValueError(f"a pool of {n} examples cannot be split {1 - test_fraction:.0%}/{test_fraction:.0%}")
    in_test = np.zeros(n, dtype=bool)
    in_test[np.random.default_rng(seed).permutation(n)[:n_test]] = True
    return in_test


def measure_divergences(examples: Sequence[Any], train: Iterable[int], test: Iterable[int], atoms_of: Features,
                        compounds_of: Features, atom_alpha: float = 0.5, compound_alpha: float = 0.1,
                        min_compound_examples: int = 1) -> tuple[float, float]:
    """(atom divergence, compound divergence) of a split, computed from scratch. Compounds held by
    fewer than ``min_compound_examples`` of ``examples`` are left out (as in :class:`SplitConfig`)."""
    compounds = [as_counter(compounds_of(e)) for e in examples]
    if min_compound_examples > 1:
        held = Counter(key for counter in compounds for key, count in counter.items() if count > 0)
        compounds = [Counter({k: c for k, c in counter.items() if held[k] >= min_compound_examples})
                     for counter in compounds]

    def total(indices, counters):
        out: Counter = Counter()
        for i in indices:
            out.update(counters[i])
        return out
    atoms = [as_counter(atoms_of(e)) for e in examples]
    train, test = list(train), list(test)
    return (divergence(total(train, atoms), total(test, atoms), atom_alpha),
            divergence(total(train, compounds), total(test, compounds), compound_alpha))


def iid_split(examples: Sequence[Any], atoms_of: Features, compounds_of: Features, config: SplitConfig = SplitConfig()) -> SplitResult:
    """The I.I.D. split: the seeded random split at the same sizes, measured."""
    in_test = random_assignment(len(examples), config.test_fraction, config.seed)
    train, test = tuple(np.flatnonzero(~in_test).tolist()), tuple(np.flatnonzero(in_test).tolist())
    a, c = measure_divergences(examples, train, test, atoms_of, compounds_of, config.atom_alpha, config.compound_alpha,
                               config.min_compound_examples)
    return SplitResult(train, test, a, c, c, 0, 0, "random")


class _Split:
    """Both trackers and the side mask, moved together."""

    def __init__(self, atoms: DivergenceTracker, compounds: DivergenceTracker, in_test: np.ndarray):
        self.atoms, self.compounds, self.in_test = atoms, compounds, in_test

    def move(self, example: int, to_test: bool) -> None:
        self.atoms.move(example, to_test)
        self.compounds.move(example, to_test)
        self.in_test[example] = to_test

    def balance_atoms(self, rng: np.random.Generator) -> None:
        """Swap until every atom seen in test is also seen in train (nqg's balance step)."""
        index = self.atoms.index
        owner = np.repeat(np.arange(len(self.in_test)), np.diff(index.offsets))
        for _ in range(len(self.in_test)):
            missing = np.flatnonzero((self.atoms.test > 0) & (self.atoms.train < 0.5))
            if not len(missing):
                return
            holders = owner[index.ids == missing[0]]
            incoming = int(holders[self.in_test[holders]][0])
            self.move(incoming, to_test=False)
            train = rng.permutation(np.flatnonzero(~self.in_test))
            safe = train[~self.atoms.would_empty_train(train) & (train != incoming)]
            if not len(safe):
                raise ValueError(f"cannot keep atom {index.keys[missing[0]]!r} in train: no train example can leave")
            self.move(int(safe[0]), to_test=True)
        raise ValueError(f"atoms still missing from train: {self.atoms.missing_from_train()[:10]}")

    def find_swap(self, to_test: np.ndarray, to_train: np.ndarray, atom_bound: float, tries: int, slack: float):
        """Best train->test move, then the best test->train move given it; kept only when the pair
        raises the compound divergence and ends within the atom bound. The first move may overshoot
        the bound by ``slack`` times (the second can bring it back); the ``tries`` best are tried."""
        before = self.compounds.divergence()
        bound = max(atom_bound, self.atoms.divergence())  # never worse than now if already above
        c_div = self.compounds.divergence_after(to_test, True)
        ok = (self.atoms.divergence_after(to_test, True) <= bound * slack) & ~self.atoms.would_empty_train(to_test)
        order = np.argsort(-np.where(ok, c_div, -np.inf), kind="stable")[:tries]
        for first in to_test[order[ok[order]]]:
            self.move(int(first), to_test=True)
            c_back = self.compounds.divergence_after(to_train, False)
            a_back = self.atoms.divergence_after(to_train, False)
            ok_back = (a_back <= bound) & (c_back > before + 1e-12)
            if ok_back.any():
                j = int(np.argmax(np.where(ok_back, c_back, -np.inf)))
                self.move(int(to_train[j]), to_test=False)
                return int(first), int(to_train[j])
            self.move(int(first), to_test=False)
        return None

    def find_group_swap(self, holders: tuple[np.ndarray, np.ndarray], atom_bound: float, tries: int,
                        max_group: int, pool_size: int, rng: np.random.Generator):
        """Move every train holder of one compound to test at once, then as many test examples back
        to train, one at a time: while the atom divergence is above the bound the one that lowers it
        most, else the one that raises the compound divergence most within the bound. Kept only when
        the compound divergence rose and the atom divergence ends within the bound.

        Why: with alpha = 0.1 a compound shared by train and test stops counting as shared only when
        its last train holder leaves (``p^0.1`` falls steeply near 0 only), so moving its holders one by
        one lowers the compound divergence at every step; single swaps never take that road. Candidate
        compounds are ranked by the compound divergence right after their holders move; the ``tries``
        best are tried. Returns the number of examples moved each way, or None."""
        starts, examples = holders
        before_c = self.compounds.divergence()
        bound = max(atom_bound, self.atoms.divergence())
        in_train = ~self.in_test[examples]
        n_train = np.add.reduceat(in_train.astype(np.int64), starts[:-1]) if len(examples) else np.zeros(0)
        keys = np.flatnonzero((n_train >= 2) & (n_train <= max_group))
        if not len(keys):
            return None
        sets = [examples[starts[k]:starts[k + 1]][in_train[starts[k]:starts[k + 1]]] for k in keys]
        ok = ~self.atoms.sets_would_empty_train(sets)
        score = np.where(ok, self.compounds.divergence_after_sets(sets, True), -np.inf)
        for g in np.argsort(-score, kind="stable")[:tries]:
            if not ok[g]:
                break
            members = sets[g]
            for e in members:
                self.move(int(e), to_test=True)
            pool = np.setdiff1d(np.flatnonzero(self.in_test), members)
            if pool_size and len(pool) > max(pool_size, 2 * len(members)):
                pool = np.sort(rng.choice(pool, size=max(pool_size, 2 * len(members)), replace=False))
            back = []
            for _ in range(len(members)):
                a_after = self.atoms.divergence_after(pool, False)
                if self.atoms.divergence() > bound:
                    j = int(np.argmin(a_after))
                else:
                    fits = a_after <= bound
                    j = int(np.argmax(np.where(fits, self.compounds.divergence_after(pool, False), -np.inf))) \
                        if fits.any() else int(np.argmin(a_after))
                self.move(int(pool[j]), to_test=False)
                back.append(int(pool[j]))
                pool = np.delete(pool, j)
            if self.compounds.divergence() > before_c + 1e-12 and self.atoms.divergence() <= bound + 1e-12:
                return len(members)
            for e in back:
                self.move(e, to_test=True)
            for e in members:
                self.move(int(e), to_test=False)
        return None

    def find_repair(self, to_test: np.ndarray, to_train: np.ndarray):
        """A swap that lowers the atom divergence without lowering the compound divergence: frees
        atom budget when no divergence-raising swap fits under the bound."""
        before_c, before_a = self.compounds.divergence(), self.atoms.divergence()
        a_div = self.atoms.divergence_after(to_test, True)
        ok = (self.compounds.divergence_after(to_test, True) >= before_c - 1e-12) & ~self.atoms.would_empty_train(to_test)
        if not ok.any():
            return None
        first = int(to_test[int(np.argmin(np.where(ok, a_div, np.inf)))])
        self.move(first, to_test=True)
        a_back = self.atoms.divergence_after(to_train, False)
        ok_back = self.compounds.divergence_after(to_train, False) >= before_c - 1e-12
        if ok_back.any():
            j = int(np.argmin(np.where(ok_back, a_back, np.inf)))
            if a_back[j] < before_a - 1e-6:
                self.move(int(to_train[j]), to_test=False)
                return first, int(to_train[j])
        self.move(first, to_test=False)
        return None


def greedy_split(examples: Sequence[Any], atoms_of: Features, compounds_of: Features,
                 config: SplitConfig = SplitConfig(), tracker: type = DivergenceTracker) -> SplitResult:
    """Maximize the compound divergence under the atom-divergence bound by swapping examples
    between the sides of a seeded random split (sizes stay fixed). Deterministic by seed.

    Each iteration tries, in order: a single swap that raises DBCA^c within the bound (sampled
    candidates, then all); a repair swap that lowers DBCA^a at no DBCA^c cost; a group move (all
    train holders of one compound to test, then as many back; :meth:`_Split.find_group_swap`).
    Compounds held by fewer than ``config.min_compound_examples`` examples are left out of DBCA^c.
    ``tracker`` exists for bench/split_speed.py, which swaps in a full-recompute tracker."""
    from tqdm import tqdm

    rng = np.random.default_rng(config.seed)
    in_test = random_assignment(len(examples), config.test_fraction, config.seed)
    atoms = tracker(FeatureIndex.build(examples, atoms_of), in_test, config.atom_alpha)
    compounds = tracker(FeatureIndex.build(examples, compounds_of, config.min_compound_examples), in_test.copy(),
                        config.compound_alpha)
    holders = compounds.index.holders()
    max_group = max(2, int(config.max_group_share * in_test.sum()))
    split = _Split(atoms, compounds, in_test)
    split.balance_atoms(rng)
    initial = compounds.divergence()
    pending = sorted(config.snapshot_divergences)
    goal = max([config.target_divergence or 0.0] + pending) or None
    snapshots: list[Snapshot] = []
    swaps, repairs, groups, reason, iteration = 0, 0, 0, "iterations", 0
    bar = tqdm(total=config.max_iterations, disable=not config.progress, desc="dbca swaps", mininterval=1.0)
    for iteration in range(1, config.max_iterations + 1):
        current = compounds.divergence()
        while pending and current >= pending[0]:
            snapshots.append(Snapshot(pending.pop(0), tuple(np.flatnonzero(in_test).tolist()),
                                      atoms.divergence(), current, swaps))
        if goal is not None and current >= goal:
            reason, iteration = "target", iteration - 1
            break
        train_side, test_side = np.flatnonzero(~in_test), np.flatnonzero(in_test)
        swap = None
        if config.candidates:
            swap = split.find_swap(_sample(rng, train_side, config.candidates), _sample(rng, test_side, config.candidates),
                                   config.max_atom_divergence, config.tries, config.atom_slack)
        if swap is None:
            swap = split.find_swap(train_side, test_side, config.max_atom_divergence, config.tries, config.atom_slack)
        if swap is None and config.repair:
            swap = split.find_repair(train_side, test_side)
            repairs += swap is not None
        if swap is None and config.group_moves:
            swap = split.find_group_swap(holders, config.max_atom_divergence, config.group_tries, max_group,
                                         config.group_pool, rng)
            groups += swap is not None
        if swap is None:
            reason = "no_improvement"
            break
        swaps += 1
        if swaps % 1000 == 0:
            atoms.recompute()
            compounds.recompute()
        bar.update(1)
        if iteration % 50 == 0:
            bar.set_postfix(compound=f"{compounds.divergence():.3f}", atom=f"{atoms.divergence():.4f}")
    bar.close()
    atoms.recompute()
    compounds.recompute()
    while pending and compounds.divergence() >= pending[0]:
        snapshots.append(Snapshot(pending.pop(0), tuple(np.flatnonzero(in_test).tolist()),
                                  atoms.divergence(), compounds.divergence(), swaps))
    return SplitResult(tuple(np.flatnonzero(~in_test).tolist()), tuple(np.flatnonzero(in_test).tolist()),
                       atoms.divergence(), compounds.divergence(), initial, iteration, swaps, reason, tuple(snapshots),
                       repairs, groups)


def _sample(rng: np.random.Generator, side: np.ndarray, size: int) -> np.ndarray:
    return side if len(side) <= size else np.sort(rng.choice(side, size=size, replace=False))
