"""End to end: the real augment_loop flow (Prefect harness, MLflow on SQLite, real torch training)
on a tiny built-in corpus with a tiny GTS."""
import json
import math

import pytest
import torch

from flows.augment_loop import EPOCH_FAULT_ENV, FAULT_ENV, augment_loop, round_done_line
from flows.params import LoopParams, LoopSettings
from mwp.problem import read_problems_jsonl
from tasks.loop import rundir


def tiny_params(tmp_path, **overrides) -> LoopParams:
    base = {
        "data": {"format": "builtin", "builtin_size": 120},
        "solver": {"name": "gts", "model": {"embedding_size": 16, "hidden_size": 16}},
        "train": {"epochs": 2, "batch_size": 32, "beam_size": 2},
        "augment": {"operators": ["geca_op1", "geca_op2"], "per_round_cap": 300, "per_problem_cap": 4},
        "loop": {"rounds": 2, "keep_fraction": 0.2},
        "seed": 3,
        "out_dir": str(tmp_path / "runs"),
    }
    loop = {k: overrides.pop(k) for k in list(overrides) if k in LoopSettings.model_fields}
    base.update(overrides)
    base["loop"] = {**base["loop"], **loop}
    return LoopParams.model_validate(base)


@pytest.fixture(scope="module")
def finished_run(prefect_harness, tmp_path_factory):
    params = tiny_params(tmp_path_factory.mktemp("loop"))
    return params, augment_loop(params)


def test_pool_grows_by_exactly_the_kept_count_each_round(finished_run):
    params, result = finished_run
    rows = result["rounds"]
    assert [r.round for r in rows] == [0, 1, 2]
    for before, after in zip(rows, rows[1:]):
        assert after.generation.kept > 0
        assert after.pool_size == before.pool_size + after.generation.kept
        assert after.generation.kept == math.ceil(0.2 * after.generation.verified)
    run_dir = params.run_dir()
    for r in (1, 2):
        pool = read_problems_jsonl(rundir.round_dir(run_dir, r) / "pool.jsonl")
        assert len(pool) == rows[r].pool_size
        assert len({p.id for p in pool}) == len(pool)


def test_kept_problems_are_the_highest_scored_verified_candidates(finished_run):
    params, _ = finished_run
    for r in (1, 2):
        rd = rundir.round_dir(params.run_dir(), r)
        scored = rundir.read_scored(rd / "scored.jsonl")
        kept = rundir.read_scored(rd / "kept.jsonl")
        candidates = read_problems_jsonl(rd / "candidates.jsonl")
        assert [p.id for p, _ in scored] == [p.id for p in candidates]
        ranked = sorted(((s, p.id) for p, s in scored if s == s), key=lambda t: (-t[0], t[1]))
        assert [p.id for p, _ in kept] == [pid for _, pid in ranked[: len(kept)]]
        kept_ids = {k.id for k, _ in kept}
        assert min(s for _, s in kept) >= max(s for p, s in scored if p.id not in kept_ids and s == s)
        assert all(s == s for _, s in kept)  # an unscorable (NaN) candidate is never kept
        for problem, score in kept:
            assert problem.provenance.round == r and problem.provenance.parents
            assert 0.0 <= score <= 1.0  # a length-normalized probability


def test_round_files_exist(finished_run):
    params, result = finished_run
    run_dir = params.run_dir()
    assert (run_dir / "data" / "train.jsonl").exists() and (run_dir / "data" / "test_iid.jsonl").exists()
    for r in (0, 1, 2):
        rd = rundir.round_dir(run_dir, r)
        assert (rd / "metrics.json").exists()
        assert (rd / "checkpoint").is_dir() and any((rd / "checkpoint").iterdir())
    for r in (1, 2):
        assert (rundir.round_dir(run_dir, r) / "kept.jsonl").exists()
    metrics = json.loads((rundir.round_dir(run_dir, 2) / "metrics.json").read_text())
    assert 0.0 <= metrics["tests"]["iid"]["answer_acc"] <= 1.0
    assert metrics["precision"] == "fp32"  # what the round trained in: the toy GTS is float32 under auto
    assert rundir.read_record(run_dir, 2) == result["rounds"][2]  # the record round-trips through its file


