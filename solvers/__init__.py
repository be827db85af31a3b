"""Torch MWP solvers behind one contract (solvers/base.py); see docs/solvers.md.

Heavy modules are not imported here: use ``solvers.registry.build_solver``/``load_solver``."""
