"""The study report: markdown tables in the shape of paper 003's Tables 1, 4 and 5 and PNG figures
(Figure 6a/6b, the control's validation curve), every number taken from the cells' own records.
Accuracies are read at the cell's final round (round T for loop arms, never the best round). Which
arms a table shows, and against which baseline, is each arm's record (tasks/study/arms.py)."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Sequence

from mwp.durable import write_json_durable, write_text_durable
from tasks.loop.round_zero import adopted_from
from tasks.study.arm_report import arm_sections
from tasks.study.arms import ARMS, PER_ROUND, RETENTION, TABLE1, TABLE5, WARM_START, in_table
from tasks.study.cells import CellResult, compound_coverage, kept_diversity, kept_sample, main_set
from tasks.study.sd_report import SD, sd_sections
from tasks.study.stats import (FEW_SEEDS, Interval, format_interval as _interval, format_values as _fmt, mean_std,
                               paired_bootstrap)


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

    def difference(self, solver: str, split: str, arm: str, baseline: str) -> Interval | None:
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
        adopted = r.run_dir is not None and adopted_from(r.run_dir, 0) is not None
        train_s = sum(rec.train_seconds for rec in r.records[1 if adopted else 0:])
        shown = f"{train_s:.0f}" + (" (round 0 adopted)" if adopted else "")
        lines.append(f"| {r.cell.key} | done | {final.round} | {accs} | {final.pool_size} | {shown} | "
                     f"`{r.mlflow_run_id}` at {tracking_uri} |")
    return lines


def _pairs(table: str, names) -> list[tuple[str, str]]:
    """(arm, its first baseline) for the arms of ``names`` in ``table`` that have a baseline."""
    return [(a.name, a.baselines(table)[0]) for a in in_table(table, names) if a.baselines(table)]


def table1(study: Study) -> list[str]:
    """Answer accuracy per solver and split without (the baseline) and with the loop, the paired
    difference, and the relative gap Acc_iid / Acc_comdiv - 1 from models trained on each split. The
    pairs are the Table 1 arms of the registry, shown ("-") whether or not the study ran them."""
    lines = []
    for arm, baseline in _pairs(TABLE1, ARMS):
        lines += [f"| solver | split | {baseline} | {arm} | {arm} - {baseline} [95% paired bootstrap] |",
                  "|---|---|---|---|---|"]
        for solver in study.solvers:
            for split in study.splits:
                lines.append(f"| {solver} | {split} | {_fmt(study.accuracies(solver, split, baseline))} | "
                             f"{_fmt(study.accuracies(solver, split, arm))} | "
                             f"{_interval(study.difference(solver, split, arm, baseline))} |")
        if "iid" in study.splits and "comdiv" in study.splits:
            lines += ["", "| solver | arm | relative gap Acc_iid / Acc_comdiv - 1 (means over seeds) |", "|---|---|---|"]
            for solver in study.solvers:
                for name in (baseline, arm):
                    iid, comdiv = study.accuracies(solver, "iid", name), study.accuracies(solver, "comdiv", name)
                    if iid and comdiv and mean_std(comdiv)[0] > 0:
                        lines.append(f"| {solver} | {name} | {mean_std(iid)[0] / mean_std(comdiv)[0] - 1:.3f} |")
    return lines


def table5(study: Study) -> list[str]:
    """Every Table 5 arm against its baseline (the control): accuracy and the paired difference (the
    ablations of Table 5)."""
    arms = in_table(TABLE5, study.arms)
    baseline = next((b for a in arms for b in a.baselines(TABLE5)), "baseline")
    lines = [f"| solver | split | arm | accuracy | arm - {baseline} [95% paired bootstrap] |", "|---|---|---|---|---|"]
    for solver in study.solvers:
        for split in study.splits:
            for arm in arms:
                diff = study.difference(solver, split, arm.name, arm.baselines(TABLE5)[0]) \
                    if arm.baselines(TABLE5) else None
                lines.append(f"| {solver} | {split} | {arm.name} | {_fmt(study.accuracies(solver, split, arm.name))} | "
                             f"{_interval(diff)} |")
    return lines


def _seconds(study: Study, solver: str, split: str, arm: str) -> str:
    """The mean over seeds of the training seconds summed over rounds 0..T."""
    values = [sum(rec.train_seconds for rec in r.records) for r in study.by.get((solver, split, arm), {}).values()]
    return _fmt(values).split(" (")[0] if values else "-"


def warm_start_table(study: Study) -> list[str]:
    """Each warm-start table arm with baselines (the warm-start arm) against its first baseline (the loop
    retrained from scratch): accuracy at round T, training seconds summed over rounds 0..T and the paired
    difference; then against each further baseline the study has (warm-control: the added problems, at
    equal training)."""
    lines: list[str] = []
    for arm in in_table(WARM_START, study.arms):
        first, *more = arm.baselines(WARM_START) or (None,)
        if first is None or first not in study.arms:
            continue
        more = [b for b in more if b in study.arms]
        a = arm.name
        lines += [f"| solver | split | {first} (from scratch) | {a} | {a} - {first} [95% paired bootstrap] | "
                  f"train s, {first} | train s, {a} |" + "".join(f" {b} | {a} - {b} |" for b in more),
                  "|---|---|---|---|---|---|---|" + "---|---|" * len(more)]
        for solver in study.solvers:
            for split in study.splits:
                lines.append(f"| {solver} | {split} | {_fmt(study.accuracies(solver, split, first))} | "
                             f"{_fmt(study.accuracies(solver, split, a))} | "
                             f"{_interval(study.difference(solver, split, a, first))} | "
                             f"{_seconds(study, solver, split, first)} | {_seconds(study, solver, split, a)} |"
                             + "".join(f" {_fmt(study.accuracies(solver, split, b))} | "
                                       f"{_interval(study.difference(solver, split, a, b))} |" for b in more))
    return lines


def _span(values: Sequence[int]) -> str:
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)}-{max(values)}"


def retention_table(study: Study) -> list[str]:
    """The retention table's arms (each ranking or retention rule) beside their baseline, the loop's top
    fraction by confidence: how many problems each kept over rounds 1..T, how many of them are distinct
    problems and how many original problems they come from (the range over seeds), its accuracy at round
    T and the paired difference arm - baseline. Arms whose baseline the study lacks are left out."""
    members = in_table(RETENTION, study.arms)
    compared = [a for a in members if a.baselines(RETENTION) and a.baselines(RETENTION)[0] in study.arms]
    if not compared:
        return []
    baselines = {a.baselines(RETENTION)[0] for a in compared}
    arms = [a for a in members if a in compared or a.name in baselines]
    baseline = compared[0].baselines(RETENTION)[0]
    lines = ["| solver | split | arm | kept, rounds 1..T | distinct problems | original problems | accuracy | "
             f"arm - {baseline} [95% paired bootstrap] |", "|---|---|---|---|---|---|---|---|"]
    for solver in study.solvers:
        for split in study.splits:
            for record in arms:
                arm = record.name
                cells = study.by.get((solver, split, arm), {})
                if not cells:
                    continue
                counts = [kept_diversity(r) for r in cells.values()]
                base = record.baselines(RETENTION)
                diff = _interval(study.difference(solver, split, arm, base[0])) if base else "-"
                lines.append(f"| {solver} | {split} | {arm} | {_span([c.kept for c in counts])} | "
                             f"{_span([c.distinct for c in counts])} | {_span([c.origins for c in counts])} | "
                             f"{_fmt(study.accuracies(solver, split, arm))} | {diff} |")
    return lines


def beyond(study: Study) -> list[str]:
    """Per round of the first seed's cell of the first per-round arm (the loop): compounds of the test set
    present in the pool, DBCA^c pool -> test, kept per operator; and kept problems beside their parents."""
    lines = []
    for solver in study.solvers:
        for split in study.splits:
            cells = next((c for a in in_table(PER_ROUND, study.arms) for c in [study.by.get((solver, split, a.name))]
                          if c), {})
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


def seeds_note(study: Study) -> list[str]:
    """A warning line when the finished cells have fewer than FEW_SEEDS seeds, else nothing."""
    seeds = sorted({r.cell.seed for r in study.results if r.status == "done"})
    if not seeds or len(seeds) >= FEW_SEEDS:
        return []
    return ["", f"**Fewer than {FEW_SEEDS} seeds** (finished cells have seed{'s' if len(seeds) > 1 else ''} "
                f"{', '.join(map(str, seeds))}): each interval below resamples the test problems of these trainings "
                "only, so it says a difference is not test-set noise for them, not that it would hold for another "
                f"seed; one seed is an anecdote. Run at least {FEW_SEEDS} seeds (`seeds` of the study's parameters) "
                "for the spread across seeds."]


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
    import matplotlib.pyplot as plt

    for name, fig in figures.items():
        fig.savefig(directory / name, dpi=110)
        plt.close(fig)  # pyplot keeps every figure until closed: a process writing many reports would grow
    lines = [*header, *seeds_note(study), "", "## Cells", "", *cells_table(study, tracking_uri), "",
             "## Table 1: answer accuracy at the final round, with and without the loop", "", *table1(study), "",
             "## Table 5: arms against the control", "", *table5(study), ""]
    warm = warm_start_table(study)
    if warm:
        lines += ["## Warm-started rounds against retraining from scratch", "", *warm, ""]
    retention = retention_table(study)
    if retention:
        lines += ["## Which problems each retention keeps", "", *retention, ""]
    for solver in study.solvers:  # per split: what each arm kept, kept problems to read (SD: Table 4 too)
        for split in study.splits:
            by_arm = {arm: cells for arm in study.arms if (cells := study.by.get((solver, split, arm), {}))}
            sections = sd_sections(by_arm, sd_labels or {}) if split == SD else arm_sections(by_arm, split)
            if sections:
                lines += [f"# {solver} on {'SD' if split == SD else split}", "", *sections]
    lines += ["## Figures", ""] + [f"![{name}]({name})" for name in figures] + ["", "## Per round (beyond the paper)",
                                                                                  "", *beyond(study)]
    report = directory / "report.md"
    write_text_durable(report, "\n".join(lines) + "\n")
    summary = {"cells": len(study.results), "failed": [r.cell.key for r in study.results if r.status == "failed"],
               "pending": [r.cell.key for r in study.results if r.status == "pending"],
               "report": str(report), "figures": [str(directory / n) for n in figures]}
    write_json_durable(directory / "summary.json", summary, indent=1)
    return summary