def test_a_rounds_last_line_sums_its_rejections_and_keeps_every_other_figure(finished_run):
    params, result = finished_run
    record = result["rounds"][1]
    rejected = json.loads((rundir.round_dir(params.run_dir(), 1) / "metrics.json").read_text())["generation"]["rejected"]
    assert rejected  # the tiny corpus gives op1 candidates that the checks refuse
    line = round_done_line(1, record.metrics())
    assert line.startswith("round 1 done: {") and "rejected_" not in line
    assert f"; {sum(rejected.values())} candidates rejected for {len(rejected)} reasons" in line
    kept = [k for k in record.metrics() if not k.startswith("rejected_")]
    assert "pool_size" in kept and "kept" in kept and all(f"'{k}': " in line for k in kept)
    assert round_done_line(0, result["rounds"][0].metrics()).endswith("}")  # round 0 generates nothing


def _children(client, result) -> dict[int, object]:
    exp_id = client.get_run(result["mlflow_run_id"]).info.experiment_id
    return {int(r.data.tags["compaug.round"]): r for r in client.search_runs([exp_id])
            if r.data.tags.get("mlflow.parentRunId") == result["mlflow_run_id"]}


def test_mlflow_holds_one_parent_and_a_child_per_round_with_stepped_metrics(finished_run):
    from mlflow.tracking import MlflowClient

    params, result = finished_run
    client = MlflowClient(tracking_uri=result["tracking_uri"])
    exp = client.get_experiment_by_name(params.experiment_name())
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 1 and parents[0].info.run_id == result["mlflow_run_id"]
    children = _children(client, result)
    assert sorted(children) == [0, 1, 2]  # round 0, the baseline, has its child too
    history = client.get_metric_history(result["mlflow_run_id"], "pool/size")
    assert sorted(m.step for m in history) == [0, 1, 2]
    kept = {m.step: m.value for m in client.get_metric_history(result["mlflow_run_id"], "kept/total")}
    assert kept == {0: 0, 1: result["rounds"][1].generation.kept, 2: result["rounds"][2].generation.kept}
    assert parents[0].data.params["rounds"] == "2"
    assert parents[0].data.tags.get("prefect.flow_run_id")
    assert "prefect.flow_run_ids" not in parents[0].data.tags  # one flow run: no second tag repeating it
    assert parents[0].data.tags["compaug.run_dir"] == str(params.run_dir().resolve())
    assert parents[0].info.run_name == f"gts geca_op1+geca_op2 s3 {params.fingerprint()}"
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"  # the UI opens on runs, not traces
    # artifacts live beside the SQLite store in the output directory, not in ./mlruns of the cwd
    assert exp.artifact_location.startswith((params.run_dir().parent / "mlartifacts").resolve().as_uri())
    artifacts = {a.path for a in client.list_artifacts(result["mlflow_run_id"])}
    assert {"accuracy_by_round.png", "final_solver", "rounds.json"} <= artifacts


