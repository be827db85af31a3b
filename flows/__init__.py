"""compaug's Prefect flows: the loop (``augment_loop``), the split and SD set (``split``) and the study
(``study``), their parameter models (``params``), and what running them needs: stop and crash handling
(``signals``), the temporary Prefect server (``prefect_server``) and the environment defaults
(``environment``). The command line is its own package (cli/), above this one.

Importing this package sets the environment defaults of flows/environment.py (no telemetry, an offline
model hub, OpenMP's brief spin). It is the first module of every entry point (the ``compaug`` command
through cli/, a deployment's worker importing ``flows.augment_loop``, the study), and OpenMP reads its
variables once, when torch loads: the command line builds its parameters, which imports the solver and
so torch, before any command function runs, so a call from there would come too late."""
from flows.environment import apply_defaults

apply_defaults()
