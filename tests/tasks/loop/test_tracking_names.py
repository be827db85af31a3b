"""The MLflow names, parameters and view of tasks/loop/tracking_names.py and the accuracy figure of
tasks/loop/tracking.py, on hand-made rounds."""
import json

import pytest

from tasks.loop.tracking import accuracy_figure
from tasks.loop.tracking_names import (child_run_name, epoch_metrics, loop_run_name, round_metrics, round_params, runs_view,
                                  ui_urls)
from solvers.base import EpochStats
from tasks.loop.record import Generation, RoundRecord, SetMetrics


def _round(r: int, generation: Generation | None = None, divergence: float | None = None) -> RoundRecord:
    return RoundRecord(round=r, pool_size=100 + 10 * r, train_seconds=5.0, best_epoch=12, valid_answer_acc=47 / 96,
                       tests={"iid": SetMetrics(10, 0.5, 0.4, 0.0), "comdiv": SetMetrics(8, 0.25, 0.125, 0.1)},
                       relative_gap=1.0, round_seconds=6.0, generation=generation, compound_divergence=divergence)


GEN = Generation(candidates=30, verified=20, unscorable=1, kept=10, confidence_mean=0.5, confidence_cut=0.75,
                 rejected={"matches_valid": 2, "no_number": 8}, verified_by_operator={"op1": 5, "op2": 15},
                 kept_by_operator={"op1": 4, "op2": 6}, kept_origins=7)
NOTHING_KEPT_OF_OP2 = Generation(candidates=30, verified=20, unscorable=0, kept=4, confidence_mean=0.5,
                                 confidence_cut=0.75, verified_by_operator={"op1": 5, "op2": 15},
                                 kept_by_operator={"op1": 4})


def test_round_metrics_are_sectioned_rounded_and_count_zero_in_round_0():
    assert round_metrics(_round(0)) == {
        "acc/valid": 0.4896, "acc/comdiv": 0.25, "acc/iid": 0.5,
        "eval/comdiv_equation_acc": 0.125, "eval/comdiv_invalid_rate": 0.1, "eval/iid_equation_acc": 0.4,
        "eval/iid_invalid_rate": 0.0, "eval/relative_gap": 1.0,
        "pool/size": 100.0, "verify/candidates": 0.0, "verify/verified": 0.0, "kept/total": 0.0,
        "time/train_seconds": 5.0, "time/round_seconds": 6.0}
    assert {k: v for k, v in round_metrics(_round(0), ["op1", "op2"]).items() if k.startswith(("kept", "verify"))} == {
        "verify/candidates": 0.0, "verify/verified": 0.0, "kept/total": 0.0, "verify/op1": 0.0, "verify/op2": 0.0,
        "kept/op1": 0.0, "kept/op2": 0.0, "kept/origins": 0.0}  # every count chart starts at round 0
    later = round_metrics(_round(1, GEN, divergence=0.81234567))
    assert {k: v for k, v in later.items() if k.split("/")[0] in ("kept", "verify", "reject", "score", "pool")} == {
        "pool/size": 110.0, "pool/compound_divergence": 0.8123,
        "verify/candidates": 30.0, "verify/verified": 20.0, "verify/op1": 5.0, "verify/op2": 15.0,
        "kept/total": 10.0, "kept/op1": 4.0, "kept/op2": 6.0, "kept/origins": 7.0,
        "reject/matches_valid": 2.0, "reject/no_number": 8.0,
        "score/unscorable": 1.0, "score/confidence_mean": 0.5, "score/confidence_cut": 0.75}
    assert "best_epoch" not in " ".join(later)  # a round's setting, a parameter of its child
    assert round_metrics(_round(1, NOTHING_KEPT_OF_OP2))["kept/op2"] == 0  # an operator that kept none: 0


def test_round_params_say_what_differs_between_rounds():
    assert round_params(_round(0)) == {"round": "0", "pool_size": "100", "kept": "0", "best_epoch": "12"}
    assert round_params(_round(0), ["op1"]) == {"round": "0", "pool_size": "100", "kept": "0", "best_epoch": "12",
                                                "kept.op1": "0"}
    assert round_params(_round(1, GEN)) == {"round": "1", "pool_size": "110", "kept": "10", "best_epoch": "12",
                                            "kept.op1": "4", "kept.op2": "6"}
    assert round_params(_round(1, NOTHING_KEPT_OF_OP2))["kept.op2"] == "0"


