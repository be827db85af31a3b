"""Runs that share an --out, as real processes: a new tracking store opened by several at once, a run
refused because another holds its run directory, and a resume refused because its data changed. Each
refusal is one line before a Prefect server, flow run or MLflow status change exists."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from flows.params import LoopParams

ROOT = Path(__file__).resolve().parents[2]

_OPEN_STORE = r"""
import sys, time
from pathlib import Path
from tasks.loop.startup import prepare_experiment, tracking_client
uri, ready, go = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
ready.touch()  # imported: ready to open the store
while not go.exists():  # every process opens the store at the same moment
    time.sleep(0.005)
print(prepare_experiment(tracking_client(uri), "shared", uri))
"""


def _env(prefect_home: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PREFECT_HOME": str(prefect_home)}
    env.pop("PREFECT_API_URL", None)
    return env


def test_processes_opening_one_new_store_at_once_all_succeed_with_one_experiment(tmp_path):
    # without the store lock, 3 of 3 tries of two processes failed (alembic CommandError, OperationalError)
    uri = f"sqlite:///{tmp_path / 'out' / 'mlflow.db'}"
    ready, go = [tmp_path / f"ready-{i}" for i in range(3)], tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _OPEN_STORE, uri, str(flag), str(go)], cwd=ROOT,
                              env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for flag in ready]
    deadline = time.monotonic() + 120
    while not all(flag.exists() for flag in ready):  # after every interpreter has imported MLflow
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), \
            [p.stderr.read()[-800:] for p in procs if p.poll() is not None]
        time.sleep(0.05)
    go.touch()
    results = [(p.wait(timeout=180), p.stdout.read().strip(), p.stderr.read()) for p in procs]
    assert [rc for rc, _, _ in results] == [0, 0, 0], [err[-800:] for _, _, err in results]
    assert len({out for _, out, _ in results}) == 1  # one experiment, the same id for all


def _tiny(tmp_path: Path, **changes) -> tuple[Path, LoopParams]:
    values = {"data": {"format": "builtin", "builtin_size": 120},
              "solver": {"name": "gts", "model": {"embedding_size": 16, "hidden_size": 16}},
              "train": {"epochs": 1, "batch_size": 32, "beam_size": 1}, "rounds": 0, "seed": 3,
              "out_dir": str(tmp_path / "runs"), **changes}
    path = tmp_path / "params.json"
    path.write_text(json.dumps(values))
    return path, LoopParams.model_validate(values)


def _compaug_run(params_file: Path, prefect_home: Path, api_url: str | None = None) -> subprocess.CompletedProcess:
    """``compaug run --params FILE``; with its own temporary Prefect server unless ``api_url`` names one."""
    env = _env(prefect_home) if api_url is None else {**_env(prefect_home), "PREFECT_API_URL": api_url}
    return subprocess.run([sys.executable, "-m", "cli.main", "run", "--params", str(params_file)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


def test_a_run_whose_directory_another_process_holds_is_refused_in_one_line_before_any_tracking(tmp_path):
    params_file, params = _tiny(tmp_path)
    params.run_dir().mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from tasks.loop.rundir import lock; held = lock(Path(sys.argv[1])); "
                               "print('held', flush=True); time.sleep(300)", str(params.run_dir())],
                              cwd=ROOT, env=_env(tmp_path), stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        refused = _compaug_run(params_file, tmp_path / "prefect")
    finally:
        holder.kill()
        holder.wait()
    assert refused.returncode == 2
    assert refused.stderr.strip() == (f"compaug run: error: {params.run_dir()} is in use by another run "
                                      f"(pid {holder.pid}); wait for it or use another --out (--debug shows the traceback)")
    assert refused.stdout == ""
    assert not (tmp_path / "prefect" / "prefect.db").exists()  # no Prefect server started, so no flow run
    assert not (tmp_path / "runs" / "mlflow.db").exists()
    assert sorted(p.name for p in params.run_dir().iterdir()) == [".lock"]


def test_a_resume_with_changed_data_is_refused_in_one_line_and_the_finished_run_stays_finished(prefect_harness,
                                                                                               tmp_path):
    from mlflow.tracking import MlflowClient
    from prefect.settings import PREFECT_API_URL

    rows = [{"id": f"p{i}", "text": f"Tom has {i + 2} apples and buys {i + 3} more. How many apples?",
             "equation": f"x={i + 2}+{i + 3}", "answer": 2 * i + 5} for i in range(40)]
    data = tmp_path / "own.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    params_file, params = _tiny(tmp_path, data={"format": "jsonl", "path": str(data)})
    # the finished run reports to the tests' Prefect server (tests/flows/test_signals.py covers a command's own)
    first = _compaug_run(params_file, tmp_path / "prefect-first", PREFECT_API_URL.value())
    assert first.returncode == 0, first.stderr[-2000:]
    state = json.loads((params.run_dir() / "mlflow.json").read_text())
    client = MlflowClient(tracking_uri=state["tracking_uri"])
    assert client.get_run(state["parent_run_id"]).info.status == "FINISHED"
    stamp = (params.run_dir() / "mlflow.json").stat().st_mtime_ns

    data.write_text("".join(json.dumps(r) + "\n" for r in rows[:-1]))  # one record fewer
    refused = _compaug_run(params_file, tmp_path / "prefect-second")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (f"compaug run: error: {params.run_dir()}: the data or split file changed since "
                                      "this run started; resuming would mix rounds made from different data. Use "
                                      "another --out, or delete the run directory. (--debug shows the traceback)")
    assert not (tmp_path / "prefect-second" / "prefect.db").exists()
    assert client.get_run(state["parent_run_id"]).info.status == "FINISHED"
    assert (params.run_dir() / "mlflow.json").stat().st_mtime_ns == stamp
