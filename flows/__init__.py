"""compaug's flows and command line.

Importing this package sets the environment defaults of flows/environment.py (no telemetry, an offline
model hub, OpenMP's brief spin). It is the first module of every entry point (the ``compaug`` command,
a deployment's worker importing ``flows.augment_loop``, the study), and OpenMP reads its variables once,
when torch loads: the command line builds its parameters, which imports the solver and so torch, before
any command function runs, so a call from there would come too late."""
from flows.environment import apply_defaults

apply_defaults()
