"""Environment defaults every entry point sets before Prefect, MLflow or torch load (see
../shared/STACK.md): no telemetry, a long enough ephemeral-server start-up, an offline model hub, and
OpenMP threads that spin only briefly (``GOMP_SPINCOUNT=3000`` iterations) before
they sleep: a brief spin trains nearly as fast as libgomp's long default when a training is alone and
loses far less when trainings share the cores (the figures and how they were measured:
docs/solvers.md, bench/omp_contention.py). On a machine shared with other busy jobs set
``GOMP_SPINCOUNT=0``. Values already set by the user win."""
from __future__ import annotations

import os

DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "true",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "OMP_WAIT_POLICY": "PASSIVE",
    "GOMP_SPINCOUNT": "3000",
}


def apply_defaults() -> None:
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
