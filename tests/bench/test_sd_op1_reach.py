"""bench/sd_op1_reach.py on a hand-made SD folder: a seed whose two training parts read coherently is
rebuilt by operation 1 (a verified candidate of the seed's shape), a seed whose parts name different
people (as the SD construction's filled-in sentences do) is not, and its refusals are counted."""
import json

from bench.sd_op1_reach import reach
from mwp.problem import build_problem, write_jsonl


def _problem(pid, text, equation, answer):
    return build_problem(pid, text, equation, answer, source="test", language="en")


def test_coherent_parts_are_rebuilt_and_incoherent_ones_refused_by_reason(tmp_path):
    test = [_problem("s1", "Sam bakes 3 trays of muffins. Each tray holds 4 muffins. Sam buys 5 more muffins. "
                     "How many muffins does Sam have now?", "x=3*4+5", 17),
            _problem("s2", "Ann bakes 2 trays of tarts. Each tray holds 6 tarts. Ann buys 7 more tarts. "
                     "How many tarts does Ann have now?", "x=2*6+7", 19),
            _problem("s3", "Kim has 9 pens. Kim finds 2 pens. How many pens does Kim have?", "x=9+2", 11)]
    train = [_problem("s1/sd3a", "Sam bakes 3 trays of muffins. Each tray holds 4 muffins. "
                      "How many muffins does Sam bake?", "x=3*4", 12),
             _problem("s1/sd3b", "Sam bakes 12 muffins. Sam buys 5 more muffins. How many muffins does Sam have now?",
                      "x=12+5", 17),
             # the SD construction's kind of part: each question asks about someone its narrative never names
             _problem("s2/sd3a", "Ann bakes 2 trays of tarts. Each tray holds 6 tarts. How many tarts does John bake?",
                      "x=2*6", 12),
             _problem("s2/sd3b", "Keith bakes 12 tarts. Ann buys 7 more tarts. How many tarts does Ann have now?",
                      "x=12+7", 19)]
    folder = tmp_path / "sd"
    folder.mkdir()
    write_jsonl(train, folder / "train.jsonl")
    write_jsonl(test, folder / "test.jsonl")
    labels = {"s1": "structural", "s2": "structural", "s3": "lexical"}
    (folder / "split.json").write_text(json.dumps({"method": "sd", "labels": labels}), encoding="utf-8")
    r = reach(folder, show=5)
    key = "((N * N) + N)"
    assert dict(r.seeds) == {key: 2} and r.pairs[key] == 2  # the lexical item is not counted
    assert r.rebuilt[key] == 1 and r.other[key] == 0
    assert len(r.shown[key]) == 1 and "s2/sd3a" in r.shown[key][0]  # the refused pair is the incoherent one
    assert sum(r.refusals[key].values()) >= 1 and all(k.startswith(("op1_", "check_", "(no")) for k in r.refusals[key])
