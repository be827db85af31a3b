"""Test-wide environment: telemetry off, a private PREFECT_HOME, offline model hub, few threads.

Set before Prefect, MLflow or transformers are imported anywhere (see ../shared/STACK.md)."""
import os
import tempfile

_HOME = tempfile.mkdtemp(prefix="compaug-tests-")
os.environ.setdefault("PREFECT_HOME", os.path.join(_HOME, "prefect"))
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "true")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# OpenMP threads that spin while waiting make the shared 2-core CPU several times slower when other
# jobs run (bench/solver_speed.py measured 5-15x on a GRU step); must be set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("GOMP_SPINCOUNT", "0")

import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _few_torch_threads():
    """Tests use tiny models: two threads are plenty and keep parallel test runs from thrashing."""
    try:
        import torch
    except ImportError:  # pragma: no cover
        yield
        return
    torch.set_num_threads(2)
    yield
