"""Atoms and compounds of math word problems, for the DBCA splitter (paper 003, appendix B).

A quantity alone says nothing (``N0 * N1`` is the same graph for apples and for speeds), so each
quantity is represented by the tokens in a window around it, vectorized with TF-IDF and clustered
with k-means; its cluster index is its atom label. The fitted vectorizer and centres are kept as a
:class:`QuantityLabeler` (plain arrays, JSON without pickle) that labels problems the clustering never
saw, so split files carry it and later rounds measure divergences under the split's own labels.
Atoms of a problem: the labels of the quantities,
the operators and the constants of its expression tree. Compounds: every sub-expression tree (left
component, operator, right component), written canonically with atoms at the leaves and the operands
of ``+`` and ``*`` sorted, so that ``a + b`` and ``b + a`` are one compound.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from mwp.expr import COMMUTATIVE, BinOp, Expr, Num, Qty, format_number, iter_nodes
from mwp.problem import Problem
from mwp.text import is_number_token

from tasks.dbca.divergence import divergence
from tasks.dbca.splitter import SplitConfig, SplitResult, greedy_split, iid_split

DEFAULT_WINDOW = 4  # tokens on each side of a quantity
DEFAULT_KS = (5, 10, 20)  # paper 003 appendix E.1
NUMBER_TOKEN = "<num>"
# Compounds deeper than this are left out: the few 25- and 44-operator MAWPS sums would otherwise add
# hundreds of one-off compounds that make even a random split look divergent. The splitter also drops
# compounds held by one problem (SplitConfig.min_compound_examples), which removes most of that noise
# (all depths then measure like depth 2); depth 2 stays the default so that the divergence over all
# compounds (the split file's compound_divergence_all_compounds, compound_divergence_between) stays low for a random
# split too (docs/splits.md).
DEFAULT_MAX_DEPTH = 2


def quantity_context(problem: Problem, index: int, window: int = DEFAULT_WINDOW) -> list[str]:
    """Lower-cased tokens within ``window`` of quantity ``index`` (itself excluded); other numbers
    become ``<num>`` so that the values do not decide the cluster."""
    tokens = problem.tokens
    centre = problem.quantity_positions()[index]
    around = tokens[max(0, centre - window):centre] + tokens[centre + 1:centre + 1 + window]
    return [NUMBER_TOKEN if is_number_token(t) else t.lower() for t in around]


def quantity_documents(problems: Sequence[Problem], window: int) -> tuple[list[tuple[str, int]], list[list[str]]]:
    """(problem id, quantity index) and context tokens of every quantity, in problem order; an empty
    window counts as ``<num>``."""
    owners: list[tuple[str, int]] = []
    docs: list[list[str]] = []
    for problem in problems:
        for i in range(len(problem.quantities)):
            owners.append((problem.id, i))
            docs.append(quantity_context(problem, i, window) or [NUMBER_TOKEN])
    return owners, docs


def _tokens_as_given(tokens: list[str]) -> list[str]:
    return tokens


@dataclass(frozen=True)
class QuantityClusters:
    k: int  # clusters asked for
    window: int
    labels: dict[str, tuple[int, ...]]  # problem id -> cluster index of each of its quantities
    # the labeler that gave the labels (None when there was no quantity to cluster); written into split files
    labeler: QuantityLabeler | None = field(default=None, compare=False, repr=False)

    def label(self, problem: Problem, index: int) -> int:
        try:
            return self.labels[problem.id][index]
        except (KeyError, IndexError) as err:
            raise KeyError(f"problem {problem.id!r}: no cluster for quantity N{index}") from err


@dataclass(frozen=True, eq=False)
class QuantityLabeler:
    """TF-IDF over quantity context windows and the k-means centres fitted on them, as plain arrays:
    labels any problem with numpy alone and goes to and from JSON (:meth:`to_dict`, :meth:`from_dict`),
    so a split file carries the labeler its clusters came from."""

    k: int  # clusters asked for (fewer are fitted when the windows hold fewer distinct token bags)
    window: int  # context tokens on each side of a quantity
    vocabulary: tuple[str, ...]  # context tokens, in TF-IDF column order
    idf: np.ndarray  # (V,) inverse document frequency of each vocabulary token
    centres: np.ndarray  # (C, V) k-means centres in TF-IDF space, C <= k

    def __post_init__(self):
        idf = np.array(self.idf, dtype=np.float64)
        centres = np.array(self.centres, dtype=np.float64)
        n_terms = len(self.vocabulary)
        if self.k < 1 or self.window < 0:
            raise ValueError(f"k must be positive and window non-negative, got k={self.k}, window={self.window}")
        if idf.shape != (n_terms,) or centres.ndim != 2 or centres.shape[1] != n_terms:
            raise ValueError(f"{n_terms} vocabulary tokens, idf of shape {idf.shape}, centres of shape {centres.shape}")
        if not 1 <= len(centres) <= self.k or len(set(self.vocabulary)) != n_terms:
            raise ValueError(f"{len(centres)} centres for k={self.k}, or a vocabulary token twice")
        idf.setflags(write=False)
        centres.setflags(write=False)
        object.__setattr__(self, "idf", idf)
        object.__setattr__(self, "centres", centres)
        object.__setattr__(self, "_column", {token: j for j, token in enumerate(self.vocabulary)})

    @classmethod
    def fit(cls, reference: Sequence[Problem], k: int, window: int = DEFAULT_WINDOW, seed: int = 0) -> QuantityLabeler:
        """TF-IDF + k-means (seeded) over the quantities of ``reference``."""
        _, docs = quantity_documents(reference, window)
        return cls._fit_documents(docs, k, window, seed)[0]

    @classmethod
    def _fit_documents(cls, docs: list[list[str]], k: int, window: int, seed: int) -> tuple[QuantityLabeler, np.ndarray]:
        """The fitted labeler and k-means' own labels of ``docs`` (what :func:`cluster_quantities` returns)."""
        from sklearn.cluster import KMeans
        from sklearn.feature_extraction.text import TfidfVectorizer

        if k < 1:
            raise ValueError(f"k must be positive, got {k}")
        if not docs:
            raise ValueError("no quantities to cluster")
        vectorizer = TfidfVectorizer(analyzer=_tokens_as_given)
        vectors = vectorizer.fit_transform(docs)
        n_clusters = min(k, len({tuple(sorted(d)) for d in docs}))
        kmeans = KMeans(n_clusters=n_clusters, n_init=1, random_state=seed).fit(vectors)
        labeler = cls(k, window, tuple(vectorizer.get_feature_names_out().tolist()), vectorizer.idf_,
                      kmeans.cluster_centers_)
        return labeler, kmeans.labels_

    def assign(self, docs: Sequence[Sequence[str]]) -> np.ndarray:
        """(N,) index of the nearest centre (Euclidean; first index on ties) of each document's TF-IDF
        vector: token counts (tokens outside the vocabulary dropped) times idf, L2-normalised, as the
        fitted TfidfVectorizer computes them."""
        rows, cols, counts = [], [], []
        for row, doc in enumerate(docs):
            for col, count in sorted(Counter(self._column[t] for t in doc if t in self._column).items()):
                rows.append(row)
                cols.append(col)
                counts.append(count)
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        weights = np.asarray(counts, dtype=np.float64) * self.idf[cols]  # (nnz,)
        norms = np.sqrt(np.bincount(rows, weights * weights, minlength=len(docs)))  # (N,)
        weights = weights / norms[rows]
        # |x - c|^2 = |x|^2 - 2 x.c + |c|^2 with |x|^2 left out (the same for every centre of a row);
        # summed term by term in the order k-means' own assignment step uses, so ties fall alike
        distances = np.tile(np.einsum("ij,ij->i", self.centres, self.centres), (len(docs), 1))  # (N, C)
        np.subtract.at(distances, rows, 2.0 * weights[:, None] * self.centres[:, cols].T)
        return np.argmin(distances, axis=1)

    def clusters(self, problems: Sequence[Problem]) -> QuantityClusters:
        """Cluster labels of every quantity of ``problems`` (nearest centre)."""
        owners, docs = quantity_documents(problems, self.window)
        return _grouped(problems, owners, self.assign(docs), self)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only: ``k``, ``window``, ``vocabulary``, ``idf``, ``centres``."""
        return {"k": self.k, "window": self.window, "vocabulary": list(self.vocabulary), "idf": self.idf.tolist(),
                "centres": self.centres.tolist()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QuantityLabeler:
        """The labeler :meth:`to_dict` described; unknown or missing keys are errors."""
        expected = {"k", "window", "vocabulary", "idf", "centres"}
        if set(data) != expected:
            raise ValueError(f"quantity labeler keys {sorted(data)}, expected {sorted(expected)}")
        if not (isinstance(data["k"], int) and isinstance(data["window"], int)
                and all(isinstance(t, str) for t in data["vocabulary"])):
            raise ValueError("quantity labeler: k and window must be integers, the vocabulary strings")
        return cls(data["k"], data["window"], tuple(data["vocabulary"]), data["idf"], data["centres"])


def _grouped(problems: Sequence[Problem], owners: list[tuple[str, int]], assigned: Sequence[int],
             labeler: QuantityLabeler) -> QuantityClusters:
    labels: dict[str, list[int]] = {p.id: [] for p in problems}
    for (pid, _), cluster in zip(owners, assigned):
        labels[pid].append(int(cluster))
    return QuantityClusters(labeler.k, labeler.window, {pid: tuple(v) for pid, v in labels.items()}, labeler)


def cluster_quantities(problems: Sequence[Problem], k: int, window: int = DEFAULT_WINDOW, seed: int = 0) -> QuantityClusters:
    """TF-IDF over the context windows of every quantity, then k-means (seeded): the labels k-means
    gave ``problems`` while fitting, and the fitted labeler (``.labeler``) for problems outside them."""
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    owners, docs = quantity_documents(problems, window)
    if not docs:
        return QuantityClusters(k, window, {p.id: () for p in problems})
    labeler, assigned = QuantityLabeler._fit_documents(docs, k, window, seed)
    return _grouped(problems, owners, assigned, labeler)


def labeler_from_split(document: Mapping[str, Any]) -> QuantityLabeler | None:
    """The labeler a split file (``compaug split`` or SD's split.json) was made with; None for a file
    written before split files carried it (or a split without quantities)."""
    data = document.get("quantity_labeler")
    return None if data is None else QuantityLabeler.from_dict(data)


def _leaf_atom(node: Expr, qty_label: Callable[[int], int]) -> str:
    if isinstance(node, Qty):
        return f"q{qty_label(node.index)}"
    if isinstance(node, Num):
        return f"c{format_number(node.value)}"
    return "x"


def expression_atoms(expr: Expr, qty_label: Callable[[int], int]) -> Counter:
    """Quantity labels (``q3``), constants (``c1``) and operators (``*``) of the tree, with repeats."""
    return Counter(node.op if isinstance(node, BinOp) else _leaf_atom(node, qty_label) for node in iter_nodes(expr))


def expression_compounds(expr: Expr, qty_label: Callable[[int], int], max_depth: int | None = DEFAULT_MAX_DEPTH) -> Counter:
    """Every sub-expression tree of at most ``max_depth`` operator levels (None: all), in canonical
    form, e.g. ``((q1 * q3) / q0)``."""
    found: Counter = Counter()

    def canonical(node: Expr) -> tuple[str, int]:
        if not isinstance(node, BinOp):
            return _leaf_atom(node, qty_label), 0
        (left, left_depth), (right, right_depth) = canonical(node.left), canonical(node.right)
        if node.op in COMMUTATIVE and right < left:
            left, right = right, left
        text, level = f"({left} {node.op} {right})", 1 + max(left_depth, right_depth)
        if max_depth is None or level <= max_depth:
            found[text] += 1
        return text, level

    canonical(expr)
    return found


def atoms_of(problem: Problem, clusters: QuantityClusters) -> Counter:
    return expression_atoms(problem.expression, partial(clusters.label, problem))


def compounds_of(problem: Problem, clusters: QuantityClusters, max_depth: int | None = DEFAULT_MAX_DEPTH) -> Counter:
    return expression_compounds(problem.expression, partial(clusters.label, problem), max_depth)


def compound_divergence_between(labeler: QuantityLabeler, pool: Sequence[Problem], test: Sequence[Problem],
                                alpha: float = 0.1) -> float:
    """1 - C_alpha between the compound distributions of ``pool`` and ``test`` (every compound counted),
    their quantities labelled by ``labeler`` (the split's own: augmented problems get the nearest centre)."""
    clusters = labeler.clusters(list(pool) + list(test))
    pool_counts: Counter = Counter()
    test_counts: Counter = Counter()
    for p in pool:
        pool_counts.update(compounds_of(p, clusters))
    for p in test:
        test_counts.update(compounds_of(p, clusters))
    return divergence(pool_counts, test_counts, alpha)


K_RULES = ("gain", "highest")  # how choose_k ranks the ks; see choose_k


@dataclass(frozen=True)
class KChoice:
    k: int  # the chosen number of clusters
    clusters: QuantityClusters
    result: SplitResult  # the split reached with it
    tried: dict[int, float]  # k -> compound divergence reached
    iid: dict[int, float] = field(default_factory=dict)  # k -> compound divergence of the I.I.D. split
    rule: str = "gain"


def split_with_k(problems: Sequence[Problem], k: int, config: SplitConfig, window: int = DEFAULT_WINDOW,
                 max_depth: int | None = DEFAULT_MAX_DEPTH) -> tuple[QuantityClusters, SplitResult]:
    clusters = cluster_quantities(problems, k, window, config.seed)
    result = greedy_split(problems, partial(atoms_of, clusters=clusters),
                          partial(compounds_of, clusters=clusters, max_depth=max_depth), config)
    return clusters, result


def choose_k(problems: Sequence[Problem], config: SplitConfig, ks: Sequence[int] = DEFAULT_KS,
             window: int = DEFAULT_WINDOW, max_depth: int | None = DEFAULT_MAX_DEPTH, rule: str = "gain") -> KChoice:
    """Split once per k and keep the best k (ties: the smaller k).

    ``rule="highest"``: the highest compound divergence reached (paper 003, appendix E.1). More
    clusters make more distinct compounds, so every split, the random one included, looks more
    divergent at a larger k and this rule drifts to the largest k. ``rule="gain"`` (default): the
    highest gain of the greedy split over the I.I.D. split at the same k and sizes,
    ``DBCA^c_comdiv(k) - DBCA^c_iid(k)``, i.e. the divergence the search created rather than the one
    the clustering alone brings."""
    if rule not in K_RULES:
        raise ValueError(f"unknown k rule {rule!r}; expected one of {K_RULES}")
    if not ks:
        raise ValueError("choose_k needs at least one k")
    runs: dict[int, tuple[QuantityClusters, SplitResult]] = {}
    tried: dict[int, float] = {}
    iid: dict[int, float] = {}
    for k in ks:
        clusters, result = runs[k] = split_with_k(problems, k, config, window, max_depth)
        tried[k] = result.compound_divergence
        iid[k] = iid_split(problems, partial(atoms_of, clusters=clusters),
                           partial(compounds_of, clusters=clusters, max_depth=max_depth), config).compound_divergence
    k = pick_k(tried, iid, rule)
    return KChoice(k, runs[k][0], runs[k][1], tried, iid, rule)


def split_problems(problems: Sequence[Problem], config: SplitConfig, method: str = "comdiv", k: int | str = "auto",
                   ks: Sequence[int] = DEFAULT_KS, window: int = DEFAULT_WINDOW,
                   max_depth: int | None = DEFAULT_MAX_DEPTH, k_rule: str = "gain") -> KChoice:
    """The split ``compaug split`` makes: the greedy ComDiv split at ``k`` (``"auto"``: the k
    :func:`choose_k` picks from ``ks``), or for ``method="iid"`` the I.I.D. split measured under the
    clusters of that k. ``tried``/``iid`` are empty at a fixed k."""
    if method not in ("comdiv", "iid"):
        raise ValueError(f"unknown split method {method!r}; expected comdiv or iid")
    if k == "auto":
        choice = choose_k(problems, config, ks, window, max_depth, k_rule)
    else:
        clusters, result = split_with_k(problems, int(k), config, window, max_depth)
        choice = KChoice(int(k), clusters, result, {}, {}, k_rule)
    if method == "iid":
        clusters = choice.clusters
        result = iid_split(problems, partial(atoms_of, clusters=clusters),
                           partial(compounds_of, clusters=clusters, max_depth=max_depth), config)
        choice = replace(choice, result=result)
    return choice


def pick_k(comdiv: dict[int, float], iid: dict[int, float], rule: str = "gain") -> int:
    """The k of :func:`choose_k` from the divergences reached per k (ties: the smaller k)."""
    if rule not in K_RULES:
        raise ValueError(f"unknown k rule {rule!r}; expected one of {K_RULES}")
    score = {k: comdiv[k] - iid[k] if rule == "gain" else comdiv[k] for k in comdiv}
    return min(score, key=lambda k: (-score[k], k))


def split_statistics(problems: Sequence[Problem], train: Sequence[int], test: Sequence[int],
                     atom_divergence: float, compound_divergence: float) -> dict:
    """One row of paper Table 3: number ratio (train/test), text length ratio (mean train tokens
    over mean test tokens), DBCA^a and DBCA^c."""
    def mean_length(indices):
        return sum(len(problems[i].tokens) for i in indices) / max(len(indices), 1)
    test_length = mean_length(test)
    return {
        "number_ratio": f"{len(train)}/{len(test)}",
        "length_ratio": round(mean_length(train) / test_length, 4) if test_length else None,
        "atom_divergence": round(atom_divergence, 6),
        "compound_divergence": round(compound_divergence, 6),
    }


def format_table(rows: dict[str, dict]) -> str:
    """Markdown table of :func:`split_statistics` rows keyed by split name."""
    lines = ["| split | NR | LR | DBCA^a | DBCA^c |", "|---|---|---|---|---|"]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['number_ratio']} | {row['length_ratio']:.2f} | "
                     f"{row['atom_divergence']:.3f} | {row['compound_divergence']:.3f} |")
    return "\n".join(lines)
