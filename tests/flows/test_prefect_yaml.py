"""prefect.yaml: every deployment's parameters validate against the flow's parameter model."""
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from flows.params import LoopParams
from tests.shared_data import require_files

ROOT = Path(__file__).resolve().parents[2]


def _deployments():
    return yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]


def _data_files(values: dict) -> list[str]:
    """The data files a deployment's parameters name (the study's per split, the loop's one)."""
    specs = [spec["data"] for spec in values.get("splits", [])] + ([values["data"]] if "data" in values else [])
    return [spec["path"] for spec in specs if spec.get("path")]


def test_the_deployments_the_project_promises_exist():
    names = {d["name"] for d in _deployments()}
    assert {"smoke-builtin", "mawps-gts-weekly", "math23k-gts"} <= names


@pytest.mark.parametrize("deployment", _deployments(), ids=lambda d: d["name"])
def test_deployment_parameters_validate_against_their_flows_parameter_model(deployment, tmp_path, monkeypatch):
    assert set(deployment["parameters"]) == {"params"}
    values = deployment["parameters"]["params"]
    require_files(_data_files(values))  # MAWPS and Math23K come from ../shared/data
    if deployment["entrypoint"] == "flows/study.py:study_flow":
        from flows.study import StudyParams

        # split files are made by the user before the run (the description says how); stand-ins here
        monkeypatch.chdir(tmp_path)
        for spec in values["splits"]:
            if spec.get("split_file"):
                (tmp_path / spec["split_file"]).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / spec["split_file"]).write_text("{}")
            spec["data"]["path"] = str(ROOT / spec["data"]["path"])
        params = StudyParams.model_validate(values)
        assert params.loop.rounds >= 1 and len(params.seeds) >= 3
    else:
        assert deployment["entrypoint"] == "flows/augment_loop.py:augment_loop"
        params = LoopParams.model_validate(values)
        assert params.loop.rounds >= 1
    assert deployment["work_pool"]["name"] == "compaug-local"
    assert deployment.get("description")


def test_the_weekly_deployment_has_a_cron_schedule():
    weekly = next(d for d in _deployments() if d["name"] == "mawps-gts-weekly")
    assert weekly["schedules"][0]["cron"] == "0 2 * * 1"


def test_a_typo_in_parameters_is_an_error_not_a_default():
    with pytest.raises(ValidationError):
        LoopParams.model_validate({"loop": {"rounds": 2, "keep_fraktion": 0.5}})
    with pytest.raises(ValidationError):
        LoopParams.model_validate({"solver": {"hiden_size": 4}})
    with pytest.raises(ValidationError):
        LoopParams.model_validate({"loop": {"keep_fraction": 1.5}})
    with pytest.raises(ValidationError):
        LoopParams.model_validate({"data": {"format": "mawps"}})  # a file format needs a path


def test_fingerprint_changes_with_results_relevant_parameters_only():
    a = LoopParams()
    assert a.fingerprint() == LoopParams(out_dir="elsewhere", tracking_uri="sqlite:///x.db").fingerprint()
    assert a.fingerprint() != LoopParams(seed=1).fingerprint()
    assert a.fingerprint() != LoopParams(solver={"model": {"hidden_size": 256}}).fingerprint()
    assert a.fingerprint() == LoopParams(loop={"rounds": 9}).fingerprint()  # more rounds continue the same run


def test_a_field_added_later_keeps_existing_run_directories_at_its_default():
    # The fingerprint of the default parameters before `warm_start_epochs` and `train.precision` existed
    # (commit 510ff3a): a run or study cell started then must resume in its own directory, not start again.
    # `train.tie_break` was added with a new default: the old runs had "first", and keep their directory
    # when their parameters say so; the new default is another run.
    old = {"tie_break": "first"}
    assert LoopParams(train=old).fingerprint() == "eac256307c"
    assert LoopParams(loop={"warm_start_epochs": None, "augment_rounds": True},
                      train={"precision": "auto", **old}).fingerprint() == "eac256307c"
    assert LoopParams().fingerprint() != "eac256307c"
    assert LoopParams(loop={"augment_rounds": False}, train=old).fingerprint() != "eac256307c"
    assert LoopParams(train={"precision": "bf16", **old}).fingerprint() != "eac256307c"
    assert LoopParams(loop={"warm_start": True, "warm_start_epochs": 5}).fingerprint() != \
        LoopParams(loop={"warm_start": True}).fingerprint()


def test_unknown_or_unoffered_operators_are_rejected_by_name():
    with pytest.raises(ValidationError, match="unknown operator"):
        LoopParams.model_validate({"augment": {"operators": ["geca_op3"]}})
    with pytest.raises(ValidationError, match="not offered"):
        LoopParams.model_validate({"augment": {"operators": ["paraphrase"]}})
