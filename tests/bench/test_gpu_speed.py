"""bench/gpu_speed.py's operation counts on the CPU, on a tiny GTS: the steady-state step (the trainer's own
train_step after three steps) dispatches more than the loss alone (it adds clipping and Adam) and less than
the one-batch fit (which also builds the vocabularies, the model and the optimizer's state)."""
from argparse import Namespace

import torch

from bench import batch_counts, gpu_speed
from mwp.readers import load_dataset


def test_the_steady_state_step_counts_the_update_without_the_fits_setup():
    torch.manual_seed(0)
    train = list(load_dataset("builtin").problems)[:40]
    args = Namespace(hidden=16, embedding=8, batch_size=8)
    fit = gpu_speed.ops_per_batch(args, train, "cpu")
    steady = gpu_speed.steady_step(args, train, "cpu")
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


def test_runs_take_their_teacher_pass_rounding_and_fusion_from_the_step_or_the_row_wise_list():
    import pytest

    from bench.gpu_speed import Run

    runs = gpu_speed.step_runs("rowwise,graphed,graphed:positions,graphed-whole,graphed-whole:waves:fine,"
                               "graphed-whole:waves:coarse:inductor", "fp32,bf16", "waves,positions")
    c = "coarse"
    assert runs == [Run("fp32", "rowwise", "waves", c), Run("bf16", "rowwise", "waves", c),
                    Run("fp32", "rowwise", "positions", c), Run("bf16", "rowwise", "positions", c),
                    Run("fp32", "graphed", "waves", c), Run("fp32", "graphed", "positions", c),
                    Run("fp32", "graphed-whole", "waves", c),
                    Run("fp32", "graphed-whole", "waves", "fine"),
                    Run("fp32", "graphed-whole", "waves", c, "inductor")]
    assert [run.label for run in runs[4:]] == ["fp32-graphed", "fp32-graphed-positions", "fp32-graphed-whole",
                                               "fp32-graphed-whole-fine", "fp32-graphed-whole-inductor"]
    assert runs[-1].config(device="auto").graph_fusion == "inductor"
    with pytest.raises(ValueError, match="teacher_pass must be one of waves, positions"):
        gpu_speed.step_runs("graphed:levels", "fp32", "waves")
    with pytest.raises(ValueError, match="graphed:waves:exact: rounding must be one of coarse, fine"):
        gpu_speed.step_runs("graphed:waves:exact", "fp32", "waves")
    with pytest.raises(ValueError, match="graphed:waves:coarse:jit: fusion must be one of none, inductor"):
        gpu_speed.step_runs("graphed:waves:coarse:jit", "fp32", "waves")
    bucketed = gpu_speed.step_runs("rowwise:waves:coarse:none:steps", "fp32", "waves")
    assert bucketed == [Run("fp32", "rowwise", "waves", c, "none", "steps")]
    assert bucketed[0].label == "fp32-steps" and bucketed[0].config(device="auto").bucketing == "steps"
    with pytest.raises(ValueError, match="bucketing must be one of length, steps"):
        gpu_speed.step_runs("rowwise:waves:coarse:none:depth", "fp32", "waves")


def test_a_fused_steps_generated_kernels_are_counted_on_the_cpu():
    """The dense step (the graphed steps' pass, eager) with graph_fusion inductor: its steady step runs generated
    kernels, counted apart, and dispatches fewer aten operations than without."""
    from bench.gpu_speed import Run

    torch.manual_seed(0)
    train = list(load_dataset("builtin").problems)[:40]
    args = Namespace(hidden=16, embedding=8, batch_size=8)
    plain = gpu_speed.steady_step(args, train, "cpu", Run("fp32", "dense"))
    fused = gpu_speed.steady_step(args, train, "cpu", Run("fp32", "dense", fusion="inductor"))
    assert plain["generated_kernels"] == 0 and fused["generated_kernels"] > 0
    assert fused["aten_ops"] < plain["aten_ops"]


def test_a_whole_training_is_set_against_the_public_gts_epoch_times_as_many_epochs():
    row = {"epoch_seconds": [9.0, 2.0, 1.0, 1.0], "training_s": 13.0}
    line = gpu_speed.whole_training_line("mawps", "fp32-graphed-whole", row, {"epoch_s": 6.5})
    assert row["training_vs_reference"] == 2.0  # 4 x 6.5 s against 13 s, the captures' epoch included
    assert "4 epochs, captures included" in line and "6.50 s x 4 = 26.0 s" in line and "2.00x" in line


def test_kernel_names_counts_each_kernel_and_its_gpu_time_most_launched_first():
    """The steady step's breakdown of CUDA kernels by name (what the next cut of kernels a batch needs to know):
    counted, timed, most launched first, long template names cut so that their variants stay apart."""
    from types import SimpleNamespace as Event

    long = "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_" + "x" * 200
    kernels = ([Event(name="triton_poi_fused_add_0", device_time=2.0)] * 3
               + [Event(name=long, device_time=10.0)] * 5 + [Event(name="elementwise_kernel", device_time=1.5)])
    names = batch_counts.kernel_names(kernels, top=2)
    assert names == [{"name": long[:batch_counts.KERNEL_NAME_CHARS], "count": 5, "us": 50.0},
                     {"name": "triton_poi_fused_add_0", "count": 3, "us": 6.0}]


