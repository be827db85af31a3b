"""What each arm of a study kept, for any split: per arm its accuracy at the final round with the paired
interval against the control, validation accuracy, the problems it kept per operator and the original
problems they come from, per round the share of the test set's compounds present in the pool, and kept
problems beside their parents to read. The SD part of a report (tasks/study/sd_report.py) adds the
structural and lexical columns on top of the same pieces. Every number comes from the cells' own records."""
from __future__ import annotations

import json
import random
from collections import defaultdict
from typing import Callable, Mapping, Sequence

from mwp.problem import read_problems_jsonl
from tasks.loop import rundir
from tasks.study.cells import CellResult, compound_coverage, kept_diversity, main_set
from tasks.study.stats import Interval, format_interval, format_values, paired_bootstrap

Cells = Mapping[int, CellResult]  # seed -> the cell's result


def difference(arm: Cells, control: Cells, test: str,
               keep: Callable[[str], bool] | None = None) -> Interval | None:
    """Paired bootstrap of arm - control over the seeds both ran, on the problems of ``test`` that
    ``keep`` accepts (all when None)."""
    seeds = sorted(set(arm) & set(control))
    if not seeds:
        return None

    def only(result: CellResult) -> dict[str, bool]:
        return {i: ok for i, ok in result.correct.get(test, {}).items() if keep is None or keep(i)}

    try:
        return paired_bootstrap({s: only(arm[s]) for s in seeds}, {s: only(control[s]) for s in seeds})
    except ValueError:
        return None


def kept_by_operator(results: Sequence[CellResult]) -> str:
    """Problems kept over rounds 1..T per operator, the mean over seeds."""
    totals: dict[str, list[int]] = defaultdict(list)
    operators = sorted({op for r in results for rec in r.records if rec.generation
                        for op in (*rec.generation.kept_by_operator, *rec.generation.verified_by_operator)})
    for r in results:
        for op in operators:
            totals[op].append(sum(rec.generation.kept_by_operator.get(op, 0) for rec in r.records if rec.generation))
    return ", ".join(f"{op} {sum(v) / len(v):.0f}" for op, v in totals.items()) or "-"


def origins_span(results: Sequence[CellResult]) -> str:
    """The range over seeds of how many original problems the kept problems come from."""
    origins = [kept_diversity(r).origins for r in results if r.final and r.final.round]
    return "-" if not origins else f"{min(origins)}-{max(origins)}"


def validation(results: Sequence[CellResult]) -> list[float]:
    return [r.final.valid_answer_acc for r in results if r.final and r.final.valid_answer_acc is not None]


def coverage_table(by_arm: Mapping[str, Cells], test: str) -> list[str]:
    """Per arm and round, the share of the test set's distinct compounds (sub-expression templates over
    the split's quantity labels) present in the training pool, the mean over seeds; empty without a
    labeler (a random split)."""
    rows: dict[str, list[list[float]]] = {}
    for arm, cells in by_arm.items():
        per_seed = [c for c in (compound_coverage(r.run_dir, test) for r in cells.values()) if c]
        if per_seed:
            rows[arm] = per_seed
    if not rows:
        return []
    depth = max(len(c) for seeds in rows.values() for c in seeds)
    lines = ["| arm | " + " | ".join(f"round {i}" for i in range(depth)) + " |", "|---|" + "---|" * depth]
    for arm, seeds in rows.items():
        cols = []
        for i in range(depth):
            values = [c[i] for c in seeds if i < len(c)]
            cols.append(f"{sum(values) / len(values):.3f}" if values else "-")
        lines.append(f"| {arm} | " + " | ".join(cols) + " |")
    return lines


def score_name(result: CellResult) -> str:
    """The ranking score the cell ran with, from its own params.json (``loop.score``)."""
    path = result.run_dir / "params.json" if result.run_dir else None
    if path is None or not path.exists():
        return "its ranking score"
    return json.loads(path.read_text(encoding="utf-8")).get("loop", {}).get("score", "confidence")


def kept_to_read(result: CellResult, limit: int = 30, seed: int = 0) -> list[str]:
    """``limit`` problems the cell kept over its rounds (a seeded draw, spread over rounds), each with its
    operator, confidence and its parents' texts, as markdown lines."""
    drawn = []
    for rec in result.records:
        if not rec.generation:
            continue
        path = rundir.round_dir(result.run_dir, rec.round) / "kept.jsonl"
        if not path.exists():
            continue
        pool = {p.id: p for p in read_problems_jsonl(rundir.round_dir(result.run_dir, rec.round - 1) / "pool.jsonl")}
        drawn += [(rec.round, problem, score, pool) for problem, score in rundir.read_scored(path)]
    rng = random.Random(seed)
    sample = sorted(rng.sample(range(len(drawn)), min(limit, len(drawn))))
    lines = []
    for i in sample:
        r, problem, score, pool = drawn[i]
        parents = " / ".join(pool[p].text for p in problem.provenance.parents if p in pool)
        lines.append(f"{len(lines) + 1}. round {r}, *{problem.provenance.operator}*, score {score:.3f}: "
                     f"{problem.text} = `{' '.join(problem.prefix())}` = {float(problem.answer):g}  \n"
                     f"   from: {parents or '-'}")
    return lines


def reading_sections(by_arm: Mapping[str, Cells], heading: str, read: int = 30) -> list[str]:
    """``read`` kept problems of the first seed of every arm that kept any, under ``heading``."""
    lines = [heading, ""]
    for arm, cells in by_arm.items():
        if not cells or not any(rec.generation for r in cells.values() for rec in r.records):
            continue
        first = cells[min(cells)]
        lines += [f"### {arm}, seed {first.cell.seed}", "", f"Score: the arm's ranking score ({score_name(first)}; "
                  "uncertainty is 1 - confidence).", "", *kept_to_read(first, read), ""]
    return lines


def arm_sections(by_arm: Mapping[str, Cells], split: str, control: str = "control", read: int = 30) -> list[str]:
    """The report's per-arm sections for one solver on a split other than SD (empty when no arm kept
    anything): the arms table, compounds present by round, kept problems to read."""
    if not any(rec.generation for cells in by_arm.values() for r in cells.values() for rec in r.records):
        return []
    base = by_arm.get(control, {})
    test = next((main_set(r) for cells in by_arm.values() for r in cells.values() if main_set(r)), split)
    lines = [f"## {split}: what each arm kept", "",
             f"Answer accuracy on the `{test}` test set at the final round; arm - {control}: paired bootstrap "
             "over seeds and test problems, 95%; kept: problems added over rounds 1..T (mean over seeds); "
             "original problems: how many problems of the original pool the kept ones descend from (range over seeds).",
             "", f"| arm | seeds | test | arm - {control} | validation | kept per operator | original problems kept |",
             "|---|---|---|---|---|---|---|"]
    for arm, cells in by_arm.items():
        results = list(cells.values())
        accs = [a for a in (r.accuracy(test) for r in results) if a is not None]
        diff = difference(cells, base, test) if arm != control else None
        lines.append(f"| {arm} | {len(results)} | {format_values(accs)} | {format_interval(diff)} | "
                     f"{format_values(validation(results))} | {kept_by_operator(results)} | {origins_span(results)} |")
    coverage = coverage_table(by_arm, test)
    if coverage:
        lines += ["", f"### `{test}` test compounds present in the pool, by round", "", *coverage]
    return lines + ["", *reading_sections(by_arm, f"## {split}: kept problems to read", read)]
