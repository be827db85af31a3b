"""Speed of the DBCA split: all of Math23K, and on a subsample the incremental splitter against the
same greedy search whose every candidate score is recomputed from all examples (nqg's way).

    .venv/bin/python bench/split_speed.py [--math23k PATH] [--subsample 300] [--candidates 500]
"""
from __future__ import annotations

import argparse
import time
from collections import Counter
from functools import partial

import numpy as np

from mwp.readers import load_dataset
from tasks.dbca.atoms import DEFAULT_MAX_DEPTH, atoms_of, cluster_quantities, compounds_of
from tasks.dbca.divergence import DivergenceTracker, divergence
from tasks.dbca.splitter import SplitConfig, greedy_split


class FullRecomputeTracker(DivergenceTracker):
    """Scores each candidate move by rebuilding both count tables from every example."""

    def _side_counters(self):
        train, test = Counter(), Counter()
        for e in range(len(self.index.offsets) - 1):
            (test if self._in_test[e] else train).update(self.index.counter(e))
        return train, test

    def __init__(self, index, in_test, alpha):
        super().__init__(index, in_test, alpha)
        self._in_test = in_test.copy()

    def move(self, example, to_test):
        super().move(example, to_test)
        self._in_test[example] = to_test

    def divergence_after(self, examples, to_test):
        return self.divergence_after_sets([np.asarray([e]) for e in examples], to_test)

    def divergence_after_sets(self, sets, to_test):
        out = []
        for members in sets:
            before = self._in_test[members].copy()
            self._in_test[members] = to_test
            train, test = self._side_counters()
            self._in_test[members] = before
            out.append(divergence(train, test, self.alpha))
        return np.asarray(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--math23k", default="../shared/data/math23k/math23k.json")
    parser.add_argument("--subsample", type=int, default=300)
    parser.add_argument("--candidates", type=int, default=500)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--max-depth", type=int, default=DEFAULT_MAX_DEPTH, help="compound depth (0 = all)")
    args = parser.parse_args()
    problems = load_dataset("math23k", args.math23k).problems
    start = time.perf_counter()
    clusters = cluster_quantities(problems, args.k)
    clustered = time.perf_counter()
    atoms = partial(atoms_of, clusters=clusters)
    compounds = partial(compounds_of, clusters=clusters, max_depth=args.max_depth or None)
    result = greedy_split(problems, atoms, compounds, SplitConfig(candidates=args.candidates, progress=False))
    done = time.perf_counter()
    print(f"Math23K: {len(problems)} problems, k={args.k}: clustering {clustered - start:.1f} s, "
          f"greedy split {done - clustered:.1f} s ({result.swaps} swaps, {result.group_moves} group moves, "
          f"{result.stop_reason}), total {done - start:.1f} s; "
          f"DBCA^a {result.atom_divergence:.4f}, DBCA^c {result.compound_divergence:.4f}")

    sample = problems[: args.subsample]
    config = SplitConfig(candidates=0, tries=3, max_iterations=30, progress=False)
    t0 = time.perf_counter()
    fast = greedy_split(sample, atoms, compounds, config)
    t1 = time.perf_counter()
    slow = greedy_split(sample, atoms, compounds, config, tracker=FullRecomputeTracker)
    t2 = time.perf_counter()
    same = fast.test == slow.test
    print(f"subsample {len(sample)}, {fast.swaps} swaps ({fast.group_moves} group moves): incremental {t1 - t0:.3f} s, full recompute {t2 - t1:.2f} s, "
          f"ratio {(t2 - t1) / max(t1 - t0, 1e-9):.0f}x; same split: {same}")


if __name__ == "__main__":
    main()
