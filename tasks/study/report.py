"""The study report: markdown tables in the shape of paper 003's Tables 1, 4 and 5 and PNG figures
(Figure 6a/6b, the control's validation curve), every number taken from the cells' own records.
Accuracies are read at the cell's final round (round T for loop arms, never the best round)."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

from mwp.durable import write_json_durable, write_text_durable
from tasks.study.cells import CellResult, compound_coverage, kept_diversity, kept_sample, main_set
from tasks.study.stats import Interval, mean_std, paired_bootstrap


def _fmt(values: Sequence[float]) -> str:
    if not values:
        return "-"
    mean, std = mean_std(values)
    return f"{mean:.3f} ± {std:.3f} (n={len(values)})"


def _interval(iv: Interval | None) -> str:
    if iv is None:
        return "-"
    mark = "" if iv.excludes_zero else ", includes 0"
    return f"{iv.difference:+.3f} [{iv.low:+.3f}, {iv.high:+.3f}{mark}]"


class Study:
    """The finished cells, indexed by (solver, split, arm) -> seed -> result."""

    def __init__(self, results: Sequence[CellResult]):
        self.results = list(results)
        self.by: dict[tuple[str, str, str], dict[int, CellResult]] = defaultdict(dict)
        for r in self.results:
            if r.status == "done":
                self.by[(r.cell.solver, r.cell.split, r.cell.arm)][r.cell.seed] = r
        self.solvers = sorted({r.cell.solver for r in self.results})
        self.splits = list(dict.fromkeys(r.cell.split for r in self.results))
        self.arms = list(dict.fromkeys(r.cell.arm for r in self.results))

    def accuracies(self, solver: str, split: str, arm: str) -> list[float]:
        out = []
        for r in self.by.get((solver, split, arm), {}).values():
            name = main_set(r)
            if name is not None:
                out.append(r.accuracy(name))
        return out

    def difference(self, solver: str, split: str, arm: str, baseline: str = "control") -> Interval | None:
        a, b = self.by.get((solver, split, arm), {}), self.by.get((solver, split, baseline), {})
        seeds = sorted(set(a) & set(b))
        if not seeds:
            return None
        name = main_set(a[seeds[0]])
        try:
            return paired_bootstrap({s: a[s].correct.get(name, {}) for s in seeds},
                                    {s: b[s].correct.get(name, {}) for s in seeds})
        except ValueError:
            return None


def cells_table(study: Study, tracking_uri: str) -> list[str]:
    lines = ["| cell | status | final round | test accuracy (set) | final pool | train s | MLflow run |",
             "|---|---|---|---|---|---|---|"]
    for r in study.results:
        if r.status != "done":
            status = f"**failed**: {r.error}" if r.status == "failed" else r.error
            lines.append(f"| {r.cell.key} | {status} | - | - | - | - | {r.mlflow_run_id or '-'} |")
            continue
        final = r.final
        accs = ", ".join(f"{m.answer_acc:.3f} ({n})" for n, m in final.tests.items())
        train_s = sum(rec.train_seconds for rec in r.records)
        lines.append(f"| {r.cell.key} | done | {final.round} | {accs} | {final.pool_size} | {train_s:.0f} | "
                     f"`{r.mlflow_run_id}` at {tracking_uri} |")
    return lines


def table1(study: Study) -> list[str]:
    """Answer accuracy per solver and split without (control) and with the loop, the paired difference,
    and the relative gap Acc_iid / Acc_comdiv - 1 from models trained on each split."""
    lines = ["| solver | split | control | loop | loop - control [95% paired bootstrap] |", "|---|---|---|---|---|"]
    for solver in study.solvers:
        for split in study.splits:
            lines.append(f"| {solver} | {split} | {_fmt(study.accuracies(solver, split, 'control'))} | "
                         f"{_fmt(study.accuracies(solver, split, 'loop'))} | "
                         f"{_interval(study.difference(solver, split, 'loop'))} |")
    if "iid" in study.splits and "comdiv" in study.splits:
        lines += ["", "| solver | arm | relative gap Acc_iid / Acc_comdiv - 1 (means over seeds) |", "|---|---|---|"]
        for solver in study.solvers:
            for arm in ("control", "loop"):
                iid, comdiv = study.accuracies(solver, "iid", arm), study.accuracies(solver, "comdiv", arm)
                if iid and comdiv and mean_std(comdiv)[0] > 0:
                    lines.append(f"| {solver} | {arm} | {mean_std(iid)[0] / mean_std(comdiv)[0] - 1:.3f} |")
    return lines


def table4(study: Study, labels: dict[str, str]) -> list[str]:
    """SD accuracy on structural vs lexical test problems (labels from the SD split file)."""
    if not labels or "sd" not in study.splits:
        return []
    lines = ["| solver | arm | structural | lexical |", "|---|---|---|---|"]
    for solver in study.solvers:
        for arm in study.arms:
            by_kind: dict[str, list[float]] = defaultdict(list)
            for r in study.by.get((solver, "sd", arm), {}).values():
                correct = r.correct.get("sd", {})
                for kind in ("structural", "lexical"):
                    ids = [i for i, k in labels.items() if k == kind and i in correct]
                    if ids:
                        by_kind[kind].append(sum(correct[i] for i in ids) / len(ids))
            lines.append(f"| {solver} | {arm} | {_fmt(by_kind['structural'])} | {_fmt(by_kind['lexical'])} |")
    return lines


def table5(study: Study) -> list[str]:
    """Every arm against the control: accuracy and the paired difference (the ablations of Table 5)."""
    lines = ["| solver | split | arm | accuracy | arm - control [95% paired bootstrap] |", "|---|---|---|---|---|"]
    for solver in study.solvers:
        for split in study.splits:
            for arm in study.arms:
                diff = study.difference(solver, split, arm) if arm != "control" else None
                lines.append(f"| {solver} | {split} | {arm} | {_fmt(study.accuracies(solver, split, arm))} | "
                             f"{_interval(diff)} |")
    return lines


def warm_start_table(study: Study) -> list[str]:
    """The warm-start arm against the loop retrained from scratch (issue #18's fast mode): accuracy at
    round T, training seconds summed over rounds 0..T, and the paired difference warm-start - loop; with
    the ``warm-control`` arm also warm-start - warm-control (the added problems, at equal training)."""
    if "warm-start" not in study.arms or "loop" not in study.arms:
        return []
    control = "warm-control" in study.arms
    lines = ["| solver | split | loop (from scratch) | warm-start | warm-start - loop [95% paired bootstrap] | "
             "train s, loop | train s, warm-start |" + (" warm-control | warm-start - warm-control |" if control else ""),
             "|---|---|---|---|---|---|---|" + ("---|---|" if control else "")]
    for solver in study.solvers:
        for split in study.splits:
            seconds = {arm: [sum(rec.train_seconds for rec in r.records)
                             for r in study.by.get((solver, split, arm), {}).values()] for arm in ("loop", "warm-start")}
            lines.append(f"| {solver} | {split} | {_fmt(study.accuracies(solver, split, 'loop'))} | "
                         f"{_fmt(study.accuracies(solver, split, 'warm-start'))} | "
                         f"{_interval(study.difference(solver, split, 'warm-start', baseline='loop'))} | "
                         f"{_fmt(seconds['loop']).split(' (')[0] if seconds['loop'] else '-'} | "
                         f"{_fmt(seconds['warm-start']).split(' (')[0] if seconds['warm-start'] else '-'} |"
                         + (f" {_fmt(study.accuracies(solver, split, 'warm-control'))} | "
                            f"{_interval(study.difference(solver, split, 'warm-start', baseline='warm-control'))} |"
                            if control else ""))
    return lines


RETENTION_ARMS = ("loop", "random-ranker", "per-origin")  # the same loop, kept by another rule


def _span(values: Sequence[int]) -> str:
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)}-{max(values)}"


def retention_table(study: Study) -> list[str]:
    """The retention arms beside the loop's top fraction by confidence: how many problems each kept over
    rounds 1..T, how many of them are distinct problems and how many original problems they come from
    (the range over seeds), its accuracy at round T and the paired difference arm - loop."""
    arms = [a for a in RETENTION_ARMS if a in study.arms]
    if "loop" not in arms or len(arms) < 2:
        return []
    lines = ["| solver | split | arm | kept, rounds 1..T | distinct problems | original problems | accuracy | "
             "arm - loop [95% paired bootstrap] |", "|---|---|---|---|---|---|---|---|"]
    for solver in study.solvers:
        for split in study.splits:
            for arm in arms:
                cells = study.by.get((solver, split, arm), {})
                if not cells:
                    continue
                counts = [kept_diversity(r) for r in cells.values()]
                diff = _interval(study.difference(solver, split, arm, baseline="loop")) if arm != "loop" else "-"
                lines.append(f"| {solver} | {split} | {arm} | {_span([c.kept for c in counts])} | "
                             f"{_span([c.distinct for c in counts])} | {_span([c.origins for c in counts])} | "
                             f"{_fmt(study.accuracies(solver, split, arm))} | {diff} |")
    return lines


def beyond(study: Study) -> list[str]:
    """Per round of the first seed's loop cell: compounds of the test set present in the pool, DBCA^c
    pool -> test, kept per operator; and kept problems beside their parents."""
    lines = []
    for solver in study.solvers:
        for split in study.splits:
            cells = study.by.get((solver, split, "loop"), {})
            if not cells:
                continue
            r = cells[min(cells)]
            name = main_set(r)
            coverage = compound_coverage(r.run_dir, name) if name else None
            lines += [f"**{solver}, {split}, seed {r.cell.seed}**", "",
                      "| round | pool | test compounds in pool | DBCA^c pool -> test | kept per operator |",
                      "|---|---|---|---|---|"]
            for i, rec in enumerate(r.records):
                kept = rec.generation.kept_by_operator if rec.generation else {}
                cov = f"{coverage[i]:.3f}" if coverage and i < len(coverage) else "-"
                div = f"{rec.compound_divergence:.3f}" if rec.compound_divergence is not None else "-"
                lines.append(f"| {rec.round} | {rec.pool_size} | {cov} | {div} | {kept or '-'} |")
            lines.append("")
            for sample in kept_sample(r.run_dir):
                parents = " / ".join(sample["parents"])
                lines.append(f"- *{sample['operator']}* ({sample['confidence']}): {sample['text']}  \n"
                             f"  from: {parents}")
            lines.append("")
    return lines


def write_report(results: Sequence[CellResult], directory: Path, header: Sequence[str], tracking_uri: str,
                 sd_labels: dict[str, str] | None = None, divergences: dict[str, float] | None = None) -> dict[str, Any]:
    """report.md and the figures in ``directory``; returns their paths."""
    from tasks.study.figures import accuracy_by_round, accuracy_vs_divergence, control_curves

    study = Study(results)
    directory.mkdir(parents=True, exist_ok=True)
    figures = {"fig6b_accuracy_by_round.png": accuracy_by_round(study),
               "control_validation_curve.png": control_curves(study)}
    if divergences:
        figures["fig6a_accuracy_vs_divergence.png"] = accuracy_vs_divergence(study, divergences)
    for name, fig in figures.items():
        fig.savefig(directory / name, dpi=110)
    lines = [*header, "", "## Cells", "", *cells_table(study, tracking_uri), "",
             "## Table 1: answer accuracy at the final round, with and without the loop", "", *table1(study), "",
             "## Table 5: arms against the control", "", *table5(study), ""]
    warm = warm_start_table(study)
    if warm:
        lines += ["## Warm-started rounds against retraining from scratch", "", *warm, ""]
    retention = retention_table(study)
    if retention:
        lines += ["## Which problems each retention keeps", "", *retention, ""]
    sd = table4(study, sd_labels or {})
    if sd:
        lines += ["## Table 4: SD structural vs lexical", "", *sd, ""]
    lines += ["## Figures", ""] + [f"![{name}]({name})" for name in figures] + ["", "## Per round (beyond the paper)",
                                                                                  "", *beyond(study)]
    report = directory / "report.md"
    write_text_durable(report, "\n".join(lines) + "\n")
    summary = {"cells": len(study.results), "failed": [r.cell.key for r in study.results if r.status == "failed"],
               "pending": [r.cell.key for r in study.results if r.status == "pending"],
               "report": str(report), "figures": [str(directory / n) for n in figures]}
    write_json_durable(directory / "summary.json", summary, indent=1)
    return summary
