"""tasks/study/figures.py's Figure 6b on cell results built here (no training): every set named, means
over seeds, pool and kept counts in their own panel."""
import matplotlib.pyplot as plt

from tasks.loop.record import Generation, RoundRecord, SetMetrics
from tasks.study.cells import CellResult
from tasks.study.figures import accuracy_by_round
from tasks.study.grid import Cell
from tasks.study.report import Study


def _cell(arm: str, seed: int) -> CellResult:
    gen = Generation(candidates=20, verified=10, unscorable=0, kept=2 + seed, confidence_mean=None, confidence_cut=None)
    records = [RoundRecord(round=r, pool_size=100 + r * (2 + seed), train_seconds=10.0, best_epoch=1,
                           valid_answer_acc=0.5 + 0.1 * seed,
                           tests={"comdiv": SetMetrics(40, 0.25 + 0.05 * r, 0.0, 0.0),
                                  "iid_holdout": SetMetrics(40, 0.75, 0.0, 0.0)},
                           relative_gap=None, round_seconds=11.0, generation=gen if r else None) for r in (0, 1)]
    return CellResult(Cell("gts", "comdiv", arm, seed), "done", records=records)


def test_fig6b_draws_validation_and_every_test_set_by_name_and_the_counts():
    fig = accuracy_by_round(Study([_cell(arm, seed) for arm in ("loop", "control") for seed in (0, 1)]))
    acc, counts, seconds = fig.axes
    lines = {line.get_label(): list(line.get_ydata()) for line in acc.get_lines()}
    assert lines == {"gts/comdiv/loop: valid: validation (selects the epoch)": [0.55, 0.55],  # mean of 0.5 and 0.6
                     "gts/comdiv/loop: comdiv: compositional test (DBCA split)": [0.25, 0.3],
                     "gts/comdiv/loop: iid_holdout: I.I.D. holdout (split file's train side)": [0.75, 0.75]}
    assert acc.get_ylabel() == "answer accuracy (mean over seeds)"
    counted = {line.get_label(): list(line.get_ydata()) for line in counts.get_lines()}
    assert counted == {"gts/comdiv/loop: pool size": [100, 102.5], "gts/comdiv/loop: kept this round": [0, 2.5]}
    assert counts.get_ylabel() == "problems (mean over seeds)"
    assert [line.get_label() for line in seconds.get_lines()] == ["gts/comdiv/loop"]
    plt.close(fig)
