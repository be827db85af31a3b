"""A tiny real study on an SD set built from the built-in corpus, with every arm of tasks/study/arms.py
(Prefect harness, MLflow on SQLite, real training): each arm runs end to end, and the report's SD
section gives each arm its SD, structural and lexical accuracy, its paired interval against the
control, what it kept and kept problems to read."""
import json

import pytest

from flows.study import StudyParams, study_flow
from mwp.readers import DataSpec
from tasks.dbca.steps import write_sd
from tasks.dbca.synthetic import build_sd
from tasks.study.arms import ARMS


@pytest.fixture(scope="module")
def sd_study(prefect_harness, tmp_path_factory):
    out = tmp_path_factory.mktemp("sd-study")
    _, problems = DataSpec("builtin", None, 400, None).load()
    write_sd.fn(build_sd(problems), str(out / "sd"), {}, 4, 0)
    params = StudyParams.model_validate({
        "name": "tiny-sd",
        "splits": [{"name": "sd", "data": {"format": "problems", "path": str(out / "sd")},
                    "split_file": str(out / "sd" / "split.json")}],
        "solvers": [{"name": "gts", "model": {"embedding_size": 16, "hidden_size": 16, "min_count": 1}}],
        "train": {"epochs": 1, "batch_size": 64, "beam_size": 1},
        "augment": {"per_round_cap": 120},
        "arms": list(ARMS), "seeds": [0], "loop": {"rounds": 1}, "out_dir": str(out / "studies")})
    return params, study_flow(params), json.loads((out / "sd" / "split.json").read_text())


def test_every_arm_runs_end_to_end_on_an_sd_set(sd_study):
    params, result, _ = sd_study
    assert result["failed"] == [] and result["cells"] == len(ARMS)
    report = open(result["report"], encoding="utf-8").read()
    assert "## Structural test problems by shape: accuracy and the final pool" in report
    table = report.split("## SD: arms against the control")[1].split("\n## ")[0]
    rows = {line.split(" | ")[0].strip("| "): line for line in table.splitlines() if line.startswith("| ")}
    assert set(ARMS) <= set(rows)
    for arm in ARMS:
        cells = rows[arm].split(" | ")
        assert cells[1] == "1" and cells[2] != "-" and cells[3] != "-"  # one seed; SD and structural accuracies
        if arm != "control":
            assert cells[6] != "-"  # structural - control: paired interval against the same seed's control


def test_the_sd_report_counts_structural_and_lexical_problems_from_the_split_labels(sd_study):
    _, result, split = sd_study
    labels = split["labels"]
    report = open(result["report"], encoding="utf-8").read()
    structural = sum(v == "structural" for v in labels.values())
    lexical = sum(v == "lexical" for v in labels.values())
    assert f"holds {structural} structural and {lexical} lexical problems" in report


def test_kept_problems_are_listed_with_their_parents_for_the_arms_that_keep(sd_study):
    _, result, _ = sd_study
    report = open(result["report"], encoding="utf-8").read()
    reading = report.split("## Kept problems to read")[1]
    assert "### loop, seed 0" in reading and "### control" not in reading
    loop = reading.split("### loop, seed 0")[1].split("###")[0]
    assert "Score: the arm's ranking score (confidence;" in loop  # read from the cell's own params.json
    if "### least-confident, seed 0" in reading:
        assert "(uncertainty;" in reading.split("### least-confident, seed 0")[1].split("###")[0]
    items = [line for line in loop.splitlines() if line[:1].isdigit()]
    assert 1 <= len(items) <= 30 and all("round 1" in line for line in items)
    assert loop.count("from: ") == len(items)
