"""bench/dense_graph.py on the CPU at toy size: the shape-fixed pass gives the trainer's loss and gradients
on a real MAWPS batch (float32), its speed rows and the batch-shape census are reported, and an epoch of
the padded dense step trains beside the trainer's."""
import json
from pathlib import Path

import pytest

from bench import dense_graph


def test_the_dense_pass_agrees_with_the_trainers_on_a_mawps_batch(tmp_path):
    if not dense_graph.MAWPS.exists():
        pytest.skip(f"no MAWPS data at {dense_graph.MAWPS}")
    out = tmp_path / "dense.json"
    assert dense_graph.main(["--device", "cpu", "--hidden", "16", "--embedding", "8", "--steps", "1", "--epochs", "2",
                             "--threads", "1", "--train-epochs", "1", "--out", str(out)]) == 0
    report = json.loads(Path(out).read_text())
    dense = report["agreement"]["dense"]
    assert dense["loss_diff"] <= 1e-5 * abs(report["agreement"]["rowwise"]["loss"])
    assert dense["worst_relative_grad_diff"] < 1e-4
    assert set(report["ways"]) == {"rowwise", "dense"}  # no CUDA graph on the CPU
    assert report["ways"]["dense"]["aten_ops"] > 0 and report["batch"]["K"] >= 1
    assert 0 < report["shapes"]["rounded"] <= report["shapes"]["exact"]
    # one epoch each way from the same weights: the padded dense step trains (the loss is a mean per token,
    # as the trainer's), eagerly on the CPU, with no graph
    rowwise, dense = report["training"]["rowwise"], report["training"]["dense"]
    assert len(rowwise["epochs"]) == len(dense["epochs"]) == 1 and dense["captures"] == 0
    assert 0 < dense["epochs"][0]["loss"] < 1.5 * rowwise["epochs"][0]["loss"]
