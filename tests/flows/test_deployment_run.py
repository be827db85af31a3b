"""A deployment from prefect.yaml, deployed to a real local Prefect server and run by a real process
worker, completes. Everything is started the way the README tells a user to start it."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PREFECT = str(Path(sys.executable).with_name("prefect"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"Prefect server at {url} not healthy after {timeout}s")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@pytest.mark.skipif(not Path(PREFECT).exists(), reason="the prefect command is not installed beside this Python")
def test_smoke_deployment_runs_to_completion_on_a_local_server(tmp_path):
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = dict(os.environ, PREFECT_HOME=str(tmp_path / "prefect-home"), PREFECT_API_URL=api,
               PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="true", MLFLOW_DISABLE_TELEMETRY="true",
               PREFECT_LOGGING_LEVEL="WARNING",
               PREFECT_WORKER_QUERY_SECONDS="2")  # a user's setting; Prefect's 10 s poll was idle time in the test
    logs = tmp_path / "logs"
    logs.mkdir()
    server = subprocess.Popen([PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port),
                               "--analytics-off"], env=env, cwd=tmp_path,
                              stdout=open(logs / "server.log", "w"), stderr=subprocess.STDOUT)
    worker = None
    try:
        _wait_healthy(api, 120)
        run = lambda *args, **kw: subprocess.run([PREFECT, *args], env=env, cwd=ROOT, capture_output=True,
                                                 text=True, timeout=kw.get("timeout", 180))
        created = run("work-pool", "create", "compaug-local", "--type", "process")
        assert created.returncode == 0, created.stdout + created.stderr
        deployed = run("--no-prompt", "deploy", "--name", "smoke-builtin")
        assert deployed.returncode == 0, deployed.stdout + deployed.stderr
        worker = subprocess.Popen([PREFECT, "worker", "start", "--pool", "compaug-local"], env=env, cwd=ROOT,
                                  stdout=open(logs / "worker.log", "w"), stderr=subprocess.STDOUT)
        out_dir = tmp_path / "runs"
        tiny = {"params": {"data": {"format": "builtin", "builtin_size": 80},
                           "solver": {"name": "gts", "model": {"embedding_size": 16, "hidden_size": 16}},
                           "train": {"epochs": 2}, "augment": {"per_round_cap": 200}, "loop": {"rounds": 1}, "seed": 0,
                           "out_dir": str(out_dir)}}
        started = run("deployment", "run", "augment-loop/smoke-builtin", "--params", json.dumps(tiny),
                      "--watch", "--watch-timeout", "400", timeout=450)
        worker_log = (logs / "worker.log").read_text()
        assert started.returncode == 0, started.stdout + started.stderr + worker_log[-4000:]
        assert "Completed" in started.stdout, started.stdout
        run_dirs = list(out_dir.glob("compaug-builtin-*"))
        assert len(run_dirs) == 1
        assert (run_dirs[0] / "round_01" / "metrics.json").exists()
    finally:
        if worker is not None:
            _stop(worker)
        _stop(server)
