"""flows/prefect_server.py: a temporary server launched early (as `compaug run` does before its flow's imports)
is waited for by temporary_server, which points PREFECT_API_URL at it for the block and stops it after; a real
server in a PREFECT_HOME of the test's own."""
import os
import urllib.request

from flows.prefect_server import TemporaryServer, launch_temporary_server, temporary_server


def test_a_launched_server_is_waited_for_used_and_stopped_by_the_block(tmp_path, monkeypatch):
    from prefect.settings import PREFECT_API_URL, PREFECT_HOME, temporary_settings

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with temporary_settings(updates={PREFECT_HOME: str(tmp_path / "prefect")}, restore_defaults={PREFECT_API_URL}):
        server = launch_temporary_server()
        assert isinstance(server, TemporaryServer)
        process = server.process
        assert process.poll() is None  # launched: running, not yet waited for
        with temporary_server(server) as url:
            assert url == server.api_url == os.environ["PREFECT_API_URL"]
            with urllib.request.urlopen(url + "/health", timeout=10) as response:
                assert response.status == 200
        assert "PREFECT_API_URL" not in os.environ  # restored
        assert process.poll() is not None and server.process is None  # stopped and reaped
        server.stop()  # a second stop (cli/run.py's own, after run_stoppable's) does nothing
        assert (tmp_path / "prefect" / "prefect.db").exists()  # it served from the home it was given


def test_no_server_is_launched_where_prefect_api_url_names_one(monkeypatch):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        assert launch_temporary_server() is None
        with temporary_server(None) as url:
            assert url is None
