"""The ``compaug`` command line. Each sub-command lives in its own ``flows/cli_*.py`` module with a
``register(subparsers)`` function; heavy libraries (torch, prefect, mlflow) are imported inside the
command functions so that ``--help`` and data commands start fast."""
from __future__ import annotations

import argparse
import importlib
import sys

# Modules providing ``register(subparsers)``; a missing module is skipped so partial installs work.
COMMAND_MODULES = ("flows.cli_data", "flows.cli_split", "flows.cli_run", "flows.cli_study")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compaug",
        description="Compositional data augmentation for math word problem solvers: inspect data, make "
                    "DBCA splits and the SD set, run the augmentation loop (paper 003).",
        epilog="`compaug COMMAND --help` describes each command.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name == name:
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.handler(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
