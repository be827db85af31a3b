"""The arms of a study are records (tasks/study/arms.py): each names only fields its configs have, the
arms the next study needs make the changes their names promise, and a new record is all it takes for
the study's cells, the cost estimate and the report to know an arm."""
import pytest

from tasks.loop.record import RoundRecord, SetMetrics
from tasks.study.arms import ARMS, RETENTION, TABLE1, TABLE5, WARM_START, Arm, check_arms
from tasks.study.cells import CellResult
from tasks.study.estimate import Costs, Sizes, cell_seconds, study_wall_seconds
from tasks.study.grid import Cell, expand


def test_every_record_names_fields_tables_and_arms_that_exist():
    check_arms()
    with pytest.raises(ValueError, match="unknown loop field 'keep'"):
        check_arms({"x": Arm("x", "", loop={"keep": 0.5})})
    with pytest.raises(ValueError, match="unknown arm 'nobody'"):
        check_arms({"x": Arm("x", "", tables={TABLE5: ("nobody",)})})


def test_the_arms_of_the_next_study_make_the_changes_they_promise():
    assert ARMS["loop"].loop == {} and ARMS["loop"].baselines(TABLE1) == ("control",)
    control = ARMS["control"]
    assert control.loop == {"rounds": 0} and control.budget == "loop" and control.trains_once
    assert ARMS["random-ranker"].loop == {"score": "random"}
    assert ARMS["least-confident"].loop == {"score": "uncertainty"}
    assert ARMS["loss-similarity"].loop == {"score": "loss-similarity"}
    assert ARMS["no-op1"].drop_operators == ("geca_op1",) and ARMS["no-op2"].drop_operators == ("geca_op2",)
    assert ARMS["per-operator"].loop == {"retention": "per-operator"}
    assert ARMS["per-origin"].loop == {"retention": "per-origin"}
    assert ARMS["warm-start"].loop == {"warm_start": True}
    assert ARMS["warm-start"].baselines(WARM_START) == ("loop", "warm-control")
    assert ARMS["warm-control"].loop == {"warm_start": True, "augment_rounds": False}
    for name in ("random-ranker", "per-operator", "per-origin", "least-confident", "loss-similarity"):
        assert ARMS[name].baselines(RETENTION) == ("loop",) and ARMS[name].baselines(TABLE5) == ("control",)


def _cell(arm: str, seed: int, right: int) -> CellResult:
    records = [RoundRecord(round=0, pool_size=100, train_seconds=1.0, best_epoch=1, valid_answer_acc=0.5,
                           tests={"comdiv": SetMetrics(n=40, answer_acc=right / 40, equation_acc=0.0, invalid_rate=0.0)},
                           relative_gap=None, round_seconds=1.0)]
    return CellResult(Cell("gts", "comdiv", arm, seed), "done", records=records,
                      correct={"comdiv": {f"t{i}": i < right for i in range(40)}})


def test_a_new_arm_is_one_record(monkeypatch, tmp_path):
    """An arm keeping half of the candidates, written only as a record: its cells carry the change, the
    estimate and the waves treat it as a loop arm, and Table 5 shows it against the control."""
    from flows.study import StudyParams
    from tasks.study.report import Study, table5

    monkeypatch.setitem(ARMS, "keep-half", Arm("keep-half", "the top half", loop={"keep_fraction": 0.5},
                                               train={"epochs": 7}, tables={TABLE5: ("control",)}))
    check_arms()
    assert [c.arm for c in expand(["gts"], ["iid"], ["control", "keep-half"], [0])] == ["keep-half", "control"]
    study = StudyParams.model_validate({"out_dir": str(tmp_path), "train": {"epochs": 3}})
    params = study.loop_params(Cell("gts", "iid", "keep-half", 0))
    assert params.loop.keep_fraction == 0.5 and params.train.epochs == 7 and params.loop.rounds == study.loop.rounds
    costs, sizes = Costs(train_s=0.01, predict_s=0.0), Sizes(train=100, valid=0, test=0)
    seconds = cell_seconds(ARMS["keep-half"], costs, sizes, [100, 150], 3, 1)
    assert seconds == pytest.approx(7 * 100 * 0.01 + 7 * 150 * 0.01)  # the arm's own epochs, every round
    assert study_wall_seconds([(ARMS["keep-half"], 2.0), (ARMS["control"], 1.0)], 4) == 3.0  # the control waits
    rows = table5(Study([_cell(arm, seed, right + seed) for arm, right in (("control", 10), ("keep-half", 14))
                         for seed in (0, 1)]))
    half = next(row for row in rows if "| keep-half |" in row)
    assert "+0.100" in half  # 4 more problems right of 40 in every seed


def test_the_control_matches_the_loop_or_else_the_studys_first_augmenting_arm():
    from tasks.study.arms import budget_arm

    assert budget_arm("control", ["loop", "least-confident", "control"]) == "loop"
    assert budget_arm("control", ["least-confident", "control"]) == "least-confident"
    assert budget_arm("control", ["warm-control", "per-operator", "control"]) == "per-operator"  # adds nothing
    assert budget_arm("control", ["control"]) is None
    assert budget_arm("least-confident", ["least-confident", "control"]) is None
