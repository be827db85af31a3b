"""flows/prefect_server.py's TemporaryServer when its process ends as it starts: one clear error, nothing left
to stop (the start, health check and stop of a real server run in tests/flows/test_signals.py)."""
import pytest

from flows import prefect_server


def test_a_server_that_exits_as_it_starts_is_one_error_and_leaves_nothing_running(monkeypatch):
    monkeypatch.setattr(prefect_server, "_LAUNCHER", "import sys; sys.exit(7)")
    server = prefect_server.TemporaryServer()
    with pytest.raises(RuntimeError, match="exited with status 7 as it started"):
        server.start()
    assert server.process is None
    server.stop()  # nothing to stop: no error
