"""tasks/loop/steps.py: which failures of the data step are retried (issue #16: data errors cannot
succeed on retry, so they are not retried)."""
import pytest

from mwp.readers import DataFormatError
from tasks.loop.steps import _transient


class _FailedState:
    """What Prefect hands a retry condition: a state whose result() raises the task's error."""

    def __init__(self, error: BaseException):
        self.error = error

    def result(self):
        raise self.error


@pytest.mark.parametrize("error, retried", [
    (OSError(5, "Input/output error"), True),  # a file system hiccup may pass
    (DataFormatError("d.json: not JSON"), False),
    (ValueError("too few problems to split: 3 usable"), False),
    (FileNotFoundError(2, "No such file or directory"), False),
    (PermissionError(13, "Permission denied"), False),
    (IsADirectoryError(21, "Is a directory"), False),
])
def test_only_transient_failures_of_the_data_step_are_retried(error, retried):
    assert _transient(None, None, _FailedState(error)) is retried


def test_keep_candidates_traces_origins_through_the_pool_for_per_origin_retention(tmp_path):
    from dataclasses import replace

    from mwp.problem import Provenance, build_problem, write_jsonl
    from tasks.loop import rundir
    from tasks.loop.config import LoopConfig
    from tasks.loop.steps import keep_candidates

    a = build_problem("a", "Ann has 4 pears. How many pears does Ann have?", "x=4", 4, "toy")
    b = build_problem("b", "Bob has 5 figs. How many figs does Bob have?", "x=5", 5, "toy")
    earlier = replace(build_problem("s1", "Eve has 4 pears. How many pears does Eve have?", "x=4", 4, "toy"),
                      provenance=Provenance("toy", ("a",), "geca_op2", 1, "name: Ann -> Eve"))
    write_jsonl([a, b, earlier], tmp_path / "pool.jsonl")
    names = ["Kim", "Lea", "Max", "Ned"]
    cands = [replace(build_problem(f"c{i}", f"{n} has 4 pears. How many pears does {n} have?", "x=4", 4, "toy"),
                     provenance=Provenance("toy", ("s1" if i % 2 else "a",), "geca_op2", 2))
             for i, n in enumerate(names)]
    cands.append(replace(build_problem("d", "Bob has 5 plums. How many plums does Bob have?", "x=5", 5, "toy"),
                         provenance=Provenance("toy", ("b",), "geca_op2", 2)))
    rundir.write_scored(tmp_path / "scored.jsonl", cands, [0.9, 0.8, 0.7, 0.6, 0.1])
    top = keep_candidates.fn(tmp_path / "scored.jsonl", LoopConfig(retention="top-fraction", keep_fraction=0.4),
                             tmp_path / "top.jsonl", tmp_path / "pool.jsonl")
    assert top["kept"] == 2 and top["kept_origins"] == 1  # c0 and c1: both go back to a
    spread = keep_candidates.fn(tmp_path / "scored.jsonl", LoopConfig(retention="per-origin", keep_fraction=0.4),
                                tmp_path / "spread.jsonl", tmp_path / "pool.jsonl")
    assert spread["kept"] == 2 and spread["kept_origins"] == 2
    assert [p.id for p, _ in rundir.read_scored(tmp_path / "spread.jsonl")] == ["c0", "d"]
