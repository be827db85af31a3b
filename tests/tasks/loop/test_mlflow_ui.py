"""The MLflow UI as a researcher opens it: ``mlflow server`` on a tiny run's store, pages rendered by
headless Chromium (Debian's ``chromium``, installed by .ci/run; skipped with a reason where absent)."""
import os
import re

import pytest

from tests.tasks.loop.mlflow_ui import chromium, mlflow_server, page_dom, pages, write_store

# CI (.ci/run) sets COMPAUG_REQUIRE_BROWSER=1: there a missing browser fails the tests instead of skipping them.
pytestmark = pytest.mark.skipif(chromium() is None and not os.environ.get("COMPAUG_REQUIRE_BROWSER"),
                                reason="no chromium on PATH (.ci/run installs Debian's)")

ERRORS = ("Something went wrong", "Error loading shared view state", "Experiment not found", "Run not found",
          "Page not found", "Request failed")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The DOM of the experiment's runs table (the URL the CLI prints) and of a round's child run page."""
    assert chromium(), "COMPAUG_REQUIRE_BROWSER is set but no chromium is on PATH"
    tmp = tmp_path_factory.mktemp("ui")
    store = write_store(tmp / "runs")
    with mlflow_server(store["uri"]) as base:
        return {name: page_dom(url, tmp / f"profile-{name}") for name, url in pages(store, base).items()}


def _texts(dom: str) -> list[str]:
    """The page's visible text pieces, in document order."""
    body = re.sub(r"<(style|script)[^>]*>.*?</\1>", "", dom, flags=re.S)
    return [t.strip() for t in re.split(r"<[^>]+>", body) if t.strip()]


PARENT = "gts op1+op2 s0 0123abcdef"


def test_the_runs_table_lists_the_rounds_flat_in_order_with_accuracy_columns(rendered):
    texts = _texts(rendered["runs"])
    names = [t for t in texts if t.startswith(PARENT)]
    names = list(dict.fromkeys(names))
    assert names == [PARENT] + [f"{PARENT} round-{r:02d}" for r in range(3)]  # the parent, then its rounds
    colours = [texts[texts.index(name) - 1] for name in names]  # each row's colour swatch precedes its name
    assert colours == ["#333333", "#1f77b4", "#ff7f0e", "#2ca02c"]  # every round its own colour
    for column in ("acc/valid", "acc/iid", "acc/comdiv", "pool_size", "kept", "kept.op1", "round"):
        assert column in texts, column
    assert "Judges" not in texts and "Sessions" not in texts  # the model-training sidebar, not GenAI's
    assert "Runs" in texts and "Sort: Run Name" in " ".join(texts)
    # the cells follow the names row by row, four decimals at most (comdiv 29/96 reads 0.3021)
    after = texts[texts.index(names[-1]):]
    cells = after[next(i for i, t in enumerate(after) if re.fullmatch(r"[\d.]+(ms|s|min)", t)):]  # from Duration
    rows = [cells[i * 9:(i + 1) * 9] for i in range(4)]
    assert not [c for row in rows for c in row if re.fullmatch(r"0\.\d{5,}", c)]  # no 0.48958333...
    for r, row in enumerate(rows[1:]):
        expected = {f"{0.5 + 0.02 * r:.2f}".rstrip("0"), f"{0.55 + 0.01 * r:.2f}".rstrip("0"), f"{(29 + 3 * r) / 96:.4f}"}
        assert expected | {str(r)} <= set(row), row


def test_a_child_run_page_shows_its_round_parameters_and_accuracies(rendered):
    texts = _texts(rendered["child"])
    assert f"{PARENT} round-01" in texts and "Parent run" in texts
    for name in ("round", "pool_size", "kept", "kept.op1", "kept.op2", "best_epoch", "acc/valid", "epoch/lr_x1000"):
        assert name in texts, name
    assert "Evaluations" not in texts


@pytest.mark.parametrize("page", ["runs", "child"])
def test_no_page_shows_an_error(rendered, page):
    dom = rendered[page]
    assert "MLflow" in _texts(dom) and len(_texts(dom)) > 50  # the app rendered, not an empty shell
    assert not [e for e in ERRORS if e in dom]