def test_each_round_child_spans_its_round_with_epoch_and_round_metrics_on_separate_keys(finished_run):
    from mlflow.tracking import MlflowClient

    params, result = finished_run
    client = MlflowClient(tracking_uri=result["tracking_uri"])
    epochs = params.train.epochs
    parent_keys = set(client.get_run(result["mlflow_run_id"]).data.metrics)
    assert parent_keys and all(k.split("/")[0] in ("acc", "control", "eval", "pool", "verify", "kept", "reject", "score",
                                                    "time")
                               for k in parent_keys)
    assert {"acc/valid", "acc/iid", "pool/size", "kept/geca_op1", "time/train_seconds"} <= parent_keys
    for r, child in _children(client, result).items():
        record = result["rounds"][r]
        assert child.info.status == "FINISHED"
        assert child.info.run_name == f"gts geca_op1+geca_op2 s3 {params.fingerprint()} round-{r:02d}"
        assert child.data.tags["mlflow.runColor"] == ("#1f77b4", "#ff7f0e", "#2ca02c")[r]  # one colour a round
        # created when the round started, ended when it ended: the wall time of the round, training included
        assert child.info.end_time - child.info.start_time >= record.round_seconds * 1000 - 1
        assert record.round_seconds > record.train_seconds > 0
        for key in ("epoch/train_loss", "epoch/train_seconds", "epoch/valid_answer_acc", "epoch/lr_x1000"):
            assert sorted(m.step for m in client.get_metric_history(child.info.run_id, key)) == list(range(1, epochs + 1))
        assert [m.value for m in client.get_metric_history(child.info.run_id, "epoch/lr_x1000")][0] == 1.0  # lr 1e-3
        assert {(m.step, m.value) for m in client.get_metric_history(child.info.run_id, "acc/valid")} == {
            (r, round(record.valid_answer_acc, 4))}
        for key in child.data.metrics:  # the per-epoch curves and the round's accuracies, nothing else
            steps = {m.step for m in client.get_metric_history(child.info.run_id, key)}
            assert steps == (set(range(1, epochs + 1)) if key.startswith("epoch/") else {r}), key
            assert key.startswith(("epoch/", "acc/")), key
        assert child.data.params["round"] == str(r) and child.data.params["pool_size"] == str(record.pool_size)
        assert child.data.params["kept"] == str(record.generation.kept if record.generation else 0)
        assert child.data.params["kept.geca_op1"] == str(record.generation.kept_by_operator.get("geca_op1", 0)
                                                         if record.generation else 0)
        assert child.data.tags["compaug.precision"] == record.precision == "fp32"
        names = {a.path for a in client.list_artifacts(child.info.run_id)}
        assert {"metrics.json", "kept_sample.json"} <= names  # the same paths in every child: compare finds them
        assert client.download_artifacts(child.info.run_id, "metrics.json") and json.loads(
            open(client.download_artifacts(child.info.run_id, "metrics.json")).read()) == record.to_dict()


def test_the_all_rounds_table_gives_every_row_every_column(finished_run):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey

    params, result = finished_run
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(
            key=ArtifactFilterKey(any_=[f"compaug-{params.fingerprint()}-rounds"]),
            flow_run_id=ArtifactFilterFlowRunId(any_=[result["flow_run_id"]])))
    assert len(artifacts) == 1
    rows = json.loads(artifacts[0].data)
    assert [row["round"] for row in rows] == [0, 1, 2]
    # the Prefect UI takes its columns from the first row: round 0 must carry the generation columns
    assert all(list(row) == list(rows[0]) for row in rows)
    assert {"candidates", "verified", "kept", "confidence_cut", "kept_geca_op1", "iid_answer_acc"} <= set(rows[0])
    assert rows[0]["candidates"] is None and rows[1]["kept"] == result["rounds"][1].generation.kept