def test_the_epoch_counts_profile_the_trainers_own_batches_in_its_order():
    import random
    import statistics

    from torch.profiler import ProfilerActivity, profile

    from solvers.trainer import length_bucketed, make_optimizer, train_step

    train = list(load_dataset("builtin").problems)[:40]
    args = Namespace(hidden=16, embedding=8, batch_size=8, seed=3)
    out = gpu_speed.epoch_counts(args, train, "cpu", gpu_speed.FP32, batches=3)
    first = list(length_bucketed(train, 8, random.Random(3)))[:3]  # the trainer's first epoch, seed 3
    assert out["batches"] == 3
    assert [row["tokens"] for row in out["per_batch"]] == [max(len(p.tokens) for p in chunk) for chunk in first]
    ops = [row["aten_ops"] for row in out["per_batch"]]
    assert min(ops) > 0 and out["aten_ops"] == {"mean": statistics.mean(ops), "median": statistics.median(ops),
                                                "min": min(ops), "max": max(ops)}
    assert "kernels" not in out  # kernels are counted on CUDA only
    # each batch's step is counted alone and after a first pass, so the same batches count the same again
    again = gpu_speed.epoch_counts(args, train, "cpu", gpu_speed.FP32, 3)
    assert [row["aten_ops"] for row in again["per_batch"]] == ops
    whole = gpu_speed.epoch_counts(args, train, "cpu", gpu_speed.FP32, batches=100)
    assert whole["batches"] == 5 and whole["per_batch"][:3] == out["per_batch"]  # asked for more: the epoch's 5
    # a batch's first step also makes Adam's state: the figure is of a step after that, as a long training's are
    solver = gpu_speed.solver_for(args, "cpu")
    encoding = solver.build_encoding(train)
    model = solver.build_model(encoding).train()
    config = gpu_speed.FP32.config(epochs=1, batch_size=8, progress=False, device="cpu")
    optimizer = make_optimizer(model, config, torch.device("cpu"))
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    batch = encoding.batch(first[0])  # (built outside the profile, as the figures' batches are)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        train_step(model, batch, config, optimizer, scaler, torch.device("cpu"), None)
    assert sum(e.count for e in prof.key_averages() if e.key.startswith("aten::")) > ops[0]
    assert "first 5 batches" in gpu_speed.epoch_line("fp32", whole) and "aten ops a batch" in \
        gpu_speed.epoch_line("fp32", whole)


def test_each_finished_step_is_set_against_the_reference_as_it_finishes():
    ref = {"ms_per_problem": 8.0, "epoch_s": 12.0}
    row = {"ms_per_problem": 2.0, "training_s": 9.0, "epoch_seconds": [4.0, 2.5, 2.5],
           "ms_per_problem_without_captures": 1.0}
    lines = gpu_speed.side_by_side_lines("mawps", "cuda", "fp32-graphed", row, ref)
    assert row["speedup_vs_reference"] == 4.0 and row["speedup_vs_reference_without_captures"] == 8.0
    assert row["training_vs_reference"] == 4.0  # 3 x 12 s against 9 s
    assert "compaug fp32-graphed 2.00 ms a problem, reference 8.00: compaug 4.00x" in lines[0]
    assert len(lines) == 3 and "without its captures' seconds 8.00x" in lines[2]
    plain = {"ms_per_problem": 4.0, "training_s": 12.0, "epoch_seconds": [6.0, 6.0]}
    assert len(gpu_speed.side_by_side_lines("mawps", "cpu", "fp32", plain, ref)) == 2  # no captures, no third line


def test_a_run_that_stops_at_a_later_step_keeps_the_finished_steps_figures(tmp_path):
    import json

    import pytest

    from tests.shared_data import require_files

    require_files(["../shared/data/mawps/MAWPS.json"])
    out = tmp_path / "gpu.json"
    # on the CPU the graphed step refuses to start: the run stops there, as a time limit would stop it
    with pytest.raises(ValueError, match="CUDA device"):
        gpu_speed.main(["--device", "cpu", "--datasets", "mawps", "--precisions", "fp32", "--hidden", "8",
                        "--embedding", "4", "--skip-timing", "--steps", "rowwise,graphed", "--out", str(out)])
    report = json.loads(out.read_text())
    mawps = report["datasets"]["mawps"]
    assert mawps["fp32"]["aten_ops"] > 0 and mawps["fp32"]["steady_step"]["aten_ops"] > 0
    assert "fp32-graphed" not in mawps and not list(tmp_path.glob("*.tmp"))
