"""tasks/study/report.py's warm-start and retention tables, from cell results built here (no training):
accuracy at round T per arm, training seconds summed over rounds, the paired intervals against the loop
and, when the study has it, against the warm-control arm; and for the retention arms how many distinct
problems and original problems their kept problems are, read from run directories the tests write."""
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


# ---------------------------------------------------------------- retention table (needs run directories)

def _problem(pid: str, name: str, a: int, b: int, parents=(), rnd: int = 0):
    from dataclasses import replace

    from mwp.problem import Provenance, build_problem

    p = build_problem(pid, f"{name} has {a} pears. She finds {b} more. How many pears does {name} have?",
                      f"x={a}+{b}", a + b, "toy")
    return replace(p, provenance=Provenance("toy", tuple(parents), "original" if not parents else "geca_op2", rnd))


def _run_dir(tmp_path, arm: str, seed: int, kept_by_round: list[list]) -> "CellResult":
    from mwp.problem import write_jsonl
    from tasks.loop import rundir

    run_dir = tmp_path / f"{arm}-{seed}"
    pool = [_problem("o1", "Ann", 3, 4), _problem("o2", "Eve", 5, 6), _problem("o3", "Sue", 7, 8)]
    rundir.round_dir(run_dir, 0).mkdir(parents=True)
    write_jsonl(pool, rundir.round_dir(run_dir, 0) / "pool.jsonl")
    for r, kept in enumerate(kept_by_round, start=1):
        pool = pool + kept
        rundir.round_dir(run_dir, r).mkdir()
        rundir.write_scored(rundir.round_dir(run_dir, r) / "kept.jsonl", kept, [1.0] * len(kept))
        write_jsonl(pool, rundir.round_dir(run_dir, r) / "pool.jsonl")
    cell = _cell(arm, seed, 10 + (arm == "per-origin") * 5 + seed, [100] * (len(kept_by_round) + 1))
    cell.run_dir = run_dir
    return cell


def test_the_retention_table_counts_distinct_and_original_problems_kept(tmp_path):
    from tasks.study.report import retention_table

    # the loop keeps renamings of o1 (and a renaming of a renaming): 3 kept, 1 distinct, 1 original
    loop_kept = [[_problem("k1", "Amy", 3, 4, ["o1"], 1), _problem("k2", "Liz", 3, 4, ["o1"], 1)],
                 [_problem("k3", "Joy", 3, 4, ["k1"], 2)]]
    # per-origin keeps one problem of each original: 3 kept, 3 distinct, 3 originals
    per_origin_kept = [[_problem("p1", "Amy", 3, 4, ["o1"], 1), _problem("p2", "Liz", 5, 6, ["o2"], 1)],
                       [_problem("p3", "Joy", 7, 8, ["o3"], 2)]]
    cells = [_run_dir(tmp_path, "loop", s, loop_kept) for s in (0, 1, 2)]
    cells += [_run_dir(tmp_path, "per-origin", s, per_origin_kept) for s in (0, 1, 2)]
    lines = retention_table(Study(cells))
    assert len(lines) == 4
    loop_row, per_origin_row = ([c.strip() for c in line.strip("|").split("|")] for line in lines[2:])
    assert loop_row[2:6] == ["loop", "3", "1", "1"] and loop_row[7] == "-"
    assert per_origin_row[2:6] == ["per-origin", "3", "3", "3"]
    assert per_origin_row[6].startswith("0.400") and per_origin_row[7].startswith("+0.125")  # 15..17 vs 10..12 of 40


def test_no_retention_table_without_the_loop_or_another_retention_arm(tmp_path):
    from tasks.study.report import retention_table

    assert retention_table(_study({"loop": (10, [100])})) == []
    assert retention_table(_study({"per-origin": (10, [100]), "control": (9, [100])})) == []


def test_the_report_writes_its_figures_and_leaves_none_open(tmp_path):
    import matplotlib.pyplot as plt

    from tasks.study.report import write_report

    cells = [_cell(arm, seed, 10 + seed, [1.0, 1.0]) for arm in ("loop", "control") for seed in (0, 1, 2)]
    for cell in cells:  # run directories without rounds on disk: nothing kept to read
        cell.run_dir = tmp_path / "runs" / cell.cell.key
        cell.run_dir.mkdir(parents=True)
    before = len(plt.get_fignums())
    out = write_report(cells, tmp_path, ["# test"], "sqlite:///x.db")
    assert len(plt.get_fignums()) == before
    assert all(p.stat().st_size > 1000 for p in map(tmp_path.joinpath, ("fig6b_accuracy_by_round.png",
                                                                        "control_validation_curve.png")))
    assert (tmp_path / "report.md").exists() and out


def test_a_study_of_fewer_than_three_seeds_says_what_its_intervals_cannot_show(tmp_path):
    from tasks.study.report import seeds_note

    assert seeds_note(_study({"loop": (10, [1.0]), "control": (9, [1.0])})) == []  # seeds 0, 1, 2
    one = Study([_cell(arm, 4, 10, [1.0]) for arm in ("loop", "control")])
    note = " ".join(seeds_note(one))
    assert "**Fewer than 3 seeds** (finished cells have seed 4)" in note and "one seed is an anecdote" in note
    failed = CellResult(Cell("gts", "comdiv", "loop", 5), "failed", error="x")  # a seed without a finished cell
    two = Study([*(_cell(arm, s, 10, [1.0]) for arm in ("loop", "control") for s in (0, 1)), failed])
    assert "(finished cells have seeds 0, 1)" in " ".join(seeds_note(two))
