"""Study cells on a real 2-worker Dask LocalCluster through Prefect's DaskTaskRunner give the same numbers
as the sequential run for the same seeds on CPU (one torch thread per cell in both), the round 0 each seed's
arms share included (trained first, alone, then adopted)."""
import dataclasses
import json

from flows.study import StudyParams, study_flow
from tasks.loop import rundir
from tasks.loop.round_zero import adopted_from


def _params(out, **extra):
    return StudyParams.model_validate({
        "name": "parallel", "splits": [{"name": "iid", "data": {"format": "builtin", "builtin_size": 80}}],
        "solvers": [{"name": "gts", "model": {"embedding_size": 16, "hidden_size": 16, "min_count": 1}}],
        "train": {"epochs": 2, "batch_size": 32, "beam_size": 2}, "augment": {"per_round_cap": 200},
        "arms": ["control", "loop", "least-confident"], "seeds": [0, 1], "rounds": 1, "out_dir": str(out), "torch_threads": 1, **extra})


def _records(params):
    out = {}
    for cell in params.cells():
        run_dir = next((params.directory() / "cells" / cell.key).iterdir())
        for r in rundir.completed_rounds(run_dir):
            record = rundir.read_record(run_dir, r)
            out[(cell.key, r)] = dataclasses.replace(record, train_seconds=0.0, round_seconds=0.0)
    return out


def test_a_two_worker_dask_study_gives_the_sequential_numbers(prefect_harness, tmp_path):
    sequential = _params(tmp_path / "one")
    parallel = _params(tmp_path / "two", workers=2)
    first, second = study_flow(sequential), study_flow(parallel)
    assert first["failed"] == [] and second["failed"] == []
    a, b = _records(sequential), _records(parallel)
    assert len(a) == 2 * 1 + 2 * 2 * 2  # controls: round 0; loop and least-confident: rounds 0 and 1
    assert a == b  # every count, confidence, accuracy and pool size
    for params in (sequential, parallel):
        for seed in (0, 1):
            loop, least = (next((params.directory() / "cells" / f"gts-iid-{arm}-s{seed}").iterdir())
                           for arm in ("loop", "least-confident"))
            assert adopted_from(least, 0) == str(loop.resolve()) and adopted_from(loop, 0) is None
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=second["tracking_uri"])
    for seed in (0, 1):  # stopped after round 0 and continued: one run, tracked with its own T throughout
        loop = next((parallel.directory() / "cells" / f"gts-iid-loop-s{seed}").iterdir())
        run = client.get_run(json.loads((loop / "mlflow.json").read_text())["parent_run_id"])
        assert run.data.params["rounds"] == "1" and run.info.status == "FINISHED"
        assert {m.step for m in client.get_metric_history(run.info.run_id, "pool/size")} == {0, 1}
