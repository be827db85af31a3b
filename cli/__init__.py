"""compaug's command line, the ``compaug`` command (``cli.main``): one module per sub-command with a
``register(subparsers)`` function (``data``, ``split``, ``run``, ``study``), the one generator of their
options from the flows' settings models (``fields``), and the checks a command makes before any work
(``preflight``). Arrows point down: the command line calls flows/ and tasks/, nothing imports it.

Importing this package first imports flows/, whose ``__init__`` sets the environment defaults
(flows/environment.py) before anything loads torch."""
import flows  # noqa: F401  (the environment defaults: OpenMP reads them once, when torch loads)
