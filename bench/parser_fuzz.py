"""The parser and evaluator row of docs/reliability.md: runs the fuzz test (tests/mwp/test_fuzz.py) and
counts its calls of the parsing and evaluation entry points, and those that raised an error not of the
project's own types or took over its CPU-time limit (MAX_CALL_SECONDS).

    PYTHONPATH=. python bench/parser_fuzz.py              # the suite's examples
    PYTHONPATH=. python bench/parser_fuzz.py --scale 10   # ten times as many examples per test
"""
from __future__ import annotations

import argparse
import sys
import time

import pytest


class Tally:
    """A pytest plugin wrapping the fuzz module's ``call`` helper with counters."""

    def __init__(self, scale: int = 1) -> None:
        self.calls = self.foreign = self.slow = 0
        self.scale = scale

    def pytest_collection_modifyitems(self, items) -> None:
        from hypothesis import settings

        for item in items:  # hypothesis keeps a test's settings on the test function
            own = getattr(item.obj, "_hypothesis_internal_use_settings", None)
            if own is not None and self.scale != 1:
                item.obj._hypothesis_internal_use_settings = settings(own, max_examples=own.max_examples * self.scale)
        module = items[0].module
        checked = module.call

        def counted(fn, *args, allowed=module.OWN_ERRORS):
            self.calls += 1
            try:
                return checked(fn, *args, allowed=allowed)
            except AssertionError:  # the call's time limit
                self.slow += 1
                raise
            except BaseException:
                self.foreign += 1
                raise

        module.call = counted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1, help="examples per test, times the suite's (default 1)")
    tally = Tally(parser.parse_args().scale)
    start = time.perf_counter()
    status = pytest.main(["-q", "-p", "no:cacheprovider", "tests/mwp/test_fuzz.py"], plugins=[tally])
    clean = tally.calls - tally.foreign - tally.slow
    print(f"\nparser and evaluator, fuzzed: {tally.calls} calls, {clean} handled cleanly "
          f"({tally.foreign} errors not of the project's types, {tally.slow} over the time limit) "
          f"in {time.perf_counter() - start:.0f} s")
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
