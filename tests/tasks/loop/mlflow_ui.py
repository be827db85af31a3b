"""A tiny loop run's MLflow store, an ``mlflow server`` on it and headless Chromium pages of its UI.

Used by tests/tasks/loop/test_mlflow_ui.py and, run as a script, to make the screenshots in docs/img/
(the runs table, a round's child run, the parent's charts):

    PYTHONPATH=. .venv/bin/python tests/tasks/loop/mlflow_ui.py docs/img

The store is written by the real ``LoopTracker`` (tasks/loop/tracking.py) from three hand-made rounds
(round 0 and two augmentation rounds, two operators, a validation and two test sets, three epochs a
round), so its numbers are made up but every name, step, parameter and artifact is what a run logs.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from tasks.loop.tracking import LoopTracker
from tasks.loop.tracking_names import loop_run_name, ui_urls
from solvers.base import EpochStats
from tasks.loop.record import Generation, RoundRecord, SetMetrics

PARAMS = {"seed": 0, "rounds": 2, "solver": {"name": "gts"}, "augment": {"operators": ["op1", "op2"]},
          "keep_fraction": 0.2}
FINGERPRINT = "0123abcdef"


def _record(r: int) -> RoundRecord:
    gen = None if r == 0 else Generation(
        candidates=400 + 10 * r, verified=300, unscorable=0, kept=60 + r, confidence_mean=0.4, confidence_cut=0.55,
        rejected={"matches_valid": 3, "matches_comdiv": 2 * r, "no_number": 40},
        verified_by_operator={"op1": 100, "op2": 200}, kept_by_operator={"op1": 20 + r, "op2": 40},
        kept_origins=50)
    return RoundRecord(round=r, pool_size=600 + 61 * r + r * (r - 1) // 2, train_seconds=30.0 + r,
                       best_epoch=3, valid_answer_acc=0.5 + 0.02 * r,
                       tests={"iid": SetMetrics(96, 0.55 + 0.01 * r, 0.5, 0.0),
                              "comdiv": SetMetrics(96, (29 + 3 * r) / 96, 0.25, 0.01)},  # 0.30208333...
                       relative_gap=(0.55 + 0.01 * r) / ((29 + 3 * r) / 96) - 1, round_seconds=40.0 + r,
                       generation=gen, compound_divergence=0.8 - 0.01 * r, precision="fp32")


def write_store(directory: Path) -> dict[str, str]:
    """The tiny run's store under ``directory`` (``mlflow.db`` and ``mlartifacts/``); its ids and URI."""
    directory.mkdir(parents=True, exist_ok=True)
    uri = f"sqlite:///{(directory / 'mlflow.db').resolve()}"
    run_dir = directory / f"compaug-builtin-{FINGERPRINT}"
    run_dir.mkdir(exist_ok=True)
    tracker = LoopTracker.open(uri, "compaug-builtin", run_dir, PARAMS, None, loop_run_name(PARAMS, FINGERPRINT))
    records = []
    for r in range(3):
        tracker.start_round(r, None)
        for epoch in range(1, 4):
            tracker.log_epoch(r, EpochStats(epoch, 2.0 / epoch, 9.0, 0.4 + 0.04 * epoch, 0.3, lr=1e-3))
        record = _record(r)
        tracker.log_round(record, [{"text": "x", "operator": "op1"}] if r else None)
        tracker.end_round(r)
        records.append(record)
    tracker.log_plot(records)
    tracker.finish()
    children = {int(k): v for k, v in tracker.state["children"].items()}
    return {"uri": uri, "experiment_id": tracker.experiment_id, "parent": tracker.parent_run_id,
            "child": children[1], "children": [children[r] for r in sorted(children)]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def mlflow_server(uri: str, timeout: float = 90):
    """``mlflow server`` (README.md's command) on a free port of 127.0.0.1; yields its base URL."""
    port = free_port()
    program = Path(sys.executable).parent / "mlflow"
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false", "MLFLOW_DISABLE_TELEMETRY": "true",
           "DO_NOT_TRACK": "true"}
    proc = subprocess.Popen([str(program) if program.exists() else "mlflow", "server", "--backend-store-uri", uri,
                             "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(base + "/health", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mlflow server did not start: {proc.stderr.read().decode()[-2000:]}")
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def chromium() -> str | None:
    """Debian's ``chromium`` (installed by .ci/run), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium(url: str, profile: Path, *extra: str, budget_ms: int = 30000,
             size: str = "1920,1080") -> subprocess.CompletedProcess:
    profile.mkdir(parents=True, exist_ok=True)
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--hide-scrollbars", f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
           f"--window-size={size}", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def page_dom(url: str, profile: Path) -> str:
    """The page's DOM after its scripts ran (a fresh browser profile: no saved UI state)."""
    return _chromium(url, profile, "--dump-dom").stdout


def screenshot(url: str, path: Path, profile: Path, size: str = "1920,1080") -> None:
    _chromium(url, profile, f"--screenshot={path.resolve()}", size=size)
    if not path.exists():
        raise RuntimeError(f"chromium wrote no screenshot of {url}")


def screenshot_after_wait(url: str, path: Path, profile: Path, size: str, wait_s: float = 30) -> None:
    """A screenshot taken ``wait_s`` real seconds after loading (Chrome DevTools Protocol): a page of many
    charts never finishes under ``--virtual-time-budget`` (its charts stay spinners)."""
    import base64
    import json

    from websockets.sync.client import connect

    port = free_port()
    proc = subprocess.Popen([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                             "--hide-scrollbars", f"--remote-debugging-port={port}", f"--user-data-dir={profile}",
                             f"--window-size={size}", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=2) as answer:
                    targets = json.load(answer)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        page = next(t for t in targets if t["type"] == "page")
        with connect(page["webSocketDebuggerUrl"], max_size=2 ** 27) as ws:
            def call(message_id: int, method: str, **params):
                ws.send(json.dumps({"id": message_id, "method": method, "params": params}))
                while (reply := json.loads(ws.recv())).get("id") != message_id:
                    pass
                return reply["result"]

            call(1, "Page.navigate", url=url)
            time.sleep(wait_s)
            path.write_bytes(base64.b64decode(call(2, "Page.captureScreenshot", format="png")["data"]))
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def pages(store: dict[str, str], base: str) -> dict[str, str]:
    """The experiment's runs table and a round's child run page."""
    runs, _ = ui_urls(base, store["experiment_id"], store["parent"])
    _, child = ui_urls(base, store["experiment_id"], store["child"])
    return {"runs": runs, "child": child}


def more_pages(store: dict[str, str], base: str) -> dict[str, str]:
    """Pages to look at by hand: the parent's and a child's charts, the compare view of the rounds."""
    exp = store["experiment_id"]
    ids = ",".join(f"%22{i}%22" for i in store["children"])
    return {"parent_charts": f"{base}/#/experiments/{exp}/runs/{store['parent']}/model-metrics?workflowType=machine_learning",
            "child_charts": f"{base}/#/experiments/{exp}/runs/{store['child']}/model-metrics?workflowType=machine_learning",
            "compare": f"{base}/#/compare-runs?runs=[{ids}]&experiments=[%22{exp}%22]&workflowType=machine_learning",
            "chart_view": f"{base}/#/experiments/{exp}/runs?workflowType=machine_learning&viewStateShareKey=compaug-rounds&compareRunsMode=CHART"}


if __name__ == "__main__":  # screenshots for docs/img/
    import tempfile

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img")
    with tempfile.TemporaryDirectory() as tmp:
        store = write_store(Path(tmp) / "runs")
        with mlflow_server(store["uri"]) as base:
            for name, url in pages(store, base).items():
                size = {"runs": "1920,640", "child": "1920,1700"}[name]
                screenshot(url, out / f"mlflow_{name}.png", Path(tmp) / f"profile-{name}", size)
                print(out / f"mlflow_{name}.png", url)
            url = more_pages(store, base)["parent_charts"]
            screenshot_after_wait(url, out / "mlflow_parent_charts.png", Path(tmp) / "profile-charts", "1920,2300")
            print(out / "mlflow_parent_charts.png", url)
