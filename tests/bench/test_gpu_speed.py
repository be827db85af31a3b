"""bench/gpu_speed.py's operation counts on the CPU, on a tiny GTS: the steady-state step (the trainer's own
train_step after three steps) dispatches more than the loss alone (it adds clipping and Adam) and less than
the one-batch fit (which also builds the vocabularies, the model and the optimizer's state)."""
from argparse import Namespace

import torch

from bench import gpu_speed
from mwp.readers import load_dataset


def test_the_steady_state_step_counts_the_update_without_the_fits_setup():
    torch.manual_seed(0)
    train = list(load_dataset("builtin").problems)[:40]
    args = Namespace(hidden=16, embedding=8, batch_size=8)
    fit = gpu_speed.ops_per_batch(args, train, "cpu", "fp32")
    steady = gpu_speed.steady_step(args, train, "cpu", "fp32")
    parts = gpu_speed.part_ops(args, train, "cpu")
    assert parts["loss_fwd_bwd"] < steady["aten_ops"] < fit["aten_ops"]
    assert "kernels" not in steady  # kernels are counted on CUDA only


def test_a_graphed_trainings_epochs_are_also_given_without_their_captures():
    from solvers.base import EpochStats

    graphed = [EpochStats(1, 2.0, 10.0, captures=15, capture_seconds=6.0),
               EpochStats(2, 1.5, 5.0, captures=5, capture_seconds=2.0),
               EpochStats(3, 1.2, 3.5, captures=0, capture_seconds=0.0)]
    figures = gpu_speed.capture_figures(graphed, n_train=1000)
    assert figures["captures"] == [15, 5, 0] and figures["capture_seconds"] == [6.0, 2.0, 0.0]
    assert figures["epoch_s_without_captures"] == 3.25  # median of 3.0 and 3.5: the epochs after the first
    assert figures["ms_per_problem_without_captures"] == 3.25
    assert "captures an epoch [15, 5, 0] taking [6.0, 2.0, 0.0] s; epoch without them 3.25 s" in \
        gpu_speed.capture_line("fp32-graphed", figures)
    assert gpu_speed.capture_figures(graphed[:1], 1000)["epoch_s_without_captures"] == 4.0  # one epoch: itself
    assert gpu_speed.capture_figures([EpochStats(1, 2.0, 10.0)], 1000) == {}  # a step that captures nothing


def test_runs_take_their_teacher_pass_and_rounding_from_the_step_or_the_row_wise_list():
    import pytest

    runs = gpu_speed.step_runs("rowwise,graphed,graphed:positions,graphed-whole,graphed-whole:waves:fine",
                               "fp32,bf16", "waves,positions")
    c = "coarse"
    assert runs == [("fp32", "rowwise", "waves", c), ("bf16", "rowwise", "waves", c),
                    ("fp32", "rowwise", "positions", c), ("bf16", "rowwise", "positions", c),
                    ("fp32", "graphed", "waves", c), ("fp32", "graphed", "positions", c),
                    ("fp32", "graphed-whole", "waves", c),
                    ("fp32", "graphed-whole", "waves", "fine")]
    assert [gpu_speed.run_label(*run) for run in runs[4:]] == ["fp32-graphed", "fp32-graphed-positions",
                                                               "fp32-graphed-whole", "fp32-graphed-whole-fine"]
    with pytest.raises(ValueError, match="teacher_pass must be one of waves, positions"):
        gpu_speed.step_runs("graphed:levels", "fp32", "waves")
    with pytest.raises(ValueError, match="graphed:waves:exact: rounding must be one of coarse, fine"):
        gpu_speed.step_runs("graphed:waves:exact", "fp32", "waves")


def test_a_whole_training_is_set_against_the_public_gts_epoch_times_as_many_epochs():
    row = {"epoch_seconds": [9.0, 2.0, 1.0, 1.0], "training_s": 13.0}
    line = gpu_speed.whole_training_line("mawps", "fp32-graphed-whole", row, {"epoch_s": 6.5})
    assert row["training_vs_reference"] == 2.0  # 4 x 6.5 s against 13 s, the captures' epoch included
    assert "4 epochs, captures included" in line and "6.50 s x 4 = 26.0 s" in line and "2.00x" in line
