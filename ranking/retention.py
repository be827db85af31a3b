"""Retention policies: which scored candidates a round keeps."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Scored:
    """A candidate id with its score (higher = more confident)."""

    id: str
    score: float
    group: str = ""  # the operator that made the candidate (for per-operator retention)
    origin: tuple[str, ...] = ()  # the original problems it descends from (for per-origin retention)


def keep_top_fraction(scored: Sequence[Scored], keep_fraction: float) -> tuple[list[Scored], float | None]:
    """The top ``ceil(keep_fraction * n)`` candidates by score, and the cut-off (lowest kept score).

    Ties are broken by id so the choice is deterministic whatever order the candidates come in;
    NaN scores never make the cut. Returns ``([], None)`` when nothing is kept."""
    kept = _ranked(scored)[:_count(keep_fraction, len(scored))]
    return kept, (kept[-1].score if kept else None)


def _count(keep_fraction: float, n: int) -> int:
    """How many of ``n`` candidates the top ``keep_fraction`` keeps (rounded up). The fraction is the
    loop's, validated once where its config is built (tasks/loop/config.py: in (0, 1])."""
    return math.ceil(keep_fraction * n - 1e-9)


def _ranked(scored: Sequence[Scored]) -> list[Scored]:
    """Best first, ties broken by id; NaN scores left out."""
    return sorted((s for s in scored if not math.isnan(s.score)), key=lambda s: (-s.score, s.id))


def keep_above_threshold(scored: Sequence[Scored], threshold: float) -> tuple[list[Scored], float | None]:
    """Every candidate scoring at least ``threshold`` (ordered as :func:`keep_top_fraction`)."""
    kept = [s for s in _ranked(scored) if s.score >= threshold]
    return kept, (kept[-1].score if kept else None)


def keep_top_fraction_per_group(scored: Sequence[Scored], keep_fraction: float) -> tuple[list[Scored], float | None]:
    """The top ``keep_fraction`` within each group (operator), so that an operator whose candidates score
    lower (operation 1's compositions against operation 2's near-copies) still adds its share. The
    cut-off is the lowest kept score over all groups."""
    kept: list[Scored] = []
    for group in sorted({s.group for s in scored}):
        kept += keep_top_fraction([s for s in scored if s.group == group], keep_fraction)[0]
    kept.sort(key=lambda s: (-s.score, s.id))
    return kept, (min(s.score for s in kept) if kept else None)


def keep_top_fraction_one_per_origin(scored: Sequence[Scored],
                                     keep_fraction: float) -> tuple[list[Scored], float | None]:
    """As many as :func:`keep_top_fraction` keeps, best first, but each original problem lends itself
    to at most one kept candidate a round: a candidate that shares an origin with a better one already
    kept is passed over. Under the plain top fraction the confidence ranker keeps dozens of renamings
    of the same few easy problems (docs/study.md); this keeps the paper's count and ranking and spreads
    it over origins. Keeps fewer when the candidates run out of unused origins. A candidate without a
    recorded origin is its own origin."""
    n_keep = _count(keep_fraction, len(scored))
    used: set[str] = set()
    kept: list[Scored] = []
    for s in _ranked(scored):
        if len(kept) == n_keep:
            break
        origin = set(s.origin or (s.id,))
        if origin & used:
            continue
        used |= origin
        kept.append(s)
    return kept, (kept[-1].score if kept else None)


# Retention policies by name (the one list the settings model and the CLI read): each takes the scored
# candidates and the loop's keep fraction and returns the kept ones and the cut-off score.
POLICIES = {
    "top-fraction": keep_top_fraction,  # paper 003: the top 20% of all verified candidates
    "per-operator": keep_top_fraction_per_group,  # the top 20% of each operator's candidates
    "per-origin": keep_top_fraction_one_per_origin,  # as many as the top 20%, one per original problem
}


def retain(policy: str, scored: Sequence[Scored], keep_fraction: float) -> tuple[list[Scored], float | None]:
    if policy not in POLICIES:
        raise ValueError(f"unknown retention policy {policy!r}; known: {', '.join(sorted(POLICIES))}")
    return POLICIES[policy](scored, keep_fraction)
