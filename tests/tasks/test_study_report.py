"""tasks/study/report.py's warm-start table, from cell results built here (no training): accuracy at
round T per arm, training seconds summed over rounds, and the paired intervals against the loop and,
when the study has it, against the warm-control arm."""
from tasks.loop.record import RoundRecord, SetMetrics
from tasks.study.cells import CellResult
from tasks.study.grid import Cell
from tasks.study.report import Study, warm_start_table

N = 40  # test problems


def _cell(arm: str, seed: int, right: int, seconds: list[float]) -> CellResult:
    records = [RoundRecord(round=r, pool_size=100 + 10 * r, train_seconds=s, best_epoch=1, valid_answer_acc=0.5,
                           tests={"comdiv": SetMetrics(n=N, answer_acc=right / N, equation_acc=0.0, invalid_rate=0.0)},
                           relative_gap=None, round_seconds=s) for r, s in enumerate(seconds)]
    correct = {"comdiv": {f"t{i}": i < right for i in range(N)}}
    return CellResult(Cell("gts", "comdiv", arm, seed), "done", records=records, correct=correct)


def _study(arms: dict[str, tuple[int, list[float]]]) -> Study:
    return Study([_cell(arm, seed, right + seed, seconds) for arm, (right, seconds) in arms.items() for seed in (0, 1, 2)])


def _row(lines: list[str]) -> list[str]:
    return [c.strip() for c in lines[2].strip("|").split("|")]


def test_the_table_compares_warm_start_with_the_loop_and_sums_training_seconds():
    lines = warm_start_table(_study({"loop": (10, [100, 100]), "warm-start": (20, [100, 25])}))
    assert len(lines) == 3 and len(_row(lines)) == 7
    solver, split, loop, warm, diff, loop_s, warm_s = _row(lines)
    assert (solver, split) == ("gts", "comdiv")
    assert loop.startswith("0.275") and warm.startswith("0.525")  # (10, 11, 12) / 40 and (20, 21, 22) / 40
    assert diff.startswith("+0.250")  # the same 10 problems more right in every seed: no spread
    assert loop_s.startswith("200") and warm_s.startswith("125")


def test_with_the_warm_control_arm_the_table_adds_warm_start_minus_warm_control():
    lines = warm_start_table(_study({"loop": (10, [100, 100]), "warm-start": (20, [100, 25]),
                                     "warm-control": (16, [100, 25])}))
    row = _row(lines)
    assert len(row) == 9 and lines[1].count("---") == 9
    assert row[7].startswith("0.425") and row[8].startswith("+0.100")


def test_no_table_without_both_arms():
    assert warm_start_table(_study({"loop": (10, [100])})) == []
    assert warm_start_table(_study({"warm-start": (10, [100]), "warm-control": (9, [100])})) == []
