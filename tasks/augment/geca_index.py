"""The GECA fragment index (paper 003, section 3 and appendix D): fragments, environments, the
hashed index between them, and alternatives. Operations 1 and 2 use it (tasks/augment/geca.py).

Units. A problem is cut into clauses (at ``, ;`` and sentence ends; Figure 3a treats "There are 36
peaches," as a sentence of its own, and 70% of Math23K problems are a single sentence); the last
clause is the question.

Fragments and environments. A fragment is at most ``max_spans`` non-overlapping spans (1 to
``max_span_len`` tokens each, separated by at least one token) of one clause, holding no quantity.
Its environment is the clause with the spans replaced by ordered placeholders, with two
normalizations so that a question and a statement can share one, as in Figure 3a ("How many
peaches?" and "There are 36 peaches," share "_ peaches"): quantity tokens are left out of the
environment, and so is the clause's final punctuation.

The index is built in one pass: every (environment, fragment, clause) is hashed with a polynomial
hash over token ids, computed with numpy for all clauses of one length at once, then sorted. Nothing
compares problems pairwise. Growth is bounded as GECA does: all one-span environments are kept, but
only the ``max_envs_per_sentence`` two-span environments of smallest hash per clause (a bottom-k
sketch: two clauses sharing many environments keep the same ones), and operation 2 uses only
fragments seen at most ``max_fragment_count`` times. A chosen pair is re-checked on the tokens, so a
hash collision is counted (``hash_collision``), never used.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from mwp.problem import Problem
from mwp.text import CLAUSE_END
from tasks.augment.base import AugmentConfig, Units, clause_units, stable_int

Spans = tuple[tuple[int, int], ...]  # (start, end) in skeleton coordinates
Fragment = tuple[tuple[str, ...], ...]  # the tokens of each span

_B = np.uint64(0x9E3779B97F4A7C15)
_PH = (np.uint64(0x51ED270B27FBD1A3), np.uint64(0x3C6EF372FE94F82B))
_SEP, _TAG1, _TAG2 = np.uint64(0x2545F4914F6CDD1D), np.uint64(0x1B873593), np.uint64(0xCC9E2D51)
_MAX = np.uint64(np.iinfo(np.uint64).max)
_MASK = (1 << 64) - 1


# ---------------------------------------------------------------- fragments (readable reference)


def skeleton(units: Units, clause: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Tokens of a clause that environments see (no quantities, no final punctuation) and the
    segment of each (a new segment starts after every quantity; a span stays inside one)."""
    start, end = units.spans[clause]
    if end > start and units.tokens[end - 1] in CLAUSE_END:
        end -= 1
    qty = set(units.qty_pos)
    tokens, segments, seg = [], [], 0
    for pos in range(start, end):
        if pos in qty:
            seg += 1
            continue
        tokens.append(units.tokens[pos])
        segments.append(seg)
    return tuple(tokens), tuple(segments)


def environment(tokens: Sequence[str], spans: Spans) -> tuple[str, ...]:
    out: list[str] = []
    prev = 0
    for k, (a, b) in enumerate(spans):
        out.extend(tokens[prev:a])
        out.append(f"<{k}>")
        prev = b
    out.extend(tokens[prev:])
    return tuple(out)


def fragments(tokens: Sequence[str], segments: Sequence[int], max_spans: int = 2,
              max_span_len: int = 4) -> list[tuple[Fragment, tuple[str, ...]]]:
    """Every (fragment, environment) of one skeleton: the readable definition the index hashes."""
    single = [(a, a + n) for n in range(1, max_span_len + 1) for a in range(len(tokens) - n + 1)
              if segments[a] == segments[a + n - 1]]
    out = [(((a, b),)) for a, b in single]
    if max_spans == 2:
        out += [((a, b), (c, d)) for a, b in single for c, d in single if c > b]
    return [(tuple(tuple(tokens[a:b]) for a, b in sp), environment(tokens, sp)) for sp in out]


def decode(code: int) -> Spans:
    a, la, b, lb = code & 0xFF, (code >> 8) & 0xFF, (code >> 16) & 0xFF, (code >> 24) & 0xFF
    return ((a, a + la),) if lb == 0 else ((a, a + la), (b, b + lb))


def fragment_tokens(tokens: Sequence[str], spans: Spans) -> Fragment:
    return tuple(tuple(tokens[a:b]) for a, b in spans)


def render(fragment: Fragment, language: str = "en") -> str:
    joiner = "" if language == "zh" else " "
    return " _ ".join(joiner.join(span) for span in fragment)


# ---------------------------------------------------------------- the hashed index


