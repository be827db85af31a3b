"""Environment defaults every entry point sets before Prefect, MLflow or torch load (see
../shared/STACK.md): no telemetry, a long enough ephemeral-server start-up, an offline model hub,
and passive OpenMP waiting (spinning threads make training 5-15x slower on a contended CPU,
docs/solvers.md). Values already set by the user win."""
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
