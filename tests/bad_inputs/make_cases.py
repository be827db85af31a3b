"""Writes the bad-input corpus of issue #16: the files under tests/bad_inputs/<group>/ and the manifest
tests/bad_inputs/cases.json, which tests/test_bad_inputs.py runs case by case through cli.main.main.

    python tests/bad_inputs/make_cases.py        # from the repository root; rewrites the corpus

A case is a command line, the exit status it must end with and fragments of what it must print: of the
one-line error on stderr for exit status 2, of the report on stdout for exit status 0 (a file whose bad
records are counted skips). Placeholders in the command line and fragments: ``{cases}`` is this folder,
``{tmp}`` an empty temporary folder for outputs. Paths inside parameter files are relative to the
repository root (the test runs there). ``run`` and ``study`` cases must all fail before any training.
The cases live in cases_formats.py (data readers) and cases_commands.py (split, sd, run, study); corpus.py
holds the helpers both use.
"""
from __future__ import annotations

import json
import shutil

from cases_commands import run, split_and_sd, study
from cases_formats import asdiv, builtin, common, jsonl, math23k, mawps, problems, svamp, toolkit_csv
from corpus import CASES, GROUPS, HERE


def main() -> None:
    for group in GROUPS:
        shutil.rmtree(HERE / group, ignore_errors=True)
    for make in (common, mawps, math23k, svamp, asdiv, toolkit_csv, jsonl, problems, builtin, split_and_sd, run, study):
        make()
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "case ids repeat"
    (HERE / "cases.json").write_text(json.dumps(CASES, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(CASES)} cases in {HERE / 'cases.json'}")


if __name__ == "__main__":
    main()
