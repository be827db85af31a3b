"""The ``compaug`` command line. Each sub-command lives in its own ``cli/*.py`` module with a
``register(subparsers)`` function; heavy libraries (torch, prefect, mlflow) are imported inside the
command functions so that ``--help`` and data commands start fast."""
from __future__ import annotations

import argparse
import importlib
import sys

# Modules providing ``register(subparsers)``; a missing module is skipped so partial installs work.
COMMAND_MODULES = ("cli.data", "cli.split", "cli.run", "cli.study")


class OneLineErrorParser(argparse.ArgumentParser):
    """A usage error is one line too: the option, what is wrong, where the usage is.
    Sub-command parsers are of this class as well (argparse makes them of their parent's class)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (`{self.prog} --help` shows the usage)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog="compaug",
        description="Compositional data augmentation for math word problem solvers: inspect data, make "
                    "DBCA splits and the SD set, run the augmentation loop (paper 003).",
        epilog="`compaug COMMAND --help` describes each command.")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
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


# What a user's input can cause: one line naming the file, record, field or parameter, exit status 2.
USER_ERRORS = (ValueError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except USER_ERRORS as err:
        if args.debug:
            raise
        print(f"compaug {args.command}: {type(err).__name__ if isinstance(err, OSError) else 'error'}: "
              f"{_one_line(err)} (--debug shows the traceback)", file=sys.stderr)
        return 2


def _one_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    from pydantic import ValidationError

    if isinstance(err, ValidationError):  # "field: message" for each error, on one line
        text = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'parameters'}: {e['msg'].removeprefix('Value error, ')}"
                         for e in err.errors())
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
