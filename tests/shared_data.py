"""Tests that read the public datasets in ../shared/data (beside the checkout, see its README) skip in a
clone without them, with one line naming the file they need; CI sets COMPAUG_REQUIRE_SHARED_DATA=1,
so there a missing file fails the test instead of skipping it."""
import os
from pathlib import Path
from typing import Iterable

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRE_ENV = "COMPAUG_REQUIRE_SHARED_DATA"


def require_files(paths: Iterable[str | Path]) -> None:
    """Skip (or, with COMPAUG_REQUIRE_SHARED_DATA=1, fail) naming the first of ``paths`` (relative to the
    repository root) that does not exist."""
    for path in paths:
        full = ROOT / path
        if not full.exists():
            message = f"needs {path} ({full.resolve()}: no such file; ../shared/data beside the checkout)"
            if os.environ.get(REQUIRE_ENV) == "1":
                pytest.fail(message, pytrace=False)
            pytest.skip(message)
