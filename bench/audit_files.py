"""The file layout the reading audits share (bench/label_audit.py, bench/sd_audit.py), and the Wilson
interval their shares are reported with.

An audit writes ``<out>/<name>.sample.jsonl``, one JSON object a line with an empty ``verdict`` and
``reason``; a person copies it to ``<name>.judged.jsonl`` and fills both by reading each item. The
scorers read every ``*.judged.jsonl`` of a folder and refuse a row whose verdict is not one they know,
naming the file and line, so a half-judged file is never scored.

A new sample may hold texts an earlier audit judged: ``carry`` fills their verdicts from the judged files of
given folders (same text and equation; the reason names the file it came from) and leaves the rest empty:

    python bench/audit_files.py carry SAMPLE.jsonl OUT.jsonl docs/audits
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Iterable


class JudgedFileError(ValueError):
    """A judged file holds a row that cannot be scored (its path and line are in the message)."""


def write_sample(path: Path, rows: Iterable[dict]) -> int:
    """Write ``rows`` as JSON lines (non-ASCII text kept readable); returns how many."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_judged(path: Path, verdicts: tuple[str, ...]) -> list[dict]:
    """Rows of a judged file; a row that is not a JSON object or whose ``verdict`` is not in ``verdicts``
    raises :class:`JudgedFileError` naming ``path:line``."""
    rows = []
    for line_no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise JudgedFileError(f"{path}:{line_no}: not JSON ({err.msg})") from None
        if not isinstance(row, dict) or row.get("verdict") not in verdicts:
            got = row.get("verdict") if isinstance(row, dict) else row
            raise JudgedFileError(f"{path}:{line_no}: verdict must be one of {verdicts}, got {got!r}")
        rows.append(row)
    return rows


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial share (95% for z = 1.96); stays inside [0, 1] and is not
    degenerate at 0 or n successes, unlike the normal approximation. ``n`` = 0 gives (0, 1)."""
    if not 0 <= successes <= n:
        raise ValueError(f"successes {successes} not within 0..{n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def carry_verdicts(rows: list[dict], folders: Iterable[Path], verdicts: tuple[str, ...]) -> int:
    """Fill, in place, the empty verdict of each row whose text and equation a judged file of candidates under
    ``folders`` (searched recursively, first file in path order wins) already judged; returns how many were
    filled. Judged files of another audit (bench/sd_audit.py's, whose rows name no operator and have other
    verdicts) are not read."""
    known: dict[tuple, tuple[str, str, str]] = {}
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.judged.jsonl")):
            first = next((line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()), "{}")
            if '"operator"' not in first:
                continue
            for row in read_judged(path, verdicts):
                known.setdefault((row["text"], row.get("equation")), (row["verdict"], row.get("reason", ""), str(path)))
    filled = 0
    for row in rows:
        hit = None if row.get("verdict") else known.get((row["text"], row.get("equation")))
        if hit:
            verdict, reason, path = hit
            row["verdict"], row["reason"] = verdict, f"{reason} (carried over from the identical text in {path})"
            filled += 1
    return filled


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[0] != "carry":
        print("usage: python bench/audit_files.py carry SAMPLE.jsonl OUT.jsonl FOLDER [FOLDER ...]", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in Path(argv[1]).read_text(encoding="utf-8").splitlines() if line.strip()]
    filled = carry_verdicts(rows, map(Path, argv[3:]), ("correct", "wrong_label", "incoherent_text"))
    write_sample(Path(argv[2]), rows)
    print(f"{len(rows)} rows: {filled} verdicts carried over, {len(rows) - filled} to read -> {argv[2]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
