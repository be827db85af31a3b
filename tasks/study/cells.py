"""What a finished study cell measured, read back from its own run directory (the loop's round records,
per-problem correctness, epoch curves, kept problems): the report never re-computes a number a cell
already wrote."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mwp.problem import origins, read_problems_jsonl
from tasks.loop import rundir
from tasks.loop.record import RoundRecord
from tasks.study.grid import Cell


@dataclass
class CellResult:
    cell: Cell
    status: str  # "done", "failed", or "pending" (not run or not finished yet: a study between sittings)
    run_dir: Path | None = None
    error: str = ""
    mlflow_run_id: str | None = None
    records: list[RoundRecord] = field(default_factory=list)
    correct: dict[str, dict[str, bool]] = field(default_factory=dict)  # final round: set -> id -> correct
    epochs: list[dict[str, Any]] = field(default_factory=list)  # final round's training curve

    @property
    def final(self) -> RoundRecord | None:
        return self.records[-1] if self.records else None

    def accuracy(self, test_set: str) -> float | None:
        final = self.final
        return final.tests[test_set].answer_acc if final and test_set in final.tests else None


def main_set(result: CellResult) -> str | None:
    """The split's own test set (``comdiv``, ``iid``, ``sd``), not the train-side holdout."""
    names = [n for n in (result.final.tests if result.final else {}) if n != "iid_holdout"]
    return names[0] if names else None


def load_cell(cell: Cell, run_dir: Path, mlflow_run_id: str | None, last_round: int | None = None) -> CellResult:
    """The cell's records up to ``last_round`` (its T; all completed rounds when None)."""
    done = [r for r in rundir.completed_rounds(run_dir) if last_round is None or r <= last_round]
    if not done:
        return CellResult(cell, "failed", run_dir, "no completed round", mlflow_run_id)
    records = [rundir.read_record(run_dir, r) for r in done]
    final_dir = rundir.round_dir(run_dir, done[-1])
    correct = {p.stem.removeprefix("correct_"): json.loads(p.read_text(encoding="utf-8"))
               for p in sorted(final_dir.glob("correct_*.json"))}
    # a round that kept nothing reused the previous solver: its curve is the last one trained
    curve = next((rundir.round_dir(run_dir, r) / "epochs.json" for r in reversed(done)
                  if (rundir.round_dir(run_dir, r) / "epochs.json").exists()), None)
    epochs = json.loads(curve.read_text(encoding="utf-8")) if curve else []
    return CellResult(cell, "done", run_dir, "", mlflow_run_id, records, correct, epochs)


def compound_coverage(run_dir: Path, test_set: str) -> list[float] | None:
    """Per round, the share of the test set's distinct compounds present in the training pool, under the
    split's own quantity labeler (None without one: a random split has no labeler)."""
    from tasks.dbca.atoms import QuantityLabeler, compounds_of

    labeler_path = run_dir / "data" / "quantity_labeler.json"
    test_path = run_dir / "data" / f"test_{test_set}.jsonl"
    if not labeler_path.exists() or not test_path.exists():
        return None
    labeler = QuantityLabeler.from_dict(json.loads(labeler_path.read_text(encoding="utf-8")))
    test = read_problems_jsonl(test_path)
    out = []
    for r in rundir.completed_rounds(run_dir):
        pool = read_problems_jsonl(rundir.round_dir(run_dir, r) / "pool.jsonl")
        clusters = labeler.clusters(pool + test)
        wanted = {c for p in test for c in compounds_of(p, clusters)}
        present = {c for p in pool for c in compounds_of(p, clusters)}
        out.append(len(wanted & present) / len(wanted) if wanted else 0.0)
    return out


def kept_sample(run_dir: Path, round_index: int = 1, limit: int = 4) -> list[dict[str, Any]]:
    """Kept problems of a round beside their parents' texts."""
    path = rundir.round_dir(run_dir, round_index) / "kept.jsonl"
    if not path.exists():
        return []
    pool = {p.id: p for p in read_problems_jsonl(rundir.round_dir(run_dir, round_index - 1) / "pool.jsonl")}
    out = []
    for problem, score in rundir.read_scored(path)[:limit]:
        out.append({"operator": problem.provenance.operator, "text": problem.text, "confidence": round(score, 3),
                    "parents": [pool[p].text for p in problem.provenance.parents if p in pool]})
    return out


@dataclass(frozen=True)
class KeptDiversity:
    kept: int  # problems kept over rounds 1..T
    distinct: int  # distinct (expression, quantity values) among them: a renaming is the same problem
    origins: int  # distinct original problems they descend from (provenance.parents through the pool)


def kept_diversity(result: CellResult) -> KeptDiversity:
    """How many different problems a cell's retention kept over its rounds: the confidence ranker tends
    to keep many renamings of a few easy problems (docs/study.md)."""
    rounds = [rec.round for rec in result.records if rec.round > 0]
    paths = [rundir.round_dir(result.run_dir, r) / "kept.jsonl" for r in rounds]
    kept = [p for path in paths if path.exists() for p, _ in rundir.read_scored(path)]
    final_pool = rundir.round_dir(result.run_dir, result.records[-1].round) / "pool.jsonl" if rounds else None
    known = read_problems_jsonl(final_pool) if final_pool and final_pool.exists() else []
    roots = {o for parents in origins(kept, known).values() for o in parents}
    distinct = {(p.expression, tuple(q.value for q in p.quantities)) for p in kept}
    return KeptDiversity(len(kept), len(distinct), len(roots))
