"""bench/rename_dups.py on a hand-made run directory written with the loop's own writers: candidates that
are renamings of each other or of an earlier round's composition count once, up to names."""
from dataclasses import replace

from bench import rename_dups
from mwp.problem import Provenance, build_problem, write_jsonl
from tasks.loop import rundir
from tasks.loop.record import RoundRecord


def _op1(pid, text, r):
    p = build_problem(pid, text, "x=5+3-2", 6, source="test", language="en")
    return replace(p, provenance=Provenance("test", ("a", "b"), "geca_op1", r))


def _record(r):
    return RoundRecord(round=r, pool_size=0, train_seconds=0.0, best_epoch=None, valid_answer_acc=None, tests={},
                       relative_gap=None, round_seconds=0.0, generation=None)


def test_renamings_count_once_and_earlier_rounds_compositions_are_not_new(tmp_path):
    sam = "Sam has 5 apples. He buys 3 more. He eats 2. How many apples does Sam have?"
    rounds = {
        1: [_op1("c1", sam, 1), _op1("c2", sam.replace("Sam", "Tom"), 1),
            _op1("c3", "Ann has 5 pens. She buys 3 more. She loses 2. How many pens does Ann have?", 1)],
        2: [_op1("c4", sam.replace("Sam", "Lisa"), 2),  # round 1's composition, renamed
            _op1("c5", "Ann has 5 pens. She buys 3 more. She gives 2 to Bo. How many pens does Ann have?", 2),
            replace(_op1("c6", sam, 2), provenance=Provenance("test", ("a",), "geca_op2", 2))],  # not op1
    }
    for r in range(3):
        rd = rundir.round_dir(tmp_path, r)
        rd.mkdir(parents=True)
        if r:
            write_jsonl(rounds[r], rd / "candidates.jsonl")
        rundir.write_record(tmp_path, _record(r))
    rows = rename_dups.per_round(tmp_path, "geca_op1")
    assert rows == [{"round": 1, "verified": 3, "distinct": 2, "new": 2},
                    {"round": 2, "verified": 2, "distinct": 2, "new": 1}]
