"""The bad-input tally of docs/reliability.md: every case of tests/bad_inputs/cases.json through
``cli.main.main`` in this process, counted per row (command, or ``data describe`` per format).

A case is handled cleanly when the command ends with the exit status the case names, prints no
traceback, and prints what the case expects: for exit status 2 one line on stderr holding the
fragments (the file, record and field or the parameter), for exit status 0 the counted skips on
stdout. The flows that do work (loop, split, SD, study) are replaced by a function that raises, so a
case that would start work counts as not handled.

    PYTHONPATH=. python bench/bad_inputs.py            # the table
    PYTHONPATH=. python bench/bad_inputs.py --show     # and each case's message
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "bad_inputs"


def _fill(text: str, tmp: str) -> str:
    return text.replace("{cases}", str(CORPUS)).replace("{tmp}", tmp)


def _no_work() -> None:
    import flows.augment_loop
    import flows.split
    import flows.study
    import tasks.study.estimate

    def refuse(*args, **kwargs):
        raise RuntimeError("WORK STARTED: a flow would run")

    for module, name in ((flows.augment_loop, "augment_loop"), (flows.split, "split_flow"), (flows.split, "sd_flow"),
                         (flows.study, "study_flow"), (tasks.study.estimate, "dry_run")):
        setattr(module, name, refuse)


def run_case(case: dict) -> tuple[str, int | str, str]:
    """(verdict, exit status, what it printed: the stderr line, or the skip lines of stdout). The verdict
    is ``clean`` or the first thing wrong: ``work started``, ``traceback``, ``exit status``, ``not one
    line``, ``message`` (the expected fragments are missing: a vague message or another wording)."""
    import traceback

    from cli.main import main

    with tempfile.TemporaryDirectory() as tmp:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status: int | str = main([_fill(a, tmp) for a in case["argv"]])
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
            except BaseException:  # noqa: BLE001 (a traceback is what is being counted)
                traceback.print_exc()
                status = "traceback"
        stdout, stderr = out.getvalue(), err.getvalue()
        shown = stderr if case["exit"] else stdout
        if "WORK STARTED" in stderr:
            verdict = "work started"
        elif "Traceback" in stdout + stderr:
            verdict = "traceback"
        elif status != case["exit"]:
            verdict = "exit status"
        elif case["exit"] and len(stderr.strip().splitlines()) != 1:
            verdict = "not one line"
        elif not all(_fill(f, tmp) in shown for f in case["fragments"]):
            verdict = "message"
        else:
            verdict = "clean"
        if case["exit"] == 0:
            shown = " | ".join(line.strip() for line in stdout.splitlines() if line.startswith(("usable", "  ")))
        else:
            shown = shown.strip().splitlines()[-1] if shown.strip() else ""
        return verdict, status, shown.strip().replace(tmp, "{tmp}").replace(str(CORPUS), "{cases}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print each case's message")
    args = parser.parse_args()
    os.chdir(REPO)  # paths inside the corpus's parameter files are relative to the repository root
    from flows.environment import apply_defaults

    apply_defaults()
    _no_work()
    cases = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
    verdicts: dict[str, Counter] = {}
    start = time.perf_counter()
    for case in cases:
        verdict, status, shown = run_case(case)
        verdicts.setdefault(case["row"], Counter())[verdict] += 1
        if args.show or verdict != "clean":
            print(f"{'ok ' if verdict == 'clean' else 'BAD'} {case['id']} [{verdict}, exit {status}]: {shown[:400]}")
    seconds = time.perf_counter() - start
    print("\n| where | tried | handled cleanly | not |\n|---|---|---|---|")
    total = Counter()
    for row, counts in verdicts.items():
        total.update(counts)
        print(f"| `compaug {row}` | {sum(counts.values())} | {counts['clean']} | {_not_clean(counts)} |")
    print(f"| all | {sum(total.values())} | {total['clean']} | {_not_clean(total)} |")
    print(f"\n{len(cases)} cases in {seconds:.1f} s")
    return 0 if total["clean"] == len(cases) else 1


def _not_clean(counts: Counter) -> str:
    return ", ".join(f"{n} {verdict}" for verdict, n in counts.most_common() if verdict != "clean") or "-"


if __name__ == "__main__":
    sys.exit(main())
