"""Environment defaults every entry point sets before Prefect, MLflow or torch load (see
../shared/STACK.md): no telemetry, a long enough ephemeral-server start-up, an offline model hub,
and passive OpenMP waiting (spinning threads make training slower on a contended CPU: a GRU step
5-15x, two 2-thread trainings on 2 cores with libgomp's brief default spin 3.3x, docs/solvers.md; on
an otherwise idle machine `GOMP_SPINCOUNT=300000` trained about 1.2x faster, across two separate
runs). Values already set by the user win."""
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
    "GOMP_SPINCOUNT": "0",
}


def apply_defaults() -> None:
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
