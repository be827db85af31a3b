"""A tiny real study on the built-in corpus (Prefect harness, MLflow on SQLite, real training): the report
holds every cell with the numbers of the cells' own run records, the paired intervals and the plots;
a cell that fails is marked and the others still finish."""
import json

import pytest

from flows.study import StudyParams, study_flow
from tasks.loop import rundir


@pytest.fixture(scope="module")
def tiny_study(prefect_harness, tmp_path_factory):
    out = tmp_path_factory.mktemp("studies")
    bad_split = out / "other-data.json"
    bad_split.write_text(json.dumps({"method": "comdiv", "train": ["x1", "x2"], "test": ["x3"]}))
    params = StudyParams.model_validate({
        "name": "tiny",
        "splits": [{"name": "iid", "data": {"format": "builtin", "builtin_size": 80}},
                   {"name": "mismatch", "data": {"format": "builtin", "builtin_size": 80}, "split_file": str(bad_split)}],
        "solvers": [{"name": "gts", "model": {"embedding_size": 16, "hidden_size": 16, "min_count": 1}},
                    {"name": "lstm", "model": {"embedding_size": 16, "hidden_size": 16}}],
        "train": {"epochs": 2, "batch_size": 32, "beam_size": 2},
        "augment": {"per_round_cap": 200},
        "arms": ["control", "loop"], "seeds": [0, 1], "loop": {"rounds": 2}, "out_dir": str(out)})
    return params, study_flow(params)


def test_every_cell_is_in_the_report_with_its_own_numbers(tiny_study):
    params, result = tiny_study
    report = (params.directory() / "report.md").read_text()
    done = [c for c in params.cells() if c.split == "iid"]
    assert len(done) == 8
    for cell in done:
        run_dir = next((params.directory() / "cells" / cell.key).iterdir())
        last = rundir.completed_rounds(run_dir)[-1]
        assert last == (0 if cell.arm == "control" else 2)  # the loop is read at round T, the control at 0
        acc = rundir.read_record(run_dir, last).tests["iid"].answer_acc
        row = next(line for line in report.splitlines() if line.startswith(f"| {cell.key} |"))
        assert f"{acc:.3f} (iid)" in row and "| done |" in row


def test_the_report_has_paired_intervals_and_plots(tiny_study):
    params, result = tiny_study
    report = (params.directory() / "report.md").read_text()
    for solver in ("gts", "lstm"):
        row = next(line for line in report.splitlines() if line.startswith(f"| {solver} | iid |"))
        assert row.count("±") == 2 and "[" in row and "n=2" in row  # mean ± std over 2 seeds, an interval
    for name in ("fig6b_accuracy_by_round.png", "control_validation_curve.png"):
        assert (params.directory() / name).stat().st_size > 1000
        assert f"![{name}]({name})" in report


def test_each_arm_of_a_split_shows_what_it_kept_and_kept_problems_to_read(tiny_study):
    params, _ = tiny_study
    report = (params.directory() / "report.md").read_text()
    table = report.split("# gts on iid")[1].split("## iid: what each arm kept")[1].split("\n## ")[0]
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| arm")}
    assert set(rows) == {"control", "loop"}
    loop_dirs = [next((params.directory() / "cells" / f"gts-iid-loop-s{s}").iterdir()) for s in (0, 1)]
    kept = [sum(len((d / f"round_0{r}" / "kept.jsonl").read_text().splitlines()) for r in (1, 2)) for d in loop_dirs]
    assert rows["loop"][1] == "2" and "[" in rows["loop"][3] and rows["control"][3] == "-"
    ops = dict(item.rsplit(" ", 1) for item in rows["loop"][5].split(", "))
    assert sum(float(v) for v in ops.values()) == pytest.approx(sum(kept) / 2, abs=len(ops) / 2)  # per-operator means
    reading = report.split("## iid: kept problems to read")[1].split("\n## ")[0]
    assert "### loop, seed 0" in reading and "### control" not in reading
    assert reading.count("from: ") == len([line for line in reading.splitlines() if line[:1].isdigit()]) > 0
    assert "# lstm on iid" in report  # every solver gets its own sections


