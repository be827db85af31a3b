"""Every case of the bad-input corpus (tests/bad_inputs/cases.json, written by make_cases.py) through
``cli.main.main`` in this process (issue #16): the exit status it names; for exit status 2 exactly
one line on stderr holding the fragments and no traceback; for exit status 0 the fragments on stdout
(the counted skips). ``run``, ``split``, ``sd`` and ``study`` cases must fail before any work: the flows
are replaced by a function that fails the test, and no output may be left behind."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "bad_inputs"
CASES = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))


def fill(text: str, tmp_path: Path) -> str:
    return text.replace("{cases}", str(CORPUS)).replace("{tmp}", str(tmp_path))


def run_main(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's usage errors
        return exc.code if isinstance(exc.code, int) else 1


@pytest.fixture
def no_work(monkeypatch):
    """The flows that do the work, replaced: a case that reaches one is a case that would train."""
    import flows.augment_loop
    import flows.split
    import flows.study
    import tasks.study.estimate

    def refuse(*args, **kwargs):
        raise AssertionError("a bad-input case reached the work (a flow would run)")

    for module, name in ((flows.augment_loop, "augment_loop"), (flows.split, "split_flow"), (flows.split, "sd_flow"),
                         (flows.study, "study_flow"), (tasks.study.estimate, "dry_run")):
        monkeypatch.setattr(module, name, refuse)


def test_the_corpus_is_large_and_covers_every_format_and_command():
    from mwp.readers import FORMATS

    rows = {case["row"] for case in CASES}
    assert len(CASES) >= 150
    assert {f"data describe: {fmt}" for fmt in FORMATS} <= rows
    assert {"split", "sd", "run", "study"} <= rows
    for case in CASES:
        for before, arg in zip([""] + case["argv"], case["argv"]):
            if arg.startswith("{cases}/") and "missing" not in arg and before != "--out":
                assert Path(fill(arg, Path("/nonexistent"))).exists(), f"{case['id']}: {arg} is not in the corpus"


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_bad_input(case, tmp_path, capsys, monkeypatch, no_work):
    monkeypatch.chdir(REPO)  # paths inside parameter files are relative to the repository root
    argv = [fill(arg, tmp_path) for arg in case["argv"]]
    status = run_main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert status == case["exit"], f"exit status {status}; stderr: {err.strip()[:500]}"
    if case["exit"] == 0:
        shown = out
    else:
        assert len(err.strip().splitlines()) == 1, f"not one line on stderr: {err!r}"
        shown = err
    for fragment in case["fragments"]:
        assert fill(fragment, tmp_path) in shown
    if case["exit"]:
        assert not any(tmp_path.rglob("*.json*")) and not list(tmp_path.rglob("mlflow.db")), "output left behind"
