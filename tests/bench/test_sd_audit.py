"""bench/sd_audit.py and the shared audit files: the sampler on a tiny SD set built by build_sd from
hand-made problems, the scorer on hand-made judged files, the Wilson interval on hand-computed values."""
import json

import pytest

from bench import label_audit, sd_audit
from bench.audit_files import wilson_interval
from mwp.problem import build_problem, write_jsonl
from tasks.dbca.synthetic import build_sd


def _problem(pid, text, equation, answer=None):
    return build_problem(pid, text, equation, 0 if answer is None else answer, source="test", language="en",
                         check_answer=answer is not None)


@pytest.fixture
def sd_folder(tmp_path):
    """A rule-3 seed (two training parts, one structural item) and a rule-11 seed (one lexical item),
    written as compaug sd writes train.jsonl and test.jsonl; split.json holds what the audit reads."""
    seeds = [_problem("apples", "Tom picks 12 apples. Ann picks 4 apples. Bob picks 2 apples. "
                      "How many apples are there?", "x=12*4+2", 50),
             _problem("pens", "Lee has 9 pens. Kay has 3 pens. How many pens remain?", "x=9-3", 6)]
    donors = [_problem("times", "Sam picks 12 apples. Kim picks 4 apples. What is the apple total?", "x=12*4"),
              _problem("plus", "Sam picks 12 apples. Kim picks 4 apples. What is the apple total?", "x=12+4"),
              _problem("pen-sum", "Max has 5 pens. Joy has 2 pens. What is the pen count?", "x=5+2")]
    sd = build_sd(seeds, corpus=seeds + donors)
    assert sd.labels == {"apples": "structural", "pens/sd11": "lexical"}
    folder = tmp_path / "sd"
    folder.mkdir()
    write_jsonl(sd.train, folder / "train.jsonl")
    write_jsonl(sd.test, folder / "test.jsonl")
    (folder / "split.json").write_text(json.dumps({"method": "sd", "labels": sd.labels}), encoding="utf-8")
    return folder


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_wilson_interval_matches_hand_computed_values():
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson_interval(2, 3) == pytest.approx((0.2077, 0.9385), abs=1e-4)
    assert wilson_interval(0, 8) == pytest.approx((0.0, 3.8416 / 11.8416), abs=1e-9)  # z^2 / (n + z^2)
    assert wilson_interval(8, 8) == pytest.approx((8 / 11.8416, 1.0), abs=1e-9)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_sampler_draws_training_parts_and_lexical_items_only(sd_folder, tmp_path, capsys):
    out = tmp_path / "audit"
    assert sd_audit.main(["--sd", f"toy={sd_folder}", "--out", str(out)]) == 0
    counts = json.loads(capsys.readouterr().out)
    # train: the two parts and the pens seed (an original); test: the apples seed and the lexical item
    assert counts["train_parts"] == 2 and counts["train_originals"] == 1
    assert counts["structural"] == counts["structural_originals"] == 1 and counts["lexical"] == 1
    rows = _rows(out / "sd-toy.sample.jsonl")
    assert [(r["id"], r["kind"], r["expression"], r["answer"]) for r in rows] == [
        ("apples/sd3a", "train", "12*4", 48.0), ("apples/sd3b", "train", "48+2", 50.0),
        ("pens/sd11", "lexical", "9+3", 12.0)]
    assert rows[2]["text"] == "Lee has 9 pens. Kay has 3 pens. What is the pen count?"
    assert all(r["verdict"] == "" and r["reason"] == "" and r["set"] == "toy" for r in rows)


def test_sampler_is_seeded_and_caps_each_kind(sd_folder, tmp_path, capsys):
    drawn = []
    for run in ("a", "b"):
        sd_audit.main(["--sd", f"toy={sd_folder}", "--out", str(tmp_path / run), "--per-kind", "1", "--seed", "3"])
        drawn.append([(r["id"], r["kind"]) for r in _rows(tmp_path / run / "sd-toy.sample.jsonl")])
    assert drawn[0] == drawn[1]
    assert [kind for _, kind in drawn[0]] == ["train", "lexical"]


