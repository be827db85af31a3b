"""SIGTERM and Ctrl-C stop a real ``compaug run`` within seconds: exit status 128 + signal, one line and no
traceback, no process of it left (its temporary Prefect server included), the Prefect flow run Cancelled,
the MLflow run KILLED; the same command then resumes and finishes. The command runs as a subprocess with its
own temporary Prefect server (no PREFECT_API_URL) in a PREFECT_HOME of this module's, whose SQLite database
is read after the server has gone. (Three launches of `compaug run`: 110 s on 2 cores at load 6-10, beside a
running study.) Below them, the pieces a stopped study relies on, in-process."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
# The tiny model of tests/flows/test_augment_loop.py on a smaller corpus, one epoch: seconds a round.
ARGS = ["run", "--builtin-size", "30", "--hidden", "16", "--embedding", "16", "--epochs", "1", "--batch-size", "32",
        "--beam-size", "1", "--rounds", "1", "--per-round-cap", "50", "--seed", "3"]
STOP_WITHIN_S = 20  # measured 1.6-2.6 s on 2 busy cores; before this, SIGTERM left the server and "Running"


class Command:
    """``compaug run ARGS --out OUT`` as a subprocess in a session of its own (as a terminal's foreground job
    would be, so Ctrl-C can be sent to its whole process group), its output collected as it comes."""

    def __init__(self, out: Path, prefect_home: Path):
        env = {**os.environ, "PREFECT_HOME": str(prefect_home), "PYTHONPATH": str(ROOT)}
        env.pop("PREFECT_API_URL", None)  # the command starts, and must stop, its own temporary server
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cli.main", *ARGS, "--out", str(out)], cwd=ROOT, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # even if pytest runs in the background
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, fragment: str, timeout: float = 240) -> None:
        deadline = time.monotonic() + timeout
        while not any(fragment in line for line in self.lines):
            assert self.proc.poll() is None, f"ended ({self.proc.returncode}) before {fragment!r}:\n" + self.output()
            assert time.monotonic() < deadline, f"no {fragment!r} after {timeout} s:\n" + self.output()
            time.sleep(0.2)

    def stop(self, signum: int, whole_group: bool) -> tuple[int, float, list[tuple[psutil.Process, str]]]:
        """Send ``signum`` (to the process group, as Ctrl-C in a terminal does, or to the process); returns
        the exit status, the seconds it took to exit, and the descendants it had just before (with their
        command lines)."""
        descendants = []
        for child in psutil.Process(self.proc.pid).children(recursive=True):
            try:
                descendants.append((child, " ".join(child.cmdline())))
            except psutil.NoSuchProcess:
                pass
        start = time.monotonic()
        if whole_group:
            os.killpg(self.proc.pid, signum)
        else:
            self.proc.send_signal(signum)
        status = self.proc.wait(timeout=120)
        seconds = time.monotonic() - start
        self._reader.join(timeout=10)
        return status, seconds, descendants

    def finish(self, timeout: float = 300) -> int:
        status = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return status

    def output(self) -> str:
        return "\n".join(self.lines[-60:])

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _alive(processes: list[tuple[psutil.Process, str]]) -> list[str]:
    left = []
    for p, cmdline in processes:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{p.pid} {cmdline[:120]}")
        except psutil.NoSuchProcess:
            pass
    return left


def _flow_run_states(prefect_home: Path, before: set[str] = frozenset()) -> list[tuple[str, str]]:
    """(flow name, state type) of the flow runs in the temporary server's SQLite database, oldest first, less
    those whose ids are in ``before``."""
    if not (prefect_home / "prefect.db").exists():
        return []
    with sqlite3.connect(prefect_home / "prefect.db") as db:
        rows = db.execute("select r.id, f.name, r.state_type from flow_run r join flow f on f.id = r.flow_id "
                          "order by r.created").fetchall()
    return [(name, state) for run_id, name, state in rows if run_id not in before]


def _flow_run_ids(prefect_home: Path) -> set[str]:
    if not (prefect_home / "prefect.db").exists():
        return set()
    with sqlite3.connect(prefect_home / "prefect.db") as db:
        return {row[0] for row in db.execute("select id from flow_run")}


def _mlflow_run(out: Path):
    from mlflow.tracking import MlflowClient

    (run_dir,) = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("compaug-")]
    run_id = json.loads((run_dir / "mlflow.json").read_text())["parent_run_id"]
    return run_dir, MlflowClient(tracking_uri=f"sqlite:///{out / 'mlflow.db'}").get_run(run_id)


def _assert_stopped_cleanly(command: Command, status: int, seconds: float, descendants, signum: int, out: Path,
                            prefect_home: Path, before: set[str]) -> None:
    output = command.output()
    assert status == 128 + signum, output
    assert seconds < STOP_WITHIN_S, f"took {seconds:.1f} s to stop:\n{output}"
    name = signal.Signals(signum).name
    run_dir, run = _mlflow_run(out)
    assert command.lines[-1] == (f"compaug run: stopped by {name}; run directory {run_dir} can be resumed by "
                                 "running the same command"), output
    assert "Traceback" not in "\n".join(command.lines), output
    assert any("prefect.server.api.server:create_app" in cmdline for _, cmdline in descendants), \
        f"no temporary Prefect server among {descendants}"
    time.sleep(0.5)  # a moment for a process that was told to end
    assert _alive(descendants) == []
    assert _flow_run_states(prefect_home, before) == [("augment-loop", "CANCELLED")]
    assert run.info.status == "KILLED"


@pytest.fixture(scope="module")
def prefect_home(tmp_path_factory):
    """One PREFECT_HOME for the module: its database is created (migrated) once."""
    return tmp_path_factory.mktemp("prefect-home")


def test_sigterm_stops_the_run_and_the_same_command_resumes_it(prefect_home, tmp_path):
    out, before = tmp_path / "runs", _flow_run_ids(prefect_home)
    first = Command(out, prefect_home)
    try:
        first.wait_for("round 0 done")  # round 1 is under way when the signal comes
        status, seconds, descendants = first.stop(signal.SIGTERM, whole_group=False)
    finally:
        first.kill()
    _assert_stopped_cleanly(first, status, seconds, descendants, signal.SIGTERM, out, prefect_home, before)
    _, stopped = _mlflow_run(out)

    again = Command(out, prefect_home)
    try:
        assert again.finish() == 0, again.output()
    finally:
        again.kill()
    assert any("rounds [0] already complete" in line for line in again.lines), again.output()
    run_dir, run = _mlflow_run(out)
    assert (run_dir / "round_01" / "metrics.json").exists()
    assert run.info.run_id == stopped.info.run_id and run.info.status == "FINISHED"
    assert _flow_run_states(prefect_home, before) == [("augment-loop", "CANCELLED"), ("augment-loop", "COMPLETED")]


def test_ctrl_c_stops_the_run_and_its_server_in_order(prefect_home, tmp_path):
    """Ctrl-C reaches the whole foreground process group: before, the server died first and the run then
    retried its calls to it for about 75 s."""
    out, before = tmp_path / "runs", _flow_run_ids(prefect_home)
    command = Command(out, prefect_home)
    try:
        command.wait_for("write_pool")  # round 0's training is about to start
        status, seconds, descendants = command.stop(signal.SIGINT, whole_group=True)
    finally:
        command.kill()
    _assert_stopped_cleanly(command, status, seconds, descendants, signal.SIGINT, out, prefect_home, before)


def test_runs_left_open_below_a_stopped_run_are_ended_at_every_depth(tmp_path):
    """A study's cells whose Dask workers were stopped, and their rounds, end with the study's run."""
    from mlflow.tracking import MlflowClient

    from tasks.loop.tracking import PARENT_TAG, end_open_runs_below

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.create_experiment("e", artifact_location=(tmp_path / "artifacts").as_uri())
    study = client.create_run(experiment).info.run_id
    open_cell = client.create_run(experiment, tags={PARENT_TAG: study}).info.run_id
    open_round = client.create_run(experiment, tags={PARENT_TAG: open_cell}).info.run_id
    done_cell = client.create_run(experiment, tags={PARENT_TAG: study}).info.run_id
    client.set_terminated(done_cell, "FINISHED")
    unrelated = client.create_run(experiment).info.run_id
    end_open_runs_below(client, experiment, study, "KILLED")
    runs = (study, open_cell, open_round, done_cell, unrelated)
    status = {run_id: client.get_run(run_id).info.status for run_id in runs}
    assert status == {study: "RUNNING", open_cell: "KILLED", open_round: "KILLED", done_cell: "FINISHED",
                      unrelated: "RUNNING"}


def test_a_resumed_run_marks_flow_runs_that_kill_9_left_running_crashed(prefect_harness):
    from prefect import flow, get_client
    from prefect.states import Completed, Running

    from flows.signals import crash_abandoned_flow_runs

    @flow(name="augment-loop")
    def placeholder() -> None:
        pass

    with get_client(sync_client=True) as client:
        left_running = client.create_flow_run(placeholder, state=Running())
        finished = client.create_flow_run(placeholder, state=Completed())
        unknown = "00000000-0000-0000-0000-000000000000"  # another server's flow run: left alone
        assert crash_abandoned_flow_runs([str(left_running.id), str(finished.id), unknown], "kill -9") == 1
        assert client.read_flow_run(left_running.id).state.type.value == "CRASHED"
        assert client.read_flow_run(finished.id).state.type.value == "COMPLETED"


def test_a_stop_raised_inside_a_finalizer_is_raised_again_outside_it():
    # The signal lands while the garbage collector runs a __del__: Python ignores the exception raised
    # there, so the stop is delivered once more, to the code that runs after. SIGTERM: a SIGINT that the
    # process ignores (as some earlier test or runner may leave it) stays ignored by design.
    import time

    from flows import signals

    class Finalized:
        def __del__(self):
            signal.raise_signal(signal.SIGTERM)  # the handler runs at this method's next instruction
            sum(range(10))

    del signals._received[:], signals._swallowed[:]
    got, reached_end = None, False
    with signals._stop_handlers():
        assert signal.getsignal(signal.SIGTERM) is signals._handle
        try:
            Finalized()  # freed at once: its __del__ raises Stopped where it is ignored
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                time.sleep(0.01)
            reached_end = True
        except signals.Stopped as err:
            got = err
    assert not reached_end and got is not None and got.signum == signal.SIGTERM
    assert signals._received == [signal.SIGTERM] and signals._swallowed == []


def test_an_error_raised_while_a_stop_is_handled_is_the_stop():
    # a SIGTERM landing as Prefect starts a task run: Prefect's crash handling then raised "Task run is not set"
    # while handling its TerminationSignal, and the run exited 2 with that error instead of stopping (seen once)
    from prefect.exceptions import TerminationSignal

    from flows.signals import Stopped, is_stop

    def raised(make):
        try:
            make()
        except BaseException as err:  # noqa: BLE001 - the exception is the value under test
            return err

    def during(stop):
        def make():
            try:
                raise stop
            except BaseException:
                raise ValueError("Task run is not set")
        return raised(make)

    assert is_stop(during(TerminationSignal(signal=signal.SIGTERM)))
    assert is_stop(during(Stopped(signal.SIGTERM)))
    assert is_stop(raised(lambda: (_ for _ in ()).throw(KeyboardInterrupt())))
    plain = during(RuntimeError("a failure"))
    assert not is_stop(plain) and not is_stop(ValueError("alone"))
    plain.__context__.__context__ = plain  # a cycle ends the walk
    assert not is_stop(plain)
