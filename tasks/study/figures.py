"""The study's figures (matplotlib, Agg): Figure 6b (accuracy of every set, pool and kept counts and
training seconds by round), Figure 6a (accuracy against compound divergence over splits), and the
validation curves of the arms that train once (the control). Which arms those are is each arm's record
(tasks/study/arms.py)."""
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


def _mean_by_round(cells, value) -> dict[int, float]:
    """Round -> mean over the seeds' records of ``value(record)`` (None: that record has no value)."""
    by_round = defaultdict(list)
    for r in cells.values():
        for rec in r.records:
            v = value(rec)
            if v is not None:
                by_round[rec.round].append(v)
    return {k: sum(vs) / len(vs) for k, vs in sorted(by_round.items())}


def _plot(ax, points: dict[int, float], **style) -> None:
    if points:
        ax.plot(list(points), list(points.values()), marker="o", **style)


def accuracy_by_round(study):
    """By round, mean over seeds, for every loop-like arm of every split: the answer accuracy of
    validation and of every test set (each named; line style per set, colour per arm), the pool size
    and the problems kept (problems), and the training seconds, in three panels."""
    from matplotlib.ticker import MaxNLocator

    from tasks.loop.record import set_label

    plt = _plt()
    fig, (acc_ax, count_ax, sec_ax) = plt.subplots(1, 3, figsize=(16, 5))
    set_styles = ["-", "--", "-.", (0, (1, 1))]
    configs = [(key, cells) for key, cells in sorted(study.by.items()) if not _trains_once(key[2])]
    sets = sorted({name for _, cells in configs for r in cells.values() for rec in r.records for name in rec.tests})
    for i, ((solver, split, arm), cells) in enumerate(configs):
        color, label = f"C{i % 10}", f"{solver}/{split}/{arm}"
        _plot(acc_ax, _mean_by_round(cells, lambda rec: rec.valid_answer_acc), color=color, linestyle=":",
              label=f"{label}: {set_label('valid')}")
        for j, name in enumerate(sets):
            _plot(acc_ax, _mean_by_round(cells, lambda rec, n=name: rec.tests[n].answer_acc if n in rec.tests else None),
                  color=color, linestyle=set_styles[j % len(set_styles)], label=f"{label}: {set_label(name)}")
        _plot(count_ax, _mean_by_round(cells, lambda rec: rec.pool_size), color=color, label=f"{label}: pool size")
        _plot(count_ax, _mean_by_round(cells, lambda rec: rec.generation.kept if rec.generation else 0), color=color,
              linestyle="--", label=f"{label}: kept this round")
        _plot(sec_ax, _mean_by_round(cells, lambda rec: rec.train_seconds), color=color, label=label)
    acc_ax.set(xlabel="round (0: before augmentation)", ylabel="answer accuracy (mean over seeds)",
               title="Accuracy by round", ylim=(0, 1.02))
    count_ax.set(xlabel="round (0: before augmentation)", ylabel="problems (mean over seeds)",
                 title="Pool size and problems kept by round")
    sec_ax.set(xlabel="round (0: before augmentation)", ylabel="training seconds (mean over seeds)",
               title="Training time by round")
    for ax in (acc_ax, count_ax, sec_ax):
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
