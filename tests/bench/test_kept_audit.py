"""bench/kept_audit.py on a hand-made study folder: two run directories written with the loop's own
writers (data/train.jsonl, round_NN/pool.jsonl, kept.jsonl with scores, metrics.json last), one round
still going. Expected counts and rows are read off the files the test writes."""
import json
from dataclasses import replace

import pytest

from bench import kept_audit, label_audit
from mwp.problem import Provenance, build_problem, write_jsonl
from tasks.loop import rundir
from tasks.loop.record import Generation, RoundRecord


def _problem(pid, text, equation, answer, operator="original", parents=(), r=0):
    p = build_problem(pid, text, equation, answer, source="test", language="en")
    return replace(p, provenance=Provenance("test", tuple(parents), operator, r))


T1 = _problem("t1", "Sam has 5 apples. He buys 3 apples. How many apples does he have?", "x=5+3", 8)
T2 = _problem("t2", "A box holds 4 pens. How many pens are in 2 boxes?", "x=4*2", 8)
K1 = _problem("k1", "Sam has 5 apples. He buys 3 apples. How many pens are in 2 boxes?", "x=4*2", 8,
              "geca_op1", ("t1", "t2"), 1)
K2 = _problem("k2", "Ann has 5 apples. She buys 3 apples. How many apples does she have?", "x=5+3", 8,
              "geca_op2", ("t1",), 1)
K3 = _problem("k3", "A box holds 6 pens. How many pens are in 2 boxes?", "x=6*2", 12, "geca_op1", ("k1", "t2"), 2)
K4 = _problem("k4", "A box holds 7 pens. How many pens are in 3 boxes?", "x=7*3", 21, "geca_op1", ("t2",), 3)
K5 = _problem("k5", "Kim has 9 apples. She eats 2 apples. How many apples are left?", "x=9-2", 7,
              "geca_op1", ("t1", "gone"), 1)
K5_AGAIN = replace(K5, id="k5-again", provenance=replace(K5.provenance, parents=("t1",)))  # made from other parents


def _record(r, kept_by_operator):
    generation = None if r == 0 else Generation(candidates=9, verified=9, unscorable=0, kept=sum(
        kept_by_operator.values()), confidence_mean=None, confidence_cut=None, kept_by_operator=kept_by_operator)
    return RoundRecord(round=r, pool_size=0, train_seconds=0.0, best_epoch=None, valid_answer_acc=None, tests={},
                       relative_gap=None, round_seconds=0.0, generation=generation)


def _run(run_dir, kept_rounds, complete):
    """A run directory whose round r keeps ``kept_rounds[r - 1]`` (problem, score) pairs; rounds up to
    ``complete`` have their metrics.json."""
    (run_dir / "data").mkdir(parents=True)
    write_jsonl([T1, T2], run_dir / "data" / "train.jsonl")
    (run_dir / "params.json").write_text(json.dumps({"experiment": "compaug-study-toy"}), encoding="utf-8")
    pool = [T1, T2]
    for r in range(len(kept_rounds) + 1):
        rd = rundir.round_dir(run_dir, r)
        rd.mkdir()
        kept = kept_rounds[r - 1] if r else []
        if r:
            rundir.write_scored(rd / "kept.jsonl", [p for p, _ in kept], [s for _, s in kept])
        pool = pool + [p for p, _ in kept]
        write_jsonl(pool, rd / "pool.jsonl")
        if r <= complete:
            by_op = {}
            for p, _ in kept:
                by_op[p.provenance.operator] = by_op.get(p.provenance.operator, 0) + 1
            rundir.write_record(run_dir, _record(r, by_op))