@dataclass
class FragmentIndex:
    """Entries (environment hash, fragment hash, clause, span code), sorted by environment."""

    problems: Sequence[Problem]
    units: list[Units]
    clause_start: np.ndarray  # (P+1,) first clause id of each problem
    clause_problem: np.ndarray  # (C,) problem of each clause
    skeletons: list[tuple[tuple[str, ...], tuple[int, ...]]]  # (C,) tokens, segments
    env: np.ndarray  # (E,) uint64, sorted
    frag: np.ndarray  # (E,) uint64
    clause: np.ndarray  # (E,) int64
    code: np.ndarray  # (E,) int64 span code
    frag_count: np.ndarray  # (E,) occurrences of the entry's fragment in the pool
    group_start: np.ndarray  # (E,) first entry of the entry's environment group
    group_end: np.ndarray  # (E,) one past its last entry
    group_distinct: np.ndarray  # (E,) distinct fragments in the entry's environment
    by_frag: np.ndarray  # (E,) entry ids ordered by fragment hash
    by_clause: np.ndarray  # (E,) entry ids ordered by clause
    n_hashed: int  # entries hashed before dropping environments seen once

    def __post_init__(self) -> None:
        self._frag_sorted = self.frag[self.by_frag]
        # entries of clause c are by_clause[clause_first[c]:clause_first[c + 1]]
        self._clause_first = np.searchsorted(self.clause[self.by_clause], np.arange(len(self.clause_problem) + 1))

    def entries_of_clause(self, clause: int) -> np.ndarray:
        return self.by_clause[self._clause_first[clause]:self._clause_first[clause + 1]]

    def entries_of_fragment(self, frag_hash: np.uint64) -> np.ndarray:
        lo = np.searchsorted(self._frag_sorted, frag_hash, side="left")
        hi = np.searchsorted(self._frag_sorted, frag_hash, side="right")
        return self.by_frag[lo:hi]

    def entry(self, i: int) -> tuple[Fragment, tuple[str, ...]]:
        tokens, _ = self.skeletons[int(self.clause[i])]
        spans = decode(int(self.code[i]))
        return fragment_tokens(tokens, spans), environment(tokens, spans)


@lru_cache(maxsize=256)
def _combos(length: int, max_spans: int, max_span_len: int):
    single = [(a, n) for n in range(1, max_span_len + 1) for a in range(length - n + 1)]
    one = np.array(single, dtype=np.int64).reshape(-1, 2)
    two = np.array([(a, n, c, m) for a, n in single for c, m in single if c > a + n] if max_spans == 2 else [],
                   dtype=np.int64).reshape(-1, 4)
    return one, two


@lru_cache(maxsize=1)
def _powers(n: int) -> np.ndarray:
    out, p = [], 1
    for _ in range(n):
        out.append(p)
        p = (p * int(_B)) & _MASK
    return np.array(out, dtype=np.uint64)


def _slice(H: np.ndarray, P: np.ndarray, i, j):
    return H[:, j] - H[:, i] * P[j - i]


def _hash_group(ids: np.ndarray, segs: np.ndarray, cfg: AugmentConfig, P: np.ndarray, out: list) -> None:
    """Hash every fragment/environment of ``n`` clauses of the same skeleton length (n, L)."""
    n, L = ids.shape
    H = np.zeros((n, L + 1), dtype=np.uint64)
    for j in range(L):
        H[:, j + 1] = H[:, j] * _B + ids[:, j]
    one, two = _combos(L, cfg.max_spans, cfg.max_span_len)
    a, la = one[:, 0], one[:, 1]
    env = (H[:, a] * _B + _PH[0]) * P[L - a - la] + _slice(H, P, a + la, np.full_like(a, L))
    frag = _slice(H, P, a, a + la) * _B + _TAG1
    valid = segs[:, a] == segs[:, a + la - 1]
    rows, cols = np.nonzero(valid)
    out.append((env[rows, cols], frag[rows, cols], rows, a[cols] | (la[cols] << 8)))
    if len(two) == 0:
        return
    a, la, b, lb = two[:, 0], two[:, 1], two[:, 2], two[:, 3]
    env = (((H[:, a] * _B + _PH[0]) * P[b - a - la] + _slice(H, P, a + la, b)) * _B + _PH[1]) * P[L - b - lb] \
        + _slice(H, P, b + lb, np.full_like(b, L))
    frag = ((_slice(H, P, a, a + la) * _B + _SEP) * P[lb] + _slice(H, P, b, b + lb)) * _B + _TAG2
    valid = (segs[:, a] == segs[:, a + la - 1]) & (segs[:, b] == segs[:, b + lb - 1])
    code = np.broadcast_to(a | (la << 8) | (b << 16) | (lb << 24), env.shape)
    k = cfg.max_envs_per_sentence
    if env.shape[1] > k:  # bottom-k sketch: the k smallest environment hashes of each clause
        masked = np.where(valid, env, _MAX)
        pick = np.argpartition(masked, k - 1, axis=1)[:, :k]
        env, frag, valid, code = (np.take_along_axis(x, pick, axis=1) for x in (env, frag, valid, code))
    rows, cols = np.nonzero(valid)
    out.append((env[rows, cols], frag[rows, cols], rows, code[rows, cols]))