def test_epochs_reach_mlflow_as_they_end_and_a_failed_round_is_retried_in_its_child(prefect_harness, tmp_path,
                                                                                   monkeypatch):
    from mlflow.tracking import MlflowClient

    from tasks.loop import steps

    params = tiny_params(tmp_path, rounds=0)
    seen_in_mlflow = []

    def evaluation_fails(*args, **kwargs):  # the round has trained; it ends only after evaluation
        state = json.loads((params.run_dir() / "mlflow.json").read_text())
        client = MlflowClient(tracking_uri=state["tracking_uri"])
        history = client.get_metric_history(state["children"]["0"], "epoch/train_loss")
        seen_in_mlflow.extend(sorted(m.step for m in history))
        raise RuntimeError("evaluation failed")

    monkeypatch.setattr(steps, "evaluate_solver", evaluation_fails)
    with pytest.raises(RuntimeError, match="evaluation failed"):
        augment_loop(params)
    assert seen_in_mlflow == [1, 2]  # both epochs were in MLflow before the round could end
    state = json.loads((params.run_dir() / "mlflow.json").read_text())
    client = MlflowClient(tracking_uri=state["tracking_uri"])
    failed = client.get_run(state["children"]["0"])
    assert failed.info.status == "FAILED" and failed.info.end_time > failed.info.start_time
    assert rundir.completed_rounds(params.run_dir()) == []

    monkeypatch.undo()
    result = augment_loop(params)
    children = _children(client, result)
    assert list(children) == [0] and children[0].info.run_id == failed.info.run_id  # the same child, reopened
    assert children[0].info.status == "FINISHED" and children[0].data.tags["compaug.attempts"] == "2"
    # the retry trained both epochs again into the same child: each step keeps one value, not one per attempt
    history = client.get_metric_history(failed.info.run_id, "epoch/train_loss")
    assert sorted(m.step for m in history) == [1, 2]


def test_an_unreadable_round_marker_is_redone_in_its_reopened_child_without_doubled_metrics(prefect_harness,
                                                                                            tmp_path):
    from mlflow.tracking import MlflowClient

    params = tiny_params(tmp_path, rounds=1)
    first = augment_loop(params)
    run_dir = params.run_dir()
    (rundir.round_dir(run_dir, 0) / "metrics.json").write_text("")  # as a power cut left it before #34
    again = augment_loop(params)  # no error: round 0 and round 1, which built on it, are redone
    assert rundir.completed_rounds(run_dir) == [0, 1]
    assert (rundir.round_dir(run_dir, 0) / "metrics.json.redone").read_text() == ""
    assert [r.pool_size for r in again["rounds"]] == [r.pool_size for r in first["rounds"]]
    client = MlflowClient(tracking_uri=again["tracking_uri"])
    assert again["mlflow_run_id"] == first["mlflow_run_id"]
    assert client.get_run(again["mlflow_run_id"]).info.status == "FINISHED"
    children = _children(client, again)
    assert sorted(children) == [0, 1] and all(c.data.tags["compaug.attempts"] == "2" for c in children.values())
    for child in children.values():
        assert sorted(m.step for m in client.get_metric_history(child.info.run_id, "epoch/train_loss")) == [1, 2]
    assert sorted(m.step for m in client.get_metric_history(again["mlflow_run_id"], "pool/size")) == [0, 1]


def test_resume_after_a_failure_skips_finished_rounds_and_ends_with_the_same_pool(prefect_harness, tmp_path,
                                                                                  monkeypatch):
    reference = augment_loop(tiny_params(tmp_path / "reference"))
    params = tiny_params(tmp_path / "interrupted")
    monkeypatch.setenv(FAULT_ENV, "2")
    with pytest.raises(Exception, match="injected failure"):
        augment_loop(params)
    run_dir = params.run_dir()
    assert rundir.completed_rounds(run_dir) == [0, 1]
    stamps = {r: (rundir.round_dir(run_dir, r) / "metrics.json").stat().st_mtime_ns for r in (0, 1)}
    weights = {r: sorted(p.stat().st_mtime_ns for p in (rundir.round_dir(run_dir, r) / "checkpoint").iterdir())
               for r in (0, 1)}
    monkeypatch.delenv(FAULT_ENV)
    resumed = augment_loop(params)
    for r in (0, 1):  # not retrained, not rewritten
        assert (rundir.round_dir(run_dir, r) / "metrics.json").stat().st_mtime_ns == stamps[r]
        assert sorted(p.stat().st_mtime_ns for p in (rundir.round_dir(run_dir, r) / "checkpoint").iterdir()) == weights[r]
    final = [p.to_dict() for p in read_problems_jsonl(rundir.round_dir(run_dir, 2) / "pool.jsonl")]
    expected = [p.to_dict() for p in read_problems_jsonl(
        rundir.round_dir(tiny_params(tmp_path / "reference").run_dir(), 2) / "pool.jsonl")]
    assert final == expected
    assert [r.pool_size for r in resumed["rounds"]] == [r.pool_size for r in reference["rounds"]]
    from mlflow.tracking import MlflowClient

    children = _children(MlflowClient(tracking_uri=resumed["tracking_uri"]), resumed)
    assert sorted(children) == [0, 1, 2]  # round 2's child, FAILED by the injected failure, was reopened
    assert children[2].info.status == "FINISHED" and children[2].data.tags["compaug.attempts"] == "2"