@pytest.fixture
def study(tmp_path):
    """cells/a: round 1 keeps k1 (op1) and k2 (op2), round 2 keeps k3 (op1, a child of k1), round 3 keeps k4
    but has no metrics.json yet; cells/b: round 1 keeps k1 again, k5 (one parent not in the pool) and k5's
    text and expression made from other parents."""
    folder = tmp_path / "study"
    _run(folder / "cells" / "a" / "run-a", [[(K1, 0.9), (K2, 0.8)], [(K3, 0.7)], [(K4, 0.6)]], complete=2)
    _run(folder / "cells" / "b" / "run-b", [[(K1, 0.5), (K5, 0.4), (K5_AGAIN, 0.3)]], complete=1)
    return folder


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_kept_problem_of_the_operator_once_with_its_parents(study, tmp_path, capsys):
    out = tmp_path / "audit"
    assert kept_audit.main(["--from-run-dir", str(study), "--operator", "geca_op1", "--sample", "10",
                            "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["dataset"] == "toy-kept" and summary["runs"] == ["a/run-a", "b/run-b"]
    assert [(r["run"], r["round"], r["complete"], r.get("kept")) for r in summary["rounds"]] == [
        ("a/run-a", 1, True, 2), ("a/run-a", 2, True, 1), ("a/run-a", 3, False, None), ("b/run-b", 1, True, 3)]
    assert summary["rounds"][0]["kept_by_operator"] == summary["rounds"][0]["record_kept_by_operator"] == {
        "geca_op1": 1, "geca_op2": 1}
    assert summary["rounds"][3]["parents_not_in_pool"] == 1  # k5's "gone"
    # k1 (once, though kept in both runs), k2, k3, k5 (once, though made twice); k4's round is not complete
    assert summary["kept_distinct"] == 4 and summary["kept_distinct_of_operator"] == 3
    assert summary["kept_again_elsewhere"] == 2 and summary["sampled"] == 3
    rows = _rows(out / "toy-kept.sample.jsonl")
    assert [(r["id"], r["run"], r["round"], r["kept_again"], r["confidence"]) for r in rows] == [
        ("k1", "a/run-a", 1, 1, 0.9), ("k3", "a/run-a", 2, 0, 0.7), ("k5", "b/run-b", 1, 1, 0.4)]
    k3 = rows[1]
    assert k3["parents"] == [{"id": "k1", "text": K1.text}, {"id": "t2", "text": T2.text}]  # k1 read from round_01's pool
    assert (k3["equation"], k3["answer"], k3["operator"], k3["verdict"], k3["reason"]) == ("6*2", "12", "geca_op1", "", "")
    assert rows[2]["parents"] == [{"id": "t1", "text": T1.text}, {"id": "gone", "text": None}]


def test_a_seeded_draw_repeats_and_leaves_out_judged_problems(study, tmp_path, capsys):
    draws = []
    for seed in (0, 0, 1, 2):
        out = tmp_path / f"d{len(draws)}"
        assert kept_audit.main(["--from-run-dir", str(study / "cells" / "a"), str(study / "cells" / "b"),
                                "--operator", "geca_op1", "--sample", "2", "--draw-seed", str(seed),
                                "--out", str(out), "--name", "x"]) == 0
        draws.append([r["id"] for r in _rows(out / "x.sample.jsonl")])
    capsys.readouterr()
    assert draws[0] == draws[1] and all(len(d) == 2 and d == sorted(d) for d in draws)
    assert all(set(d) <= {"k1", "k3", "k5"} for d in draws)
    judged = tmp_path / "j.judged.jsonl"
    judged.write_text(json.dumps({"id": "k1", "text": K1.text, "verdict": "correct"}) + "\n", encoding="utf-8")
    assert kept_audit.main(["--from-run-dir", str(study), "--operator", "geca_op1", "--sample", "5",
                            "--exclude", str(judged), "--out", str(tmp_path / "e"), "--name", "x"]) == 0
    assert json.loads(capsys.readouterr().out)["already_judged"] == 1
    assert [r["id"] for r in _rows(tmp_path / "e" / "x.sample.jsonl")] == ["k3", "k5"]


def test_judged_sample_scores_with_label_audit(study, tmp_path, capsys):
    out = tmp_path / "audit"
    kept_audit.main(["--from-run-dir", str(study), "--operator", "geca_op2", "--out", str(out)])
    rows = _rows(out / "toy-kept.sample.jsonl")
    assert [r["id"] for r in rows] == ["k2"]
    rows[0].update(verdict="correct", reason="reads as its parent with another name")
    (out / "toy-kept.judged.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert label_audit.score(out) == 0
    assert "| all kept | geca_op2 | 1 | 1 | 0 | 0 | 1.00 |" in capsys.readouterr().out


def test_parents_are_read_from_the_pool_made_again_when_its_file_is_gone(study, tmp_path, capsys):
    run = study / "cells" / "a" / "run-a"
    (run / "round_01" / "pool.jsonl").unlink()  # round 2's parents: the training side + round 1's kept
    kept_audit.main(["--from-run-dir", str(run), "--operator", "geca_op1", "--out", str(tmp_path), "--name", "x"])
    capsys.readouterr()
    k3 = next(r for r in _rows(tmp_path / "x.sample.jsonl") if r["id"] == "k3")
    assert k3["parents"] == [{"id": "k1", "text": K1.text}, {"id": "t2", "text": T2.text}]


def test_a_folder_without_run_directories_is_refused_by_name(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert kept_audit.main(["--from-run-dir", str(empty), "--operator", "geca_op1", "--out", str(tmp_path)]) == 2
    assert f"{empty}: no run directory" in capsys.readouterr().err
