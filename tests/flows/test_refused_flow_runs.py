"""A refused start of the loop's flow, as a deployment starts it (the Prefect server made the flow run
before any compaug code runs): a run directory another process holds, or a resume whose data changed,
ends the flow run Cancelled with the one-line reason, writes nothing and leaves a finished MLflow run as
it was. The command line refuses the same before any flow run (test_concurrent_runs.py). A training step the
worker's device cannot take is a settings error, not a refusal: that flow run fails, also before writing anything."""
import json

import pytest
import torch

from flows.augment_loop import augment_loop
from test_augment_loop import tiny_params


def test_resuming_after_the_data_changed_is_refused(prefect_harness, tmp_path):
    from mwp.builtin import generate_corpus
    from mwp.expr import Num, substitute, to_infix

    def record(p):  # the generic JSONL format: the equation written with the text's numbers
        equation = to_infix(substitute(p.expression, {i: Num(v) for i, v in enumerate(p.values)}))
        return {"id": p.id, "text": p.text, "equation": "x=" + equation, "answer": float(p.answer)}

    rows = [record(p) for p in generate_corpus(60, seed=2)]
    data = tmp_path / "own.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = tiny_params(tmp_path, rounds=0, data={"format": "jsonl", "path": str(data)})
    first = augment_loop(params)
    assert first["data"]["usable"] == 60
    data.write_text("".join(json.dumps(r) + "\n" for r in rows[:-1]))  # one record fewer
    state = augment_loop(params, return_state=True)
    # a deployment's flow run ends Cancelled with the one-line reason, never Failed
    assert state.is_cancelled() and "changed since this run started" in state.message
    assert _recorded_state(state).is_cancelled()
    from mlflow.tracking import MlflowClient

    # refused before the tracker reopened the run: the finished run stays FINISHED
    assert MlflowClient(tracking_uri=first["tracking_uri"]).get_run(first["mlflow_run_id"]).info.status == "FINISHED"


def test_a_second_run_on_a_locked_run_directory_is_refused(prefect_harness, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    params = tiny_params(tmp_path, rounds=0)
    params.run_dir().mkdir(parents=True)
    # another process holds the directory (within one process the lock is shared: the CLI takes it
    # before it starts the flow, which takes it again)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from tasks.loop.rundir import lock; held = lock(Path(sys.argv[1])); "
                               "print('held', flush=True); time.sleep(300)", str(params.run_dir())],
                              cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        state = augment_loop(params, return_state=True)
        assert state.is_cancelled() and state.message == (f"refused: {params.run_dir()} is in use by another run "
                                                          f"(pid {holder.pid}); wait for it or use another --out")
        assert _recorded_state(state).is_cancelled()
    finally:
        holder.kill()
        holder.wait()
    assert not (params.run_dir() / "round_00").exists() and not (params.run_dir() / "mlflow.json").exists()


def _recorded_state(state):
    """The state the Prefect server holds for the flow run that ended in ``state``."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_flow_run(state.state_details.flow_run_id).state


@pytest.mark.skipif(torch.cuda.is_available(), reason="auto is CUDA on this machine")
def test_a_step_this_machine_cannot_take_fails_the_flow_run_before_it_writes_anything(prefect_harness, tmp_path):
    """A deployment's worker without CUDA, given a graphed step: the flow run fails at once, naming the step."""
    params = tiny_params(tmp_path, train={"epochs": 2, "batch_size": 32, "step": "graphed", "precision": "fp32"})
    state = augment_loop(params, return_state=True)
    assert state.is_failed() and "step graphed captures CUDA graphs" in state.message
    assert "device auto is the CPU here" in state.message and _recorded_state(state).is_failed()
    assert not (tmp_path / "runs").exists()  # no run directory, no MLflow store
