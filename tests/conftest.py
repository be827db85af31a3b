"""Test-wide environment: telemetry off, a private PREFECT_HOME, offline model hub, few threads.

Set before Prefect, MLflow or transformers are imported anywhere (see ../shared/STACK.md)."""
import os
import tempfile

from flows.environment import apply_defaults

_HOME = tempfile.mkdtemp(prefix="compaug-tests-")
os.environ.setdefault("PREFECT_HOME", os.path.join(_HOME, "prefect"))
apply_defaults()  # telemetry off, offline hub, passive OpenMP waiting (flows/environment.py)

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
