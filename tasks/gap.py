"""How far the training pool still is from a compositional test set: the compound divergence
between them (paper 003's DBCA^c), tracked round by round as augmentation fills the gap."""
from __future__ import annotations

from collections import Counter
from typing import Sequence

from mwp.problem import Problem
from tasks.dbca import divergence
from tasks.mwp_atoms import DEFAULT_WINDOW, cluster_quantities, compounds_of


def pool_test_compound_divergence(pool: Sequence[Problem], test: Sequence[Problem], k: int = 10,
                                  alpha: float = 0.1, window: int = DEFAULT_WINDOW, seed: int = 0) -> float:
    """Quantities of pool and test are clustered together (TF-IDF over their context windows,
    k-means), so augmented problems get atom labels from the same clusters as the originals; then
    1 - C_alpha over the two compound distributions."""
    clusters = cluster_quantities(list(pool) + list(test), k=k, window=window, seed=seed)
    pool_counts: Counter = Counter()
    test_counts: Counter = Counter()
    for p in pool:
        pool_counts.update(compounds_of(p, clusters))
    for p in test:
        test_counts.update(compounds_of(p, clusters))
    return divergence(pool_counts, test_counts, alpha)
