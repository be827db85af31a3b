"""The synthetic-data (SD) part of a study report (paper 003 Tables 1 and 4 on SD): per arm, SD test
accuracy, structural and lexical accuracy from the split's labels with paired intervals against the
control, validation accuracy, what was kept (per operator, distinct original problems), per round the
share of the SD test set's compounds present in the pool, and kept problems beside their parents to
read. Every number comes from the cells' own records (tasks/study/cells.py)."""
from __future__ import annotations

import random
from collections import defaultdict
from typing import Sequence

from mwp.expr import BinOp, Expr, Num, Qty
from mwp.problem import read_problems_jsonl
from tasks.loop import rundir
from tasks.study.cells import CellResult, compound_coverage, kept_diversity
from tasks.study.stats import Interval, format_interval as _interval, format_values as _mean, paired_bootstrap

SD = "sd"  # the test set (and split) name of an SD study
KINDS = ("structural", "lexical")


def kind_accuracy(result: CellResult, labels: dict[str, str], kind: str) -> float | None:
    """Answer accuracy of the cell's final round on the SD test problems labelled ``kind``."""
    correct = result.correct.get(SD, {})
    ids = [i for i in correct if labels.get(i) == kind]
    return sum(correct[i] for i in ids) / len(ids) if ids else None


def kind_difference(arm: dict[int, CellResult], control: dict[int, CellResult], labels: dict[str, str],
                    kind: str | None) -> Interval | None:
    """Paired bootstrap of arm - control over the seeds both ran, on the SD problems of ``kind`` (all
    of them when None)."""
    seeds = sorted(set(arm) & set(control))
    if not seeds:
        return None

    def only(result: CellResult) -> dict[str, bool]:
        correct = result.correct.get(SD, {})
        return {i: ok for i, ok in correct.items() if kind is None or labels.get(i) == kind}

    try:
        return paired_bootstrap({s: only(arm[s]) for s in seeds}, {s: only(control[s]) for s in seeds})
    except ValueError:
        return None


def _kept_by_operator(results: Sequence[CellResult]) -> str:
    """Problems kept over rounds 1..T per operator, the mean over seeds."""
    totals: dict[str, list[int]] = defaultdict(list)
    operators = sorted({op for r in results for rec in r.records if rec.generation
                        for op in (*rec.generation.kept_by_operator, *rec.generation.verified_by_operator)})
    for r in results:
        for op in operators:
            totals[op].append(sum(rec.generation.kept_by_operator.get(op, 0) for rec in r.records if rec.generation))
    return ", ".join(f"{op} {sum(v) / len(v):.0f}" for op, v in totals.items()) or "-"


