"""The temporary Prefect server of a ``compaug run`` or ``compaug study``, started so that it can be stopped.

With no ``PREFECT_API_URL``, Prefect starts a temporary server on first use (``SubprocessASGIServer`` in
``prefect/server/api/server.py``: uvicorn in a child process, stopped by an ``atexit`` handler). Two things
go wrong with it when a run is interrupted (docs/reliability.md, "Signals"):

- it shares the terminal's process group, so Ctrl-C reaches the server too and it shuts down while the run
  still needs it to record the stop (the run then retries its API calls for about 75 s);
- ``atexit`` handlers do not run when SIGTERM's default action or kill -9 ends the process, so the server
  outlives it; each Dask worker of a study started one more.

So compaug starts Prefect's own server itself, the same command and environment, but in a session of its
own (no terminal signals) and, on Linux, with ``PR_SET_PDEATHSIG`` (the kernel sends it SIGTERM when the
process that started it ends, even by kill -9). ``PREFECT_API_URL`` then points at it, in this process and
in every process started from it, so Dask workers use this server instead of starting their own.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Iterator

# Run in the server's process before uvicorn: ask for SIGTERM when the parent ends (Linux), and end at once
# if the parent is already gone. The arguments are the parent's pid, then uvicorn's own arguments.
_LAUNCHER = """
import ctypes, os, runpy, signal, sys
parent = int(sys.argv.pop(1))
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
except (AttributeError, OSError):  # not Linux: the server ends with an orderly stop only
    pass
if os.getppid() != parent:
    sys.exit(0)
sys.argv[0] = "uvicorn"
runpy.run_module("uvicorn", run_name="__main__", alter_sys=True)
"""


class TemporaryServer:
    """Prefect's temporary server, in a session of its own and tied to this process's life.

    It runs what Prefect's ``SubprocessASGIServer`` runs (prefect/server/api/server.py, prefect 3.8.8: uvicorn
    serving ``prefect.server.api.server:create_app`` with the UI off and this process's Prefect settings), and
    waits for its health check as Prefect does, but without importing Prefect's server package here: the client
    never uses it, and importing it took 4-5 s of every ``compaug run`` before the server's own start."""

    def __init__(self) -> None:
        self.port: int | None = None
        self.process: subprocess.Popen | None = None

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def _launch(self) -> subprocess.Popen:
        import prefect
        from prefect.settings import get_current_settings

        env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
               "PREFECT__SERVER_FINAL": "1", **get_current_settings().to_environment_variables(exclude_unset=True)}
        self.port = _free_port()
        return subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, str(os.getpid()),
             "--app-dir", str(prefect.__module_path__.parent), "--factory", "prefect.server.api.server:create_app",
             "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "error", "--lifespan", "on"],
            env=env, start_new_session=True)

    def start(self) -> None:
        """Start it and return once it answers its health check; an error if it exits or does not answer
        within ``PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS``."""
        import httpx
        from prefect.logging import get_logger
        from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS

        timeout = PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()
        deadline = time.monotonic() + timeout
        self.process = self._launch()
        get_logger().info("Starting temporary server on http://127.0.0.1:%s", self.port)
        with httpx.Client() as client:
            while True:
                status = self.process.poll()
                if status == 3 and time.monotonic() < deadline:  # uvicorn could not bind: the port was taken
                    self.process = self._launch()
                    continue
                if status is not None:
                    self.process = None
                    raise RuntimeError(f"the temporary Prefect server exited with status {status} as it started")
                try:
                    if client.get(f"{self.api_url}/health").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"the temporary Prefect server did not answer within {timeout} s "
                                       "(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS)")
                time.sleep(0.1)

    def stop(self) -> None:
        """Terminate it (kill it after 5 s, as Prefect does) and reap it."""
        if self.process is None:
            return
        from prefect.logging import get_logger

        get_logger().info("Stopping temporary server on http://127.0.0.1:%s", self.port)
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


def _free_port() -> int:
    """A port of 127.0.0.1 that no socket holds now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _drain_prefect_clients() -> None:
    """Send the logs and events Prefect still holds before their server goes (as prefect_test_harness does)."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    try:
        APILogWorker.drain_all(timeout=5)
        EventsWorker.drain_all(timeout=5)
    except Exception:  # never let a failed flush hide why the run ended
        pass


@contextmanager
def temporary_server() -> Iterator[str | None]:
    """A temporary Prefect server for the commands in this block, unless one is configured: yields its API
    URL (None when ``PREFECT_API_URL`` already names a server, which is then left alone)."""
    from prefect.context import refresh_global_settings_context
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():
        yield None
        return
    server = TemporaryServer()
    previous = os.environ.get("PREFECT_API_URL")
    try:
        server.start()
        os.environ["PREFECT_API_URL"] = server.api_url  # this process, and Dask workers started from it
        refresh_global_settings_context()
        yield server.api_url
    finally:
        if server.process is not None:
            _drain_prefect_clients()
        if previous is None:
            os.environ.pop("PREFECT_API_URL", None)
        else:
            os.environ["PREFECT_API_URL"] = previous
        refresh_global_settings_context()
        server.stop()