def build_index(problems: Sequence[Problem], cfg: AugmentConfig) -> FragmentIndex:
    vocab: dict[str, int] = {}
    units = [clause_units(p) for p in problems]
    skeletons, clause_problem, clause_start = [], [], [0]
    for p_idx, u in enumerate(units):
        for c in range(len(u.spans)):
            skeletons.append(skeleton(u, c))
            clause_problem.append(p_idx)
        clause_start.append(len(skeletons))
    by_len: dict[int, list[int]] = {}
    for c, (toks, _) in enumerate(skeletons):
        if toks and len(toks) <= 250:
            by_len.setdefault(len(toks), []).append(c)
    values = np.random.default_rng(20240521).integers(1, 2**63, size=1 << 20, dtype=np.uint64) | np.uint64(1)
    P = _powers(260)
    parts: list[tuple] = []
    for L in sorted(by_len):
        clauses = np.array(by_len[L], dtype=np.int64)
        ids = np.array([[vocab.setdefault(t, len(vocab)) for t in skeletons[c][0]] for c in clauses], dtype=np.int64)
        segs = np.array([skeletons[c][1] for c in clauses], dtype=np.int64).reshape(len(clauses), L)
        width = max(len(_combos(L, cfg.max_spans, cfg.max_span_len)[1]), 1)
        step = max(1, 2_000_000 // width)
        for s in range(0, len(clauses), step):
            got: list[tuple] = []
            _hash_group(values[ids[s:s + step] % len(values)], segs[s:s + step], cfg, P, got)
            parts += [(e, f, clauses[s:s + step][r], c) for e, f, r, c in got]
    env = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.uint64)
    frag = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.uint64)
    clause = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.int64)
    code = np.concatenate([p[3] for p in parts]).astype(np.int64) if parts else np.zeros(0, np.int64)
    del parts
    _, inverse, counts = np.unique(frag, return_inverse=True, return_counts=True)
    frag_count = counts[inverse]
    n_hashed = len(env)
    order = np.lexsort((clause, frag, env))
    env, frag, clause, code, frag_count = env[order], frag[order], clause[order], code[order], frag_count[order]
    first = np.ones(len(env), dtype=bool)
    first[1:] = env[1:] != env[:-1]
    starts = np.flatnonzero(first)
    sizes = np.diff(np.append(starts, len(env)))
    keep = np.repeat(sizes >= 2, sizes)  # an environment seen once has no alternatives
    env, frag, clause, code, frag_count = env[keep], frag[keep], clause[keep], code[keep], frag_count[keep]
    first = np.ones(len(env), dtype=bool)
    first[1:] = env[1:] != env[:-1]
    new_frag = first.copy()
    new_frag[1:] |= frag[1:] != frag[:-1]
    starts = np.flatnonzero(first)
    sizes = np.diff(np.append(starts, len(env)))
    distinct = np.add.reduceat(new_frag, starts) if len(starts) else np.zeros(0, np.int64)
    return FragmentIndex(
        problems, units, np.array(clause_start), np.array(clause_problem), skeletons, env, frag, clause, code,
        frag_count, np.repeat(starts, sizes), np.repeat(starts + sizes, sizes), np.repeat(distinct, sizes),
        np.argsort(frag, kind="stable"), np.argsort(clause, kind="stable"), n_hashed)


def alternatives(index: FragmentIndex, fragment: Fragment) -> set[Fragment]:
    """Fragments that share at least one environment with ``fragment`` (for inspection and tests)."""
    out: set[Fragment] = set()
    for i in range(len(index.env)):
        if index.entry(i)[0] == fragment:
            for j in range(index.group_start[i], index.group_end[i]):
                other = index.entry(j)[0]
                if other != fragment:
                    out.add(other)
    return out


_CACHE: dict[tuple, FragmentIndex] = {}


def index_for(problems: Sequence[Problem], cfg: AugmentConfig) -> FragmentIndex:
    """The index of this pool, built once for all operators of a round (one cached pool)."""
    key = (stable_int(len(problems), *(p.id for p in problems)), cfg.max_spans, cfg.max_span_len,
           cfg.max_envs_per_sentence)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = build_index(problems, cfg)
    return _CACHE[key]
