"""The study's figures (matplotlib, Agg): Figure 6b (accuracy and training seconds by round), Figure 6a
(accuracy against compound divergence over splits), and the validation curves of the arms that
train once (the control). Which arms those are is each arm's record (tasks/study/arms.py)."""
from __future__ import annotations

from collections import defaultdict

from tasks.study.arms import ARMS


def _trains_once(arm: str) -> bool:
    return arm in ARMS and ARMS[arm].trains_once


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def accuracy_by_round(study):
    """Mean answer accuracy (main test set) and training seconds by round, arms with rounds, per split."""
    from tasks.study.cells import main_set

    plt = _plt()
    fig, (acc_ax, sec_ax) = plt.subplots(1, 2, figsize=(10, 4))
    for (solver, split, arm), cells in sorted(study.by.items()):
        if _trains_once(arm):
            continue
        by_round_acc, by_round_sec = defaultdict(list), defaultdict(list)
        for r in cells.values():
            name = main_set(r)
            for rec in r.records:
                if name in rec.tests:
                    by_round_acc[rec.round].append(rec.tests[name].answer_acc)
                by_round_sec[rec.round].append(rec.train_seconds)
        rounds = sorted(by_round_acc)
        label = f"{solver}/{split}/{arm}"
        acc_ax.plot(rounds, [sum(by_round_acc[k]) / len(by_round_acc[k]) for k in rounds], marker="o", label=label)
        rounds = sorted(by_round_sec)
        sec_ax.plot(rounds, [sum(by_round_sec[k]) / len(by_round_sec[k]) for k in rounds], marker="o", label=label)
    acc_ax.set(xlabel="round", ylabel="answer accuracy (mean over seeds)", title="Accuracy by round")
    sec_ax.set(xlabel="round", ylabel="training seconds (mean over seeds)", title="Training time by round")
    from matplotlib.ticker import MaxNLocator

    for ax in (acc_ax, sec_ax):
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # rounds are whole numbers
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def accuracy_vs_divergence(study, divergences: dict[str, float]):
    """Mean final accuracy against each split's compound divergence (Figure 6a), per arm."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for solver in study.solvers:
        for arm in study.arms:
            pts = [(divergences[s], sum(a) / len(a)) for s in study.splits if s in divergences
                   for a in [study.accuracies(solver, s, arm)] if a]
            if pts:
                pts.sort()
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{solver}/{arm}")
    ax.set(xlabel="compound divergence DBCA^c of the split", ylabel="answer accuracy (mean over seeds)",
           title="Accuracy against compound divergence")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def control_curves(study):
    """The validation accuracy by epoch of the arms that train once (the control): has it flattened by
    its last epoch?"""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for (solver, split, arm), cells in sorted(study.by.items()):
        if not _trains_once(arm):
            continue
        for seed, r in sorted(cells.items()):
            pts = [(e["epoch"], e["valid_answer_acc"]) for e in r.epochs if e.get("valid_answer_acc") is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=f"{solver}/{split}/s{seed}")
    ax.set(xlabel="epoch", ylabel="validation answer accuracy", title="Control arm: validation curves")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="x-small")
    fig.tight_layout()
    return fig
