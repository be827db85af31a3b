"""The arms of a study's seed share one round 0 (tasks/loop/round_zero.py): a real tiny study (Prefect
harness, MLflow on SQLite, real training) where the second arm adopts the first arm's round 0 gives every
number the same study without sharing gives, shows the adopted round on its MLflow run, and a round 0
trained with other parameters is never adopted."""
import dataclasses
import json

import pytest

from flows.study import StudyParams, study_flow
from tasks.loop import rundir
from tasks.loop.round_zero import ADOPTED, adopt_round_zero, adopted_from, round_zero_key


def _params(out, **extra):
    return StudyParams.model_validate({
        "name": "shared", "splits": [{"name": "iid", "data": {"format": "builtin", "builtin_size": 80}}],
        "solvers": [{"name": "gts", "model": {"embedding_size": 16, "hidden_size": 16, "min_count": 1}}],
        "train": {"epochs": 2, "batch_size": 32, "beam_size": 2}, "augment": {"per_round_cap": 200},
        "arms": ["loop", "least-confident", "control"], "seeds": [0], "rounds": 1, "out_dir": str(out),
        "torch_threads": 1, **extra})


def _run_dir(params, arm):
    return next((params.directory() / "cells" / f"gts-iid-{arm}-s0").iterdir())


def _records(params):
    return {(arm, r): dataclasses.replace(rundir.read_record(_run_dir(params, arm), r), train_seconds=0.0,
                                          round_seconds=0.0)
            for arm in params.arms for r in rundir.completed_rounds(_run_dir(params, arm))}


@pytest.fixture(scope="module")
def shared_and_not(prefect_harness, tmp_path_factory):
    shared, alone = _params(tmp_path_factory.mktemp("shared")), _params(tmp_path_factory.mktemp("alone"),
                                                                          share_round_zero=False)
    return shared, study_flow(shared), alone, study_flow(alone)


def test_the_second_arm_adopts_the_first_arms_round_zero_and_every_number_is_the_same(shared_and_not):
    shared, result, alone, _ = shared_and_not
    assert result["failed"] == []
    loop, least = _run_dir(shared, "loop"), _run_dir(shared, "least-confident")
    assert adopted_from(least, 0) == str(loop.resolve()) and adopted_from(loop, 0) is None
    assert adopted_from(least, 1) is None and adopted_from(_run_dir(shared, "control"), 0) is None  # own epochs
    assert not (rundir.round_dir(least, 0) / "train_state").exists()  # the copy leaves the resume state out
    assert (rundir.round_dir(least, 0) / "checkpoint").is_dir()
    assert not (rundir.round_dir(_run_dir(alone, "least-confident"), 0) / ADOPTED).exists()
    assert _records(shared) == _records(alone)  # round 0, round 1's counts, scores, kept, accuracies; control
    row = next(line for line in (shared.directory() / "report.md").read_text().splitlines()
               if line.startswith("| gts-iid-least-confident-s0 |"))
    assert "(round 0 adopted)" in row  # its training seconds are its own rounds'


def test_the_adopted_round_is_on_the_cells_own_mlflow_run(shared_and_not):
    from mlflow.tracking import MlflowClient

    shared, result, _, _ = shared_and_not
    least = _run_dir(shared, "least-confident")
    state = json.loads((least / "mlflow.json").read_text())
    client = MlflowClient(tracking_uri=result["tracking_uri"])
    child = client.get_run(state["children"]["0"])
    assert child.data.tags["compaug.adopted_from"] == adopted_from(least, 0)
    assert child.info.status == "FINISHED"
    record = rundir.read_record(least, 0)
    assert child.data.metrics["acc/iid"] == pytest.approx(record.tests["iid"].answer_acc, abs=1e-4)
    assert [m.step for m in client.get_metric_history(child.info.run_id, "epoch/train_loss")] == [1, 2]
    sizes = client.get_metric_history(state["parent_run_id"], "pool/size")  # the round's numbers, as trained
    assert {m.step: m.value for m in sizes}[0] == record.pool_size and {m.step for m in sizes} == {0, 1}


def test_a_round_zero_of_other_parameters_or_data_is_not_adopted(shared_and_not, tmp_path):
    shared, _, alone, _ = shared_and_not
    loop = _run_dir(shared, "loop")
    mine = json.loads((_run_dir(shared, "least-confident") / "params.json").read_text())
    theirs = json.loads((loop / "params.json").read_text())
    assert round_zero_key(mine) == round_zero_key(theirs)  # the arms differ in the ranker only
    other = dict(mine, train={**mine["train"], "epochs": 3})
    target = tmp_path / "run"
    (target / "data").mkdir(parents=True)
    (target / "data" / "report.json").write_text((loop / "data" / "report.json").read_text())
    adopted, why = adopt_round_zero(target, loop, other, theirs)
    assert not adopted and "train.epochs" in why and not (target / "round_00").exists()
    (target / "data" / "report.json").write_text(json.dumps({"source_sha256": "edited"}))
    adopted, why = adopt_round_zero(target, loop, mine, theirs)
    assert not adopted and "other data" in why
    adopted, why = adopt_round_zero(target, tmp_path / "nothing", mine, theirs)
    assert not adopted and "no finished round 0" in why
    (target / "data" / "report.json").write_text((loop / "data" / "report.json").read_text())
    assert adopt_round_zero(target, loop, mine, theirs)[0]
    assert rundir.completed_rounds(target) == [0] and adopted_from(target, 0) == str(loop.resolve())
    assert adopt_round_zero(target, loop, mine, theirs) == (False, f"round 0 already in {target}")


def test_only_the_arms_without_a_budget_share_and_each_seed_has_its_own(tmp_path):
    from tasks.study.grid import Cell

    params = _params(tmp_path, seeds=[0, 1], arms=["control", "loop", "least-confident", "no-op2"])
    assert params.round_zero_source(Cell("gts", "iid", "least-confident", 1)) == Cell("gts", "iid", "loop", 1)
    assert params.round_zero_source(Cell("gts", "iid", "no-op2", 0)) == Cell("gts", "iid", "loop", 0)
    assert params.round_zero_source(Cell("gts", "iid", "loop", 0)) is None
    assert params.round_zero_source(Cell("gts", "iid", "control", 0)) is None
    lp = params.loop_params(Cell("gts", "iid", "no-op2", 1))
    assert lp.round0_from == params.loop_params(Cell("gts", "iid", "loop", 1)).run_dir()
    unshared = params.model_copy(update={"share_round_zero": False})
    assert unshared.loop_params(Cell("gts", "iid", "no-op2", 1)).round0_from is None
    assert unshared.loop_params(Cell("gts", "iid", "no-op2", 1)).run_dir() == lp.run_dir()  # same directory
