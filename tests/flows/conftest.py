"""One Prefect test harness (a real temporary Prefect server with SQLite) for every flow test."""
import pytest


@pytest.fixture(scope="session")
def prefect_harness():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield
