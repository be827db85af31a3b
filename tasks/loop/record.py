"""What one round of the loop measured, as one typed record: written to ``round_NN/metrics.json``,
logged to MLflow, shown in the Prefect and CLI tables. Every reader uses these fields; nothing parses
metric names back into meaning."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping, Sequence


@dataclass(frozen=True)
class SetMetrics:
    """A solver's predictions on one evaluated set."""

    n: int
    answer_acc: float  # prediction evaluates to the gold answer
    equation_acc: float  # normalized prefix equals the gold prefix
    invalid_rate: float  # predictions that fail to evaluate
    unreachable: int | None = None  # gold expressions the solver's vocabularies cannot express (None: older records)


@dataclass(frozen=True)
class Generation:
    """What round r >= 1 generated, verified, scored and kept."""

    candidates: int  # made by the operators (verified + rejected)
    verified: int  # passed verification and deduplication
    unscorable: int  # the solver could not score them (NaN, never kept)
    kept: int
    confidence_mean: float | None  # over the scored candidates
    confidence_cut: float | None  # lowest kept score
    rejected: dict[str, int] = field(default_factory=dict)  # reason -> candidates dropped (matches_<set>: leaks)
    verified_by_operator: dict[str, int] = field(default_factory=dict)
    kept_by_operator: dict[str, int] = field(default_factory=dict)
    kept_origins: int | None = None  # original problems the kept ones descend from (None in older records)
    unscorable_by_reason: dict[str, int] = field(default_factory=dict)  # empty in older records


@dataclass(frozen=True)
class RoundRecord:
    round: int
    pool_size: int
    train_seconds: float  # 0 when the round reused the previous solver (nothing kept)
    best_epoch: int | None  # chosen on validation only
    valid_answer_acc: float | None
    tests: dict[str, SetMetrics]  # test set name (iid, comdiv, sd) -> metrics
    relative_gap: float | None  # Acc_iid / Acc_compositional - 1 (paper 003 Table 1)
    round_seconds: float
    generation: Generation | None = None  # None in round 0 and in rounds without augmentation
    compound_divergence: float | None = None  # DBCA^c pool -> compositional test set, with a split file
    precision: str | None = None  # what the round's training ran in (fp32, bf16, fp16); None in older records

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RoundRecord":
        values = dict(data)
        values["tests"] = {name: SetMetrics(**m) for name, m in data["tests"].items()}
        values["generation"] = Generation(**data["generation"]) if data.get("generation") else None
        return cls(**values)

    def answer_accuracies(self) -> dict[str, float]:
        return {name: m.answer_acc for name, m in self.tests.items()}

    def metrics(self) -> dict[str, float]:
        """Every number of the round under one flat name (MLflow metric names, table columns):
        ``<set>_answer_acc``, ``rejected_<reason>``, ``verified_<operator>``, ...; None left out."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)
                               if f.name not in ("tests", "generation", "precision")}
        for name, m in self.tests.items():
            out.update({f"{name}_answer_acc": m.answer_acc, f"{name}_equation_acc": m.equation_acc,
                        f"{name}_invalid_rate": m.invalid_rate, f"{name}_unreachable": m.unreachable})
        if self.generation is not None:
            g = self.generation
            out.update({f.name: getattr(g, f.name) for f in fields(g)
                        if f.name not in ("rejected", "verified_by_operator", "kept_by_operator",
                                          "unscorable_by_reason")})
            out.update({f"unscorable_{k}": v for k, v in g.unscorable_by_reason.items()})
            out.update({f"rejected_{k}": v for k, v in g.rejected.items()})
            out.update({f"verified_{k}": v for k, v in g.verified_by_operator.items()})
            out.update({f"kept_{k}": v for k, v in g.kept_by_operator.items()})
        return {k: float(v) for k, v in out.items() if v is not None}


# What each evaluated set is, for figure legends and axis labels (tasks/loop/datasets.py makes them).
SET_LABELS = {"valid": "validation (selects the epoch)", "iid": "I.I.D. test (random split)",
              "iid_holdout": "I.I.D. holdout (split file's train side)", "comdiv": "compositional test (DBCA split)",
              "sd": "compositional test (SD split)"}


def set_label(name: str) -> str:
    """``name`` and what it is, e.g. ``iid: I.I.D. test (random split)``; an unknown set keeps its name."""
    return f"{name}: {SET_LABELS[name]}" if name in SET_LABELS else name


def table_row(record: RoundRecord, test_sets: list[str], operators: Sequence[str] = (),
              held_out: Sequence[str] = ()) -> dict[str, Any]:
    """One row of the all-rounds table: fixed columns (None where a round has no value, e.g. round 0's
    candidates), kept per operator, leaked candidates dropped per held-out set, and each test set's
    answer accuracy."""
    g = record.generation
    row: dict[str, Any] = {"round": record.round, "pool_size": record.pool_size,
                           "candidates": g.candidates if g else None, "verified": g.verified if g else None,
                           "kept": g.kept if g else None, "confidence_cut": g.confidence_cut if g else None,
                           "train_seconds": record.train_seconds}
    for op in operators:
        row[f"kept_{op}"] = g.kept_by_operator.get(op, 0) if g else None
    for name in held_out:
        row[f"matches_{name}"] = g.rejected.get(f"matches_{name}", 0) if g else None
    for name in test_sets:
        m = record.tests.get(name)
        row[f"{name}_answer_acc"] = m.answer_acc if m else None
    return row


def relative_gap(metrics: Mapping[str, SetMetrics]) -> float | None:
    """Acc_iid / Acc_comdiv - 1 (paper 003 Table 1) when both sets were evaluated; the compositional
    set is the one test set that is not I.I.D. (``comdiv`` from a DBCA split, ``sd`` from SD), the I.I.D.
    one ``iid`` (a random split's test side) or else ``iid_holdout`` (held out of a split file's train side)."""
    iid_names = ("iid", "iid_holdout")
    others = sorted(name for name in metrics if name not in iid_names)
    iid = metrics.get("iid") or metrics.get("iid_holdout")
    comdiv = metrics[others[0]] if len(others) == 1 else metrics.get("comdiv")
    if not iid or not comdiv or comdiv.answer_acc == 0:
        return None
    return iid.answer_acc / comdiv.answer_acc - 1