def test_the_control_gets_as_many_updates_as_the_loops_final_round(tiny_study):
    params, _ = tiny_study
    for seed in (0, 1):
        loop_dir = next((params.directory() / "cells" / f"gts-iid-loop-s{seed}").iterdir())
        control_dir = next((params.directory() / "cells" / f"gts-iid-control-s{seed}").iterdir())
        first, final = rundir.read_record(loop_dir, 0).pool_size, rundir.read_record(loop_dir, 2).pool_size
        control_params = json.loads((control_dir / "params.json").read_text())
        assert control_params["train"]["epochs"] == -(-2 * final // first)  # ceil(epochs x final / first)
        assert rundir.read_record(control_dir, 0).pool_size == first


def test_a_failing_cell_is_marked_and_the_others_finish(tiny_study):
    params, result = tiny_study
    failed = sorted(result["failed"])
    assert failed == sorted(c.key for c in params.cells() if c.split == "mismatch")
    report = (params.directory() / "report.md").read_text()
    assert "**failed**: ValueError: none of the split file's" in report


def test_cells_are_nested_under_one_mlflow_study_run(tiny_study):
    from mlflow.tracking import MlflowClient

    params, result = tiny_study
    client = MlflowClient(tracking_uri=result["tracking_uri"])
    experiment = client.get_experiment_by_name("compaug-study-tiny")
    runs = client.search_runs([experiment.experiment_id])
    nested = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == result["mlflow_run_id"]]
    assert len(nested) == 8 + 8  # every cell's loop run, done or failed
    assert {a.path for a in client.list_artifacts(result["mlflow_run_id"])} >= {"report.md", "study_params.json"}


def test_the_warm_control_arm_trains_as_the_warm_start_arm_with_nothing_added(tmp_path):
    from tasks.study.grid import Cell

    params = StudyParams.model_validate({"arms": ["loop", "warm-start", "warm-control"],
                                         "loop": {"warm_start_epochs": 4}, "out_dir": str(tmp_path)})
    loop, warm, control = (params.loop_params(Cell("gts", "iid", arm, 0)) for arm in ("loop", "warm-start", "warm-control"))
    assert (loop.loop.warm_start, loop.loop.warm_start_epochs, loop.loop.augment_rounds) == (False, None, True)
    assert (warm.loop.warm_start, warm.loop.warm_start_epochs, warm.loop.augment_rounds) == (True, 4, True)
    assert (control.loop.warm_start, control.loop.warm_start_epochs, control.loop.augment_rounds) == (True, 4, False)
    assert control.loop.rounds == warm.loop.rounds and control.train == warm.train
    assert len({loop.run_dir(), warm.run_dir(), control.run_dir()}) == 3


def test_unknown_arms_and_repeated_names_are_refused_by_name():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="arms"):
        StudyParams.model_validate({"arms": ["loop", "no-ranker"]})
    with pytest.raises(ValidationError, match="each split may appear once"):
        StudyParams.model_validate({"splits": [{"name": "iid"}, {"name": "iid"}]})
    with pytest.raises(ValidationError, match="name"):
        StudyParams.model_validate({"name": "../escape"})


def test_the_report_of_finished_cells_can_be_rebuilt_without_training(tiny_study, tmp_path):
    from flows.study import report_finished_cells

    params, _ = tiny_study
    before = (params.directory() / "report.md").read_text().splitlines()
    summary = report_finished_cells(params)
    after = (params.directory() / "report.md").read_text().splitlines()
    done_rows = [line for line in before if line.startswith("| gts-iid-") or line.startswith("| lstm-iid-")]
    assert len(done_rows) == 8 and all(row in after for row in done_rows)
    assert sorted(summary["pending"]) == sorted(c.key for c in params.cells() if c.split == "mismatch")
    unrun = params.model_copy(update={"seeds": [0, 1, 7]})  # seed 7 never ran
    assert {k for k in report_finished_cells(unrun)["pending"] if k.endswith("-s7")} == \
        {c.key for c in unrun.cells() if c.seed == 7}


