"""tasks/study/sd_report.py's shape table, from run directories written here (no training): the
structural SD test problems grouped by shape (operators, quantities as N, operands of + and * ordered),
each arm's final-round accuracy on a shape and the problems of that shape in its final pool."""
from mwp.expr import from_prefix
from mwp.problem import build_problem, write_jsonl
from tasks.loop import rundir
from tasks.loop.record import RoundRecord, SetMetrics
from tasks.study.cells import CellResult
from tasks.study.grid import Cell
from tasks.study.sd_report import shape, shape_table


def test_a_shape_ignores_quantity_order_and_the_order_of_commutative_operands():
    assert shape(from_prefix("+ * N0 N1 N2".split())) == "((N * N) + N)"
    assert shape(from_prefix("+ N0 * N1 N2".split())) == "((N * N) + N)"
    assert shape(from_prefix("/ - N0 N1 N2".split())) == "((N - N) / N)"
    assert shape(from_prefix("/ N2 - N0 N1".split())) == "(N / (N - N))"  # division keeps its order


def _problem(pid: str, text: str, equation: str, answer: float):
    return build_problem(pid, text, equation, answer, "test")


# structural test problems: two of ((N * N) + N) (in either order of the text) and one of ((N - N) / N)
TEST = [_problem("t1", "Sam saves 3 dollars a week for 4 weeks. He finds 5 dollars. How many dollars?", "x=3*4+5", 17),
        _problem("t2", "Ann finds 5 dollars. She saves 3 dollars a week for 4 weeks. How many dollars?", "x=5+3*4", 17),
        _problem("t3", "Bo has 10 pens and gives 4 away. He packs them in 2 boxes. How many in each?", "x=(10-4)/2", 3),
        _problem("t4", "Cy has 7 cards and finds 2. How many now?", "x=7+2", 9)]  # lexical: not in the table
LABELS = {"t1": "structural", "t2": "structural", "t3": "structural", "t4": "lexical"}


def _cell(tmp_path, arm: str, seed: int, right: set[str], pool: list[tuple[str, float]]) -> CellResult:
    """A finished cell: its test set, its final round (1) with a pool of the given equations, its record."""
    run_dir = tmp_path / f"{arm}-{seed}"
    (run_dir / "data").mkdir(parents=True)
    write_jsonl(TEST, run_dir / "data" / "test_sd.jsonl")
    final = rundir.round_dir(run_dir, 1)
    final.mkdir()
    write_jsonl([_problem(f"p{i}", "Dan has 6 apples and 3 pears and 2 plums.", "x=" + eq, answer)
                 for i, (eq, answer) in enumerate(pool)], final / "pool.jsonl")
    record = RoundRecord(round=1, pool_size=len(pool), train_seconds=1.0, best_epoch=1, valid_answer_acc=1.0,
                         tests={"sd": SetMetrics(n=4, answer_acc=len(right) / 4, equation_acc=0.0, invalid_rate=0.0)},
                         relative_gap=None, round_seconds=1.0)
    correct = {"sd": {p.id: p.id in right for p in TEST}}
    return CellResult(Cell("gts", "sd", arm, seed), "done", run_dir, records=[record], correct=correct)


def test_each_arm_gets_its_accuracy_per_shape_and_the_pool_count_of_that_shape(tmp_path):
    by_arm = {
        "control": {0: _cell(tmp_path, "control", 0, set(), [("6+3", 9)]),
                    1: _cell(tmp_path, "control", 1, {"t3"}, [("6-3", 3)])},
        "least-confident": {0: _cell(tmp_path, "lc", 0, {"t1", "t2"},
                                     [("6*3+2", 20), ("6+3*2", 12), ("(6-3)/2", 1.5), ("6+3", 9)]),
                            1: _cell(tmp_path, "lc", 1, {"t1"}, [("6*3+2", 20), ("6+3", 9)])},
    }
    lines = shape_table(by_arm, LABELS)
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == ["arm", "`((N * N) + N)` (2)", "`((N - N) / N)` (1)"]  # larger shape first; lexical left out
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.strip("|").split("|")[1:]] for r in lines[2:]}
    # control: (N*N)+N right 0 of 2 in both seeds, pool holds none; (N-N)/N right in seed 1 only
    assert rows["control"] == ["0.000 · 0.0", "0.500 · 0.0"]
    # least-confident: (N*N)+N right 2 of 2 then 1 of 2 -> 0.75, with 2 and 1 such pool problems -> 1.5;
    # (N-N)/N right in neither seed, with 1 and 0 pool problems -> 0.5
    assert rows["least-confident"] == ["0.750 · 1.5", "0.000 · 0.5"]