def test_epoch_metrics_give_the_learning_rate_in_thousandths():
    assert epoch_metrics(EpochStats(3, 0.5, 2.0, None, None, lr=5e-4)) == {
        "epoch/train_loss": 0.5, "epoch/train_seconds": 2.0, "epoch/lr_x1000": 0.5}
    assert epoch_metrics(EpochStats(1, 2 / 3, 12.345678, 47 / 96, 0.0, lr=1e-3, valid_loss=1 / 3)) == {
        "epoch/train_loss": 0.66667, "epoch/train_seconds": 12.346, "epoch/valid_answer_acc": 0.48958,
        "epoch/valid_equation_acc": 0.0, "epoch/lr_x1000": 1.0, "epoch/valid_loss": 0.33333}
    # the graphed step's epochs say what they captured
    assert epoch_metrics(EpochStats(2, 0.5, 2.0, lr=1e-3, captures=4, capture_seconds=0.75)) == {
        "epoch/train_loss": 0.5, "epoch/train_seconds": 2.0, "epoch/lr_x1000": 1.0, "epoch/captures": 4.0,
        "epoch/capture_seconds": 0.75}


def test_run_names_sort_a_runs_rounds_after_it():
    params = {"seed": 4, "solver": {"name": "gts"}, "augment": {"operators": ["geca_op1", "swap_names"]}}
    parent = loop_run_name(params, "abc123")
    assert parent == "gts geca_op1+swap_names s4 abc123"
    names = [child_run_name(parent, r) for r in (10, 2, 0)] + [parent]
    assert sorted(names) == [parent, f"{parent} round-00", f"{parent} round-02", f"{parent} round-10"]


def test_the_saved_view_keeps_an_earlier_views_columns_and_the_urls_name_it():
    first = runs_view(["op1"])
    assert "metrics.`acc/valid`" in first["selectedColumns"] and "params.`kept.op1`" in first["selectedColumns"]
    assert first["orderByKey"] == "tags.`mlflow.runName`"  # not the creation date: MLflow then nests the rounds
    second = runs_view(["op2"], json.loads(json.dumps(first)))
    assert {"params.`kept.op1`", "params.`kept.op2`"} <= set(second["selectedColumns"])
    assert len(second["selectedColumns"]) == len(set(second["selectedColumns"]))
    runs, parent = ui_urls("http://h:5000/", "7", "abc")
    assert runs == "http://h:5000/#/experiments/7/runs?workflowType=machine_learning&viewStateShareKey=compaug-rounds"
    assert parent == "http://h:5000/#/experiments/7/runs/abc?workflowType=machine_learning"


@pytest.mark.parametrize("divergence", [None, 0.8])
def test_the_accuracy_figure_names_every_set_and_draws_counts_on_a_second_axis(divergence):
    import matplotlib.pyplot as plt

    fig = accuracy_figure([_round(0, divergence=divergence), _round(1, GEN, divergence=divergence)])
    acc, counts = fig.axes
    labels = [t.get_text() for t in acc.get_legend().get_texts()]
    assert labels[:3] == ["valid: validation (selects the epoch)", "comdiv: compositional test (DBCA split)",
                          "iid: I.I.D. test (random split)"]
    assert labels[3:] == (["DBCA^c divergence, pool -> test"] if divergence else []) + [
        "pool size (right axis)", "kept this round (right axis)"]
    assert acc.get_ylabel() == "answer accuracy" + (" / compound divergence" if divergence else "")
    assert counts.get_ylabel() == "problems (pool, kept)"
    assert [b.get_height() for b in counts.patches] == [100, 110, 0, 10]  # pool bars, then kept bars
    plt.close(fig)


def test_the_run_summary_prints_the_runs_table_and_parent_run_links():
    from cli.run import format_summary

    result = {"rounds": [_round(0)], "run_dir": "runs/x", "final_checkpoint": "runs/x/round_00/checkpoint",
              "experiment": "compaug-builtin", "mlflow_run_id": "abc", "mlflow_experiment_id": "3",
              "tracking_uri": "sqlite:////tmp/runs/mlflow.db", "flow_run_id": "f"}
    lines = format_summary(result).splitlines()
    assert ("  runs table  : http://127.0.0.1:5000/#/experiments/3/runs?workflowType=machine_learning"
            "&viewStateShareKey=compaug-rounds") in lines
    assert "  parent run  : http://127.0.0.1:5000/#/experiments/3/runs/abc?workflowType=machine_learning" in lines
    remote = format_summary({**result, "tracking_uri": "http://mlflow.lab:8080"})
    assert "  parent run  : http://mlflow.lab:8080/#/experiments/3/runs/abc?workflowType=machine_learning" in remote