def test_a_round_killed_mid_training_continues_from_its_last_epoch(prefect_harness, tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient
    from solvers.registry import load_solver

    train = {"epochs": 3, "batch_size": 32, "beam_size": 2}
    reference = tiny_params(tmp_path / "reference", rounds=1, warm_start=True, train=train)
    augment_loop(reference)
    params = tiny_params(tmp_path / "interrupted", rounds=1, warm_start=True, train=train)
    monkeypatch.setenv(EPOCH_FAULT_ENV, "1:2")
    with pytest.raises(Exception, match="injected failure after epoch 2 of round 1"):
        augment_loop(params)
    round_1 = rundir.round_dir(params.run_dir(), 1)
    assert (round_1 / "train_state" / "train_state.pt").exists() and rundir.completed_rounds(params.run_dir()) == [0]
    monkeypatch.delenv(EPOCH_FAULT_ENV)
    result = augment_loop(params)
    assert not (round_1 / "train_state" / "train_state.pt").exists()  # removed once the checkpoint was saved
    epochs = json.loads((round_1 / "epochs.json").read_text())
    assert [e["epoch"] for e in epochs] == [1, 2, 3]
    expected = json.loads((rundir.round_dir(reference.run_dir(), 1) / "epochs.json").read_text())
    assert [e["train_loss"] for e in epochs] == [e["train_loss"] for e in expected]
    a = load_solver(round_1 / "checkpoint", device="cpu").model.state_dict()
    b = load_solver(rundir.round_dir(reference.run_dir(), 1) / "checkpoint", device="cpu").model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)  # the weights of an uninterrupted round
    # only epoch 3 was trained again: MLflow holds each epoch once
    child = _children(MlflowClient(tracking_uri=result["tracking_uri"]), result)[1]
    history = MlflowClient(tracking_uri=result["tracking_uri"]).get_metric_history(child.info.run_id, "epoch/train_loss")
    assert sorted(m.step for m in history) == [1, 2, 3]

def test_a_split_file_gives_comdiv_and_iid_sets_and_the_pools_compound_divergence(prefect_harness, tmp_path):
    from mwp.builtin import generate_corpus

    corpus = generate_corpus(120, seed=0)  # the same problems the loop loads (builtin_size 120, seed 0)
    deep = [p.id for p in corpus if len(p.prefix()) >= 7]  # three-operator problems: a compositional test
    split = {"method": "comdiv", "k": 5, "parameters": {"k": 5, "seed": 0, "window": 4, "compound_alpha": 0.1},
             "train": [p.id for p in corpus if p.id not in deep], "test": deep}
    (tmp_path / "split.json").write_text(json.dumps(split))
    params = tiny_params(tmp_path, rounds=1, split_file=str(tmp_path / "split.json"),  # no stored labeler: fitted once
                         iid_holdout_fraction=0.1)
    result = augment_loop(params)
    run_dir = params.run_dir()
    assert sorted(p.stem for p in (run_dir / "data").glob("test_*.jsonl")) == ["test_comdiv", "test_iid_holdout"]
    assert {p.id for p in read_problems_jsonl(run_dir / "data" / "test_comdiv.jsonl")} == set(deep)
    rows = result["rounds"]
    assert all(0.0 < r.compound_divergence <= 1.0 for r in rows)
    assert all(set(r.tests) == {"comdiv", "iid_holdout"} for r in rows)
    assert all(r.relative_gap is not None or r.tests["comdiv"].answer_acc == 0 for r in rows)
    labeler = json.loads((run_dir / "data" / "quantity_labeler.json").read_text())  # JSON, never a pickle
    assert labeler["k"] == 5


