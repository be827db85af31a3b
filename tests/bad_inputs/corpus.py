"""What every part of the bad-input corpus uses (tests/bad_inputs/make_cases.py writes the corpus): where the
files go, the manifest's case list, and the helpers that write a file or add a case."""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
REL = HERE.relative_to(HERE.parents[1]).as_posix()  # tests/bad_inputs, for paths inside parameter files
GROUPS = ("common", "mawps", "math23k", "svamp", "asdiv", "csv", "jsonl", "problems", "split", "sd", "run", "study")
CASES: list[dict] = []
HUGE = "9" * 5000  # beyond Python's 4,300-digit int conversion
BIG = "7" * 400  # a 400-digit quantity


def put(rel: str, content: str | bytes) -> str:
    """Write ``content`` to ``rel`` under this folder; the path as a command line gives it."""
    path = HERE / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return "{cases}/" + rel


def case(cid: str, row: str, kind: str, argv: list[str], exit: int, fragments: list[str] | str) -> None:
    CASES.append({"id": cid, "row": row, "kind": kind, "argv": argv, "exit": exit,
                  "fragments": [fragments] if isinstance(fragments, str) else fragments})


def describe(fmt: str, cid: str, kind: str, path: str, exit: int, fragments: list[str] | str) -> None:
    case(f"describe/{fmt}/{cid}", f"data describe: {fmt}", kind, ["data", "describe", "--format", fmt, path],
         exit, fragments)


def skipped(total: int, reason: str, example: str) -> list[str]:
    """stdout of ``data describe`` on a file of ``total`` records, one of them skipped for ``reason``."""
    return [f"usable: {total - 1} of {total} records", f"  {reason}: 1", example]


def jdump(value) -> str:
    return json.dumps(value, ensure_ascii=False)

