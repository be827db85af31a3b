"""How far the training pool still is from a compositional test set: the compound divergence
between them (paper 003's DBCA^c), tracked round by round as augmentation fills the gap.

Atom labels must be the split's own: the quantity clusters are fitted exactly as ``compaug split``
fitted them (same problems in the same order, same k, window and seed), so the original problems get
the labels the split was optimized under; augmented problems, which the split never saw, get the
label of the nearest cluster centre.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from mwp.problem import Problem
from tasks.divergence import divergence
from tasks.mwp_atoms import DEFAULT_WINDOW, NUMBER_TOKEN, QuantityClusters, compounds_of, quantity_context


def _documents(problems: Sequence[Problem], window: int) -> tuple[list[tuple[str, int]], list[list[str]]]:
    owners, docs = [], []
    for problem in problems:
        for i in range(len(problem.quantities)):
            owners.append((problem.id, i))
            docs.append(quantity_context(problem, i, window) or [NUMBER_TOKEN])
    return owners, docs


def _identity(tokens: list[str]) -> list[str]:
    return tokens


@dataclass
class QuantityLabeler:
    """TF-IDF + k-means over quantity context windows, kept so that new problems can be labelled.
    Fitting mirrors :func:`tasks.mwp_atoms.cluster_quantities` step for step."""

    vectorizer: Any
    kmeans: Any
    k: int
    window: int

    @classmethod
    def fit(cls, reference: Sequence[Problem], k: int, window: int = DEFAULT_WINDOW, seed: int = 0) -> "QuantityLabeler":
        from sklearn.cluster import KMeans
        from sklearn.feature_extraction.text import TfidfVectorizer

        _, docs = _documents(reference, window)
        if not docs:
            raise ValueError("no quantities to cluster")
        vectorizer = TfidfVectorizer(analyzer=_identity)
        vectors = vectorizer.fit_transform(docs)
        n_clusters = min(k, len({tuple(sorted(d)) for d in docs}))
        kmeans = KMeans(n_clusters=n_clusters, n_init=1, random_state=seed).fit(vectors)
        return cls(vectorizer, kmeans, k, window)

    def clusters(self, problems: Sequence[Problem]) -> QuantityClusters:
        owners, docs = _documents(problems, self.window)
        labels: dict[str, list[int]] = {p.id: [] for p in problems}
        if docs:
            for (pid, _), cluster in zip(owners, self.kmeans.predict(self.vectorizer.transform(docs))):
                labels[pid].append(int(cluster))
        return QuantityClusters(self.k, self.window, {pid: tuple(v) for pid, v in labels.items()})


def compound_divergence_between(labeler: QuantityLabeler, pool: Sequence[Problem], test: Sequence[Problem],
                                alpha: float = 0.1) -> float:
    """1 - C_alpha between the compound distributions of ``pool`` and ``test`` (every compound counted)."""
    clusters = labeler.clusters(list(pool) + list(test))
    pool_counts: Counter = Counter()
    test_counts: Counter = Counter()
    for p in pool:
        pool_counts.update(compounds_of(p, clusters))
    for p in test:
        test_counts.update(compounds_of(p, clusters))
    return divergence(pool_counts, test_counts, alpha)