def sd_table(by_arm: dict[str, dict[int, CellResult]], labels: dict[str, str], control: str = "control") -> list[str]:
    """One row per arm: accuracies at the final round (mean ± std over seeds), arm - control paired
    intervals on the whole SD test set and on its structural problems, validation accuracy, what it kept."""
    lines = ["| arm | seeds | SD test | structural | lexical | SD test - control | structural - control | "
             "validation | kept per operator (rounds 1..T, mean) | original problems kept |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    base = by_arm.get(control, {})
    for arm, cells in by_arm.items():
        results = list(cells.values())
        accs = [r.accuracy(SD) for r in results if r.accuracy(SD) is not None]
        kinds = {k: [a for a in (kind_accuracy(r, labels, k) for r in results) if a is not None] for k in KINDS}
        valid = [r.final.valid_answer_acc for r in results if r.final and r.final.valid_answer_acc is not None]
        diff_all = kind_difference(cells, base, labels, None) if arm != control else None
        diff_struct = kind_difference(cells, base, labels, "structural") if arm != control else None
        origins = [kept_diversity(r).origins for r in results] if any(r.final and r.final.round for r in results) \
            else []
        lines.append(f"| {arm} | {len(results)} | {_mean(accs)} | {_mean(kinds['structural'])} | "
                     f"{_mean(kinds['lexical'])} | {_interval(diff_all)} | {_interval(diff_struct)} | {_mean(valid)} | "
                     f"{_kept_by_operator(results)} | {'-' if not origins else f'{min(origins)}-{max(origins)}'} |")
    return lines


def coverage_table(by_arm: dict[str, dict[int, CellResult]]) -> list[str]:
    """Per arm and round, the share of the SD test set's distinct compounds (sub-expression templates
    over the split's quantity labels) present in the training pool, the mean over seeds."""
    rows: dict[str, list[list[float]]] = {}
    for arm, cells in by_arm.items():
        per_seed = [c for c in (compound_coverage(r.run_dir, SD) for r in cells.values()) if c]
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


def shape(expr: Expr) -> str:
    """An expression's shape: its operators, every quantity written ``N`` and the operands of ``+`` and ``*``
    ordered, so that a composition matches a test template whatever the order its text gives the
    quantities (``+ N2 * N0 N1`` and ``+ * N0 N1 N2`` are both ``((N * N) + N)``)."""
    if not isinstance(expr, BinOp):
        return "N" if isinstance(expr, Qty) else (expr.text if isinstance(expr, Num) else str(expr))
    left, right = shape(expr.left), shape(expr.right)
    if expr.op in ("+", "*") and right < left:
        left, right = right, left
    return f"({left} {expr.op} {right})"


def shape_table(by_arm: dict[str, dict[int, CellResult]], labels: dict[str, str]) -> list[str]:
    """Per arm and shape of the structural SD test problems: the final round's accuracy on the problems of
    that shape and how many problems of that shape its final pool holds (means over seeds). Whether a
    composition the test asks for ever reached the pool, and whether having it there helped."""
    per_arm: dict[str, list[tuple[dict[str, list[bool]], dict[str, int]]]] = {}
    shapes: dict[str, int] = {}
    for arm, cells in by_arm.items():
        for result in cells.values():
            correct = result.correct.get(SD, {})
            test_path = result.run_dir / "data" / f"test_{SD}.jsonl" if result.run_dir else None
            if not correct or result.final is None or test_path is None or not test_path.exists():
                continue
            by_shape: dict[str, list[bool]] = defaultdict(list)
            for problem in read_problems_jsonl(test_path):
                if labels.get(problem.id) == "structural" and problem.id in correct:
                    by_shape[shape(problem.expression)].append(bool(correct[problem.id]))
            pool: dict[str, int] = defaultdict(int)
            for problem in read_problems_jsonl(rundir.round_dir(result.run_dir, result.final.round) / "pool.jsonl"):
                pool[shape(problem.expression)] += 1
            per_arm.setdefault(arm, []).append((by_shape, pool))
            for key, values in by_shape.items():
                shapes[key] = len(values)
    if not per_arm:
        return []
    ordered = sorted(shapes, key=lambda k: (-shapes[k], k))
    lines = ["| arm | " + " | ".join(f"`{k}` ({shapes[k]})" for k in ordered) + " |", "|---|" + "---|" * len(ordered)]
    for arm, seeds in per_arm.items():
        cols = []
        for key in ordered:
            accs = [sum(b[key]) / len(b[key]) for b, _ in seeds if b.get(key)]
            in_pool = sum(p.get(key, 0) for _, p in seeds) / len(seeds)
            cols.append(f"{(sum(accs) / len(accs)) if accs else 0:.3f} · {in_pool:.1f}")
        lines.append(f"| {arm} | " + " | ".join(cols) + " |")
    return lines


def _score_name(result: CellResult) -> str:
    """The ranking score the cell ran with, from its own params.json (``loop.score``)."""
    import json

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
        rd = rundir.round_dir(result.run_dir, rec.round)
        path = rd / "kept.jsonl"
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


def sd_sections(by_arm: dict[str, dict[int, CellResult]], labels: dict[str, str], control: str = "control",
                read: int = 30) -> list[str]:
    """The report's SD sections (empty without SD labels)."""
    if not labels or not by_arm:
        return []
    counts = {k: sum(v == k for v in labels.values()) for k in KINDS}
    lines = ["## SD: arms against the control (paper 003 Tables 1 and 4)", "",
             f"The SD test set holds {counts['structural']} structural and {counts['lexical']} lexical problems "
             "(the split's labels). Intervals: paired bootstrap over seeds and test problems, 95%.", "",
             *sd_table(by_arm, labels, control), ""]
    coverage = coverage_table(by_arm)
    if coverage:
        lines += ["## SD test compounds present in the pool, by round", "", *coverage, ""]
    shapes = shape_table(by_arm, labels)
    if shapes:
        lines += ["## Structural test problems by shape: accuracy and the final pool", "",
                  "Each column is a shape of the structural SD test problems (operators, quantities as N, "
                  "operands of + and * ordered) with its number of test problems; each entry is the final "
                  "round's accuracy on them · the problems of that shape in the final pool (means over seeds).",
                  "", *shapes, ""]
    lines += ["## Kept problems to read", ""]
    for arm, cells in by_arm.items():
        if not cells or not any(rec.generation for r in cells.values() for rec in r.records):
            continue
        first = cells[min(cells)]
        score = _score_name(first)
        lines += [f"### {arm}, seed {first.cell.seed}", "", f"Score: the arm's ranking score ({score}; "
                  "uncertainty is 1 - confidence).", "", *kept_to_read(first, read), ""]
    return lines