def _judged(folder, name, rows):
    folder.mkdir(exist_ok=True)
    lines = [json.dumps({"set": name, "id": f"{name}-{i}", "kind": kind, "verdict": verdict, "reason": "r"})
             for i, (kind, verdict) in enumerate(rows)]
    (folder / f"sd-{name}.judged.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_score_counts_coherent_share_per_set_and_kind(tmp_path, capsys):
    _judged(tmp_path, "toy", [("train", "coherent"), ("lexical", "incoherent"), ("train", "incoherent"),
                              ("train", "coherent")])
    _judged(tmp_path, "other", [("lexical", "coherent")])
    (tmp_path / "mawps.judged.jsonl").write_text('{"verdict": "correct"}\n')  # a label audit's file: not read
    table = sd_audit.score_table(tmp_path)
    assert [(r["set"], r["kind"], r["n"], r["coherent"]) for r in table] == [
        ("other", "lexical", 1, 1), ("toy", "train", 3, 2), ("toy", "lexical", 1, 0)]
    assert (table[1]["share"], table[1]["low"], table[1]["high"]) == pytest.approx((2 / 3, 0.2077, 0.9385), abs=1e-4)
    assert sd_audit.main(["--score", str(tmp_path)]) == 0
    assert "| toy | train | 3 | 2 | 0.67 | 0.21-0.94 |" in capsys.readouterr().out


def test_score_refuses_an_unjudged_row_naming_file_and_line(tmp_path, capsys):
    _judged(tmp_path, "toy", [("train", "coherent"), ("lexical", "")])
    assert sd_audit.main(["--score", str(tmp_path)]) == 2
    assert "sd-toy.judged.jsonl:2: verdict must be one of ('coherent', 'incoherent'), got ''" in capsys.readouterr().err


def test_label_audit_scores_through_the_shared_reader(tmp_path, capsys):
    rows = [{"dataset": "d", "operator": "op1", "verdict": v} for v in ("correct", "wrong_label")]
    (tmp_path / "d.judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert label_audit.score(tmp_path) == 0
    assert "| d | op1 | 2 | 1 | 1 | 0 | 0.50 |" in capsys.readouterr().out
    (tmp_path / "e.judged.jsonl").write_text('{"dataset": "e", "operator": "op1", "verdict": "maybe"}\n')
    assert label_audit.score(tmp_path) == 2
    assert "e.judged.jsonl:1: verdict must be one of" in capsys.readouterr().err


def test_expression_shows_a_fraction_value_in_brackets():
    problem = _problem("f", "Tom has 90 apples. That is 2/3 of the pears. How many pears?", "x=90/(2/3)", 135)
    assert sd_audit.infix_with_values(problem) == "90/(2/3)"  # not 90/2/3, which reads as 45/3


def test_label_audit_second_draw_leaves_out_judged_problems(tmp_path):
    from types import SimpleNamespace as Item  # draw reads only id, text and the operator function's field

    items = [Item(id=f"p{i}", text=f"text {i}", op="op1" if i < 6 else "op2") for i in range(10)]
    first = label_audit.draw(items, lambda c: c.op, 3, seed=0)
    assert [c.op for c in first] == ["op1"] * 3 + ["op2"] * 3
    assert label_audit.draw(items, lambda c: c.op, 3, seed=0) == first  # seeded: the same draw again
    rows = [{"id": c.id, "text": c.text, "verdict": "correct"} for c in first]
    (tmp_path / "a.judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    judged = label_audit.judged_problems([tmp_path / "a.judged.jsonl"])
    second = label_audit.draw(items, lambda c: c.op, 3, seed=1, only=("op1",), exclude=judged)
    # op1 has 6 items, 3 judged: the 3 others, none of the first draw; op2 not drawn
    assert sorted(c.id for c in second) == sorted({f"p{i}" for i in range(6)} - {c.id for c in first})
    # a problem judged under another id but with the same text is left out too
    renamed = [Item(id="new", text=first[0].text, op="op1")]
    assert label_audit.draw(renamed, lambda c: c.op, 3, seed=0, exclude=judged) == []


def test_label_audit_score_pools_one_dataset_over_folders(tmp_path, capsys):
    for folder, verdicts in (("a", ["correct", "correct", "incoherent_text"]), ("b", ["correct"])):
        (tmp_path / folder).mkdir()
        rows = [{"dataset": "d", "operator": "op2", "verdict": v} for v in verdicts]
        (tmp_path / folder / "d.judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert label_audit.main(["--score", str(tmp_path / "b")]) == 0
    assert "| d | op2 | 1 | 1 | 0 | 0 | 1.00 |" in capsys.readouterr().out
    assert label_audit.main(["--score", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "| d | op2 | 4 | 3 | 0 | 1 | 0.75 |" in capsys.readouterr().out