def test_warm_started_rounds_train_their_own_epoch_count(prefect_harness, tmp_path):
    params = tiny_params(tmp_path, rounds=1, warm_start=True, warm_start_epochs=1, train={"epochs": 3, "batch_size": 32,
                                                                                          "beam_size": 2})
    augment_loop(params)
    run_dir = params.run_dir()
    epochs = [json.loads((rundir.round_dir(run_dir, r) / "epochs.json").read_text()) for r in (0, 1)]
    assert [len(e) for e in epochs] == [3, 1]  # round 0 from scratch, round 1 continued for warm_start_epochs
    assert rundir.read_record(run_dir, 1).best_epoch == 1


def test_rounds_without_augmentation_train_again_on_the_original_pool(prefect_harness, tmp_path):
    # the warm-control arm: the warm-started rounds' training with nothing generated or added
    params = tiny_params(tmp_path, rounds=2, warm_start=True, warm_start_epochs=1, augment_rounds=False,
                         train={"epochs": 2, "batch_size": 32, "beam_size": 2})
    augment_loop(params)
    run_dir = params.run_dir()
    records = [rundir.read_record(run_dir, r) for r in (0, 1, 2)]
    assert [r.pool_size for r in records] == [records[0].pool_size] * 3
    assert all(r.generation is None and r.train_seconds > 0 for r in records)  # trained every round
    assert [len(json.loads((rundir.round_dir(run_dir, r) / "epochs.json").read_text())) for r in (0, 1, 2)] == [2, 1, 1]
    pools = [(rundir.round_dir(run_dir, r) / "pool.jsonl").read_text() for r in (0, 1, 2)]
    assert pools[0] == pools[1] == pools[2]
    assert not any((rundir.round_dir(run_dir, r) / "candidates.jsonl").exists() for r in (1, 2))


def test_the_run_ends_with_the_equal_update_control(finished_run):
    """One extra training on the original pool with as many optimizer updates as round T had, evaluated
    on the same test sets; the summary prints both final accuracies side by side."""
    from cli.run import control_lines

    params, result = finished_run
    rounds, control = result["rounds"], result["control"]
    assert control is not None and control.pool_size == rounds[0].pool_size
    wanted = max(2, math.ceil(2 * rounds[-1].pool_size / rounds[0].pool_size))  # epochs x final / original pool
    assert wanted > 2  # the pool grew, so the control trains longer than a round
    control_dir = params.run_dir() / "control" / "round_02"  # the round it matches
    ckpt = json.loads((control_dir / "checkpoint" / "checkpoint.json").read_text())
    assert ckpt["extra"]["training"]["train_config"]["epochs"] == wanted
    assert set(control.tests) == set(rounds[-1].tests)
    assert json.loads((control_dir / "metrics.json").read_text())["pool_size"] == rounds[0].pool_size
    lines = control_lines(result)
    assert "equal-update control" in lines[0] and any(line.strip().startswith("iid") for line in lines)
    from mlflow.tracking import MlflowClient

    logged = MlflowClient(tracking_uri=result["tracking_uri"]).get_metric_history(result["mlflow_run_id"],
                                                                                "control/acc/iid")
    assert [(m.step, m.value) for m in logged] == [(rounds[-1].round, round(control.tests["iid"].answer_acc, 4))]


def test_a_run_without_control_says_so_and_keeps_its_run_directory(finished_run, tmp_path):
    from cli.run import control_lines

    params, result = finished_run
    off = tiny_params(tmp_path, control=False)
    assert off.fingerprint() == tiny_params(tmp_path).fingerprint()  # the control changes no round
    assert control_lines({**result, "control": None})[0].startswith("no control")
