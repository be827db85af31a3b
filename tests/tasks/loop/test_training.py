"""tasks/loop/training.py: train / warm-start / evaluate / score from files, with a tiny real GTS."""
import math
from dataclasses import replace

import pytest
import torch

from ranking.scores import confidence
from solvers.registry import load_solver
from solvers.base import TrainConfig
from solvers.gts import GTSConfig
from tasks.loop.record import SetMetrics, relative_gap
from tasks.loop.training import evaluate_checkpoint, score_with_checkpoint, train_solver
from tests.solvers.toy_problems import toy_problems

GTS = GTSConfig(embedding_size=16, hidden_size=16)
TRAIN = TrainConfig(epochs=3, batch_size=8, lr=1e-2, weight_decay=0.0, beam_size=2, device="cpu", progress=False)


def _weights(directory):
    solver = load_solver(directory, device="cpu")
    return {k: v.clone() for k, v in solver.model.state_dict().items()}


def test_an_interrupted_warm_started_round_resumes_and_its_state_is_removed_once_saved(tmp_path):
    problems = toy_problems()
    train_solver(problems, problems[:4], "gts", GTS, TRAIN, tmp_path / "r0")
    config = replace(TRAIN, epochs=3, resume_dir=str(tmp_path / "state"))

    def stop_after_first(stats):
        if stats.epoch == 1:
            raise KeyboardInterrupt  # the run is killed mid-training
    with pytest.raises(KeyboardInterrupt):
        train_solver(problems, problems[:4], "gts", GTS, config, tmp_path / "r1", tmp_path / "r0", stop_after_first)
    assert (tmp_path / "state" / "train_state.pt").exists() and not (tmp_path / "r1").exists()
    seen = []
    resumed = train_solver(problems, problems[:4], "gts", GTS, config, tmp_path / "r1", tmp_path / "r0",
                           lambda s: seen.append(s.epoch))
    assert seen == [2, 3] and [e["epoch"] for e in resumed.epochs] == [1, 2, 3]
    assert not (tmp_path / "state" / "train_state.pt").exists()  # the checkpoint is the result now
    plain = train_solver(problems, problems[:4], "gts", GTS, replace(config, resume_dir=None), tmp_path / "p1",
                         tmp_path / "r0")
    assert [e["train_loss"] for e in resumed.epochs] == [e["train_loss"] for e in plain.epochs]
    a, b = _weights(tmp_path / "r1"), _weights(tmp_path / "p1")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_state_left_by_another_training_is_discarded_with_a_warning(tmp_path, caplog):
    problems = toy_problems()
    config = replace(TRAIN, epochs=2, resume_dir=str(tmp_path / "state"))

    def stop(stats):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        train_solver(problems[:6], problems[:4], "gts", GTS, config, tmp_path / "x", on_epoch=stop)
    seen = []
    with caplog.at_level("WARNING"):  # the pool changed since: the round trains from its first epoch
        train_solver(problems, problems[:4], "gts", GTS, config, tmp_path / "y", on_epoch=lambda s: seen.append(s.epoch))
    assert seen == [1, 2] and "saved by another training (differs in: initial weights, training problems)" in caplog.text
    train_solver(problems, problems[:4], "gts", GTS, replace(config, resume_dir=None), tmp_path / "z")
    a, b = _weights(tmp_path / "y"), _weights(tmp_path / "z")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_warm_start_continues_from_the_previous_weights(tmp_path):
    problems = toy_problems()
    first = train_solver(problems, problems[:4], "gts", GTS, TRAIN, tmp_path / "a")
    assert first.train_size == 8 and len(first.epochs) == 3
    # A learning rate too small to move anything: a warm start must end where it began ...
    frozen = replace(TRAIN, lr=1e-12, epochs=1)
    train_solver(problems, problems[:4], "gts", GTS, frozen, tmp_path / "b", warm_start_from=tmp_path / "a")
    before, after = _weights(tmp_path / "a"), _weights(tmp_path / "b")
    assert before.keys() == after.keys()
    assert all(torch.allclose(before[k], after[k], atol=1e-6) for k in before)
    # ... while training from scratch with the same settings starts from fresh random weights.
    train_solver(problems, problems[:4], "gts", GTS, replace(frozen, seed=1), tmp_path / "c")
    scratch = _weights(tmp_path / "c")
    assert any(not torch.allclose(before[k], scratch[k], atol=1e-3) for k in before)


def test_evaluate_and_score_from_a_checkpoint(tmp_path):
    from mwp.problem import write_jsonl

    problems = toy_problems()
    train_solver(problems, problems[:4], "gts", GTS, TRAIN, tmp_path / "ckpt")
    write_jsonl(problems, tmp_path / "test.jsonl")
    metrics = evaluate_checkpoint(tmp_path / "ckpt", {"iid": tmp_path / "test.jsonl"}, beam_size=2, device="cpu")
    assert metrics["iid"].n == 8 and 0.0 <= metrics["iid"].answer_acc <= 1.0 and metrics["iid"].unreachable == 0
    scores, unscorable = score_with_checkpoint(tmp_path / "ckpt", problems, "confidence", {}, seed=0, device="cpu")
    assert not unscorable and len(scores) == 8 and all(0.0 < s <= 1.0 for s in scores)
    direct = confidence(load_solver(tmp_path / "ckpt", device="cpu"), problems)
    assert all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(scores, direct))


def test_a_candidate_outside_the_solvers_vocabulary_is_counted_unscorable_by_reason_not_fatal(tmp_path):
    from mwp.problem import build_problem, write_jsonl

    problems = toy_problems()  # at most 3 quantities; the constant 2 only
    train_solver(problems, problems[:4], "gts", GTS, TRAIN, tmp_path / "ckpt")
    many = build_problem("many", "There are 3 cats , 4 dogs , 5 cows , 6 hens , 7 pigs , 8 ducks , 9 owls and 2 rats . "
                         "How many animals ?", "x=3+4+5+6+7+8+9+2", 44, source="toy")
    odd = build_problem("odd", "A week has 7 days . How many hours are in 3 weeks ?", "x=7*24*3", 504, source="toy")
    write_jsonl([problems[0], many, odd], tmp_path / "hard.jsonl")
    metrics = evaluate_checkpoint(tmp_path / "ckpt", {"hard": tmp_path / "hard.jsonl"}, beam_size=2, device="cpu")
    assert metrics["hard"].unreachable == 1  # the constant 24: no prediction can ever be right
    scores, unscorable = score_with_checkpoint(tmp_path / "ckpt", [problems[0], many, odd], "confidence", {},
                                               seed=0, device="cpu")
    # eight quantities are reachable by a solver that points at quantities; the constant 24 is not in its vocabulary
    assert dict(unscorable) == {"unseen_constant": 1}
    assert scores[0] > 0 and scores[1] > 0 and math.isnan(scores[2])


def test_relative_gap():
    def acc(a):
        return SetMetrics(n=10, answer_acc=a, equation_acc=a, invalid_rate=0.0)

    assert relative_gap({"iid": acc(0.6), "comdiv": acc(0.4)}) == 0.6 / 0.4 - 1
    assert relative_gap({"iid": acc(0.6)}) is None
    assert relative_gap({"iid": acc(0.9), "sd": acc(0.1)}) == pytest.approx(8.0)
