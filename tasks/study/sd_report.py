"""The synthetic-data (SD) part of a study report (paper 003 Tables 1 and 4 on SD): per arm, SD test
accuracy, structural and lexical accuracy from the split's labels with paired intervals against the
control, validation accuracy, what was kept (per operator, distinct original problems), per round the
share of the SD test set's compounds present in the pool, and kept problems beside their parents to
read. The pieces any split has are tasks/study/arm_report.py's; this module adds the structural and lexical
columns and the table by shape. Every number comes from the cells' own records (tasks/study/cells.py)."""
from __future__ import annotations

from collections import defaultdict

from mwp.expr import BinOp, Expr, Num, Qty
from mwp.problem import read_problems_jsonl
from tasks.loop import rundir
from tasks.study.arm_report import (coverage_table, difference, kept_by_operator, origins_span, reading_sections,
                                    validation)
from tasks.study.cells import CellResult
from tasks.study.stats import Interval, format_interval as _interval, format_values as _mean

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
    return difference(arm, control, SD, None if kind is None else (lambda i: labels.get(i) == kind))


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
        valid = validation(results)
        diff_all = kind_difference(cells, base, labels, None) if arm != control else None
        diff_struct = kind_difference(cells, base, labels, "structural") if arm != control else None
        lines.append(f"| {arm} | {len(results)} | {_mean(accs)} | {_mean(kinds['structural'])} | "
                     f"{_mean(kinds['lexical'])} | {_interval(diff_all)} | {_interval(diff_struct)} | {_mean(valid)} | "
                     f"{kept_by_operator(results)} | {origins_span(results)} |")
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
    coverage = coverage_table(by_arm, SD)
    if coverage:
        lines += ["## SD test compounds present in the pool, by round", "", *coverage, ""]
    shapes = shape_table(by_arm, labels)
    if shapes:
        lines += ["## Structural test problems by shape: accuracy and the final pool", "",
                  "Each column is a shape of the structural SD test problems (operators, quantities as N, "
                  "operands of + and * ordered) with its number of test problems; each entry is the final "
                  "round's accuracy on them · the problems of that shape in the final pool (means over seeds).",
                  "", *shapes, ""]
    return lines + reading_sections(by_arm, "## Kept problems to read", read)