def test_an_unfinished_cell_shows_the_rounds_it_has_done_in_a_partial_report(tiny_study):
    from flows.study import report_finished_cells

    params, _ = tiny_study
    longer = params.model_copy(update={"loop": params.loop.model_copy(update={"rounds": 3})})  # the same cells, now one round short of T
    summary = report_finished_cells(longer)
    assert "gts-iid-loop-s0" in summary["pending"]
    run_dir = next((params.directory() / "cells" / "gts-iid-loop-s0").iterdir())
    row = next(line for line in (params.directory() / "report.md").read_text().splitlines()
               if line.startswith("| gts-iid-loop-s0 |"))
    for r in (0, 1, 2):
        record = rundir.read_record(run_dir, r)
        assert f"round {r}: iid {record.tests['iid'].answer_acc:.3f} (pool {record.pool_size})" in row
    assert "not finished yet" in row and "round 3" not in row
    report_finished_cells(params)  # leave the module's report as the other tests expect it


def test_without_a_loop_arm_the_control_matches_the_augmenting_arm_it_has(tiny_study):
    # A study of least-confident and the control: the control's epochs come from least-confident's final pool.
    # The tiny study's loop cell of seed 0 stands in for that arm's finished cell.
    from flows.study import _cell_params
    from tasks.study.cells import load_cell
    from tasks.study.grid import Cell

    params, _ = tiny_study
    loop_dir = next((params.directory() / "cells" / "gts-iid-loop-s0").iterdir())
    study = params.model_copy(update={"arms": ["least-confident", "control"]})
    arm_cell = Cell("gts", "iid", "least-confident", 0)
    results = {arm_cell: load_cell(arm_cell, loop_dir, None, 2)}
    first, final = rundir.read_record(loop_dir, 0).pool_size, rundir.read_record(loop_dir, 2).pool_size
    control = _cell_params(study, Cell("gts", "iid", "control", 0), results, "parent")
    assert control.train.epochs == -(-2 * final // first) > 2


def test_a_finished_cell_is_reused_only_under_the_parameters_it_has_now(tiny_study, caplog):
    # The study's epochs edited after its cells finished: no cell's finished run is reused, each is named
    # with what changed; the study's own parameters still find every finished cell.
    import logging

    from flows.study import finished_cell, report_finished_cells
    from tasks.study.grid import Cell

    params, _ = tiny_study
    loop_cell = Cell("gts", "iid", "loop", 0)
    assert finished_cell(params, loop_cell).status == "done"
    edited = params.model_copy(update={"train": params.train.model_copy(update={"epochs": 3})})
    logger = logging.getLogger("study-test")
    with caplog.at_level(logging.WARNING, logger="study-test"):
        assert finished_cell(edited, loop_cell, {}, logger) is None
    old_run = next((params.directory() / "cells" / loop_cell.key).iterdir()).name
    assert f"cell gts-iid-loop-s0: not reusing {old_run}" in caplog.text and "train.epochs: 2 -> 3" in caplog.text
    summary = report_finished_cells(edited)
    assert {c.key for c in edited.cells() if c.split == "iid"} <= set(summary["pending"])
    row = next(line for line in (params.directory() / "report.md").read_text().splitlines()
               if line.startswith("| gts-iid-loop-s0 |"))
    assert f"{old_run} finished with other parameters (train.epochs: 2 -> 3), not reused" in row
    report_finished_cells(params)  # leave the module's report as the other tests expect it


def test_a_control_is_not_reused_when_its_budget_would_differ(tiny_study, caplog):
    # Without its loop cell's records the control's budget is the study's own 2 epochs; the finished
    # control trained the loop's equal-update budget, so it is not the cell asked for.
    import logging

    from flows.study import finished_cell
    from tasks.study.grid import Cell

    params, _ = tiny_study
    loop_cell, control_cell = Cell("gts", "iid", "loop", 1), Cell("gts", "iid", "control", 1)
    trained = json.loads((next((params.directory() / "cells" / control_cell.key).iterdir()) / "params.json")
                         .read_text())["train"]["epochs"]
    assert trained > 2
    results = {loop_cell: finished_cell(params, loop_cell)}
    assert finished_cell(params, control_cell, results).run_dir.name.startswith("compaug-study-tiny-")
    with caplog.at_level(logging.WARNING, logger="study-test"):
        assert finished_cell(params, control_cell, {}, logging.getLogger("study-test")) is None
    assert f"train.epochs: {trained} -> 2" in caplog.text
