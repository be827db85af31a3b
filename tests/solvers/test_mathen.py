"""MathEN: three tiny members trained on normalized targets overfit the eight toy problems, the
ensemble picks the member beam with the highest score, its scores are likelihoods, it round-trips
through one checkpoint directory, and its config refuses bad members by name."""
from dataclasses import replace

import pytest
import torch

from baseline_toys import GOLD, toy_problems, unseen_problems
from mwp.expr import from_prefix, to_prefix
from mwp.normalize import normalize_expression, normalize_problem
from mwp.problem import write_jsonl
from solvers.base import TrainConfig
from solvers.mathen import MathENConfig
from solvers.registry import build_solver, load_solver, solver_config
from tasks.loop.training import evaluate_checkpoint, score_with_checkpoint, train_solver

TINY = {
    "lstm": dict(embedding_size=32, hidden_size=64, encoder_layers=1, decoder_layers=1, dropout=0.0),
    "convs2s": dict(embedding_size=32, hidden_size=64, encoder_layers=2, decoder_layers=2, dropout=0.0),
    "transformer": dict(embedding_size=64, hidden_size=128, n_heads=2, encoder_layers=1, decoder_layers=1, dropout=0.0),
}
EPOCHS = 100
# by hand: normalizing moves the slot before the product in toy 6 ("+ * N0 N1 N2" -> "+ N2 * N0 N1")
NORMAL_GOLD = GOLD[:6] + [["+", "N2", "*", "N0", "N1"], GOLD[7]]


@pytest.fixture(scope="module")
def trained():
    solver = build_solver("mathen", member_options=TINY)
    config = TrainConfig(epochs=EPOCHS, batch_size=8, lr=3e-3, lr_halving_epochs=200, eval_every=EPOCHS,
                         beam_size=3, seed=0, device="cpu", progress=False)
    seen = []
    result = solver.fit(toy_problems(), toy_problems(), config, on_epoch=seen.append)
    return solver, result, seen


def test_normal_gold_is_what_normalization_gives():
    assert [to_prefix(normalize_expression(from_prefix(g))) for g in GOLD] == NORMAL_GOLD


def test_every_member_and_the_ensemble_overfit_the_normalized_toys(trained):
    solver, result, _ = trained
    problems = toy_problems()
    for name, predictions in solver.member_predictions(problems, beam_size=3).items():
        assert [list(p.tokens) for p in predictions] == NORMAL_GOLD, name
    assert [list(p.tokens) for p in solver.predict(problems, beam_size=3)] == NORMAL_GOLD
    assert result.best_valid_answer_acc == 1.0
    assert set(solver.training_summary["members"]) == {"lstm", "convs2s", "transformer"}


def test_epochs_are_reported_on_one_rising_axis(trained):
    _, result, seen = trained
    assert [s.epoch for s in seen] == list(range(1, 3 * EPOCHS + 1))
    assert [s.epoch for s in result.epochs] == [s.epoch for s in seen]
    # each member's loss falls: its first epoch against its last
    for i in range(3):
        assert seen[i * EPOCHS + EPOCHS - 1].train_loss < seen[i * EPOCHS].train_loss / 20


def test_prediction_is_the_member_beam_with_the_highest_score(trained):
    solver, _, _ = trained
    problems = toy_problems() + unseen_problems()
    per_member = solver.member_predictions(problems, beam_size=3)
    chosen = solver.predict(problems, beam_size=3)
    for i, pred in enumerate(chosen):
        scores = [preds[i].score for preds in per_member.values()]
        assert pred.score == max(scores)
        assert pred.tokens in [preds[i].tokens for preds in per_member.values() if preds[i].score == max(scores)]


def test_beam_score_is_the_likelihood_of_the_predicted_expression(trained):
    solver, _, _ = trained
    problems = toy_problems()
    for pred, lik in zip(solver.predict(problems, beam_size=3), solver.log_likelihood(problems)):
        assert pred.score == pytest.approx(lik.total, abs=1e-4)  # the gold, normalized, is predicted here
    # the likelihood is that of the member giving the expression the highest probability
    members = [m.log_likelihood([normalize_problem(p) for p in problems]) for m in solver.members.values()]
    assert [l.total for l in solver.log_likelihood(problems)] == [max(l.total for l in ls) for ls in zip(*members)]


def test_save_load_round_trip(trained, tmp_path):
    solver, _, _ = trained
    solver.save(tmp_path / "mathen")
    assert sorted(p.name for p in (tmp_path / "mathen").iterdir()) == ["checkpoint.json", "convs2s", "lstm", "transformer"]
    again = load_solver(tmp_path / "mathen", device="cpu")
    problems = toy_problems() + unseen_problems()
    assert [p.tokens for p in again.predict(problems)] == [p.tokens for p in solver.predict(problems)]
    assert [l.total for l in again.log_likelihood(toy_problems())] == pytest.approx(
        [l.total for l in solver.log_likelihood(toy_problems())], abs=1e-6)
    vectors = solver.encode(problems)
    assert vectors.shape == (len(problems), 64 + 32 + 64)  # lstm hidden, convs2s and transformer widths
    assert torch.allclose(again.encode(problems), vectors, atol=1e-6)
    assert again.config == solver.config


@pytest.mark.parametrize("options, message", [
    ({"members": ["lstm", "gts2"]}, "unknown solver 'gts2'"),
    ({"members": ["lstm", "mathen"]}, "cannot be a member of itself"),
    ({"members": ["lstm", "lstm"]}, "must not repeat"),
    ({"members": []}, "at least one"),
    ({"members": ["lstm"], "member_options": {"convs2s": {}}}, "not members"),
    ({"member_options": {"lstm": {"n_heads": 2}}}, "has no option n_heads"),
    ({"hidden_size": 0}, "hidden_size must be positive"),
])
def test_config_refuses_bad_members_by_name(options, message):
    with pytest.raises((ValueError, KeyError), match=message):
        solver_config("mathen", options)


def test_sizes_reach_every_member():
    config = MathENConfig(embedding_size=48, hidden_size=96, member_options={"transformer": {"n_heads": 3}})
    assert {name: (config.member_config(name).embedding_size, config.member_config(name).hidden_size)
            for name in config.members} == {"lstm": (48, 96), "convs2s": (48, 96), "transformer": (48, 96)}


SMALL = {name: {**options, "embedding_size": 16, "hidden_size": 32} for name, options in TINY.items()}
SMALL_CONFIG = MathENConfig(member_options=SMALL)


def test_the_loop_trains_scores_and_evaluates_it_from_one_directory(tmp_path):
    problems = toy_problems()
    config = TrainConfig(epochs=2, batch_size=8, lr=1e-2, beam_size=2, device="cpu", progress=False)
    summary = train_solver(problems, problems[:4], "mathen", SMALL_CONFIG, config, tmp_path / "ckpt")
    assert [e["epoch"] for e in summary.epochs] == [1, 2, 3, 4, 5, 6]
    metrics = evaluate_checkpoint(tmp_path / "ckpt", {"toys": _jsonl(tmp_path, problems)}, beam_size=2, device="cpu")
    assert metrics["toys"].n == 8
    scores, unscorable = score_with_checkpoint(tmp_path / "ckpt", problems, "confidence", {}, seed=0, device="cpu")
    assert not unscorable and len(scores) == 8 and all(0 < s <= 1 for s in scores)
    assert metrics["toys"].unreachable == 0
    warm = train_solver(problems, problems[:4], "mathen", SMALL_CONFIG, config, tmp_path / "warm", tmp_path / "ckpt")
    assert len(warm.epochs) == 6


def test_an_interrupted_ensemble_resumes_in_the_member_it_was_training(tmp_path):
    problems = toy_problems()
    config = TrainConfig(epochs=2, batch_size=8, lr=1e-2, beam_size=2, device="cpu", progress=False,
                         resume_dir=str(tmp_path / "state"))

    def stop_in_the_second_member(stats):
        if stats.epoch == 3:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        train_solver(problems, problems[:4], "mathen", SMALL_CONFIG, config, tmp_path / "a", on_epoch=stop_in_the_second_member)
    assert (tmp_path / "state" / "lstm" / "train_state.pt").exists()
    seen = []
    resumed = train_solver(problems, problems[:4], "mathen", SMALL_CONFIG, config, tmp_path / "a",
                           on_epoch=lambda s: seen.append(s.epoch))
    assert seen == [4, 5, 6] and [e["epoch"] for e in resumed.epochs] == [1, 2, 3, 4, 5, 6]
    assert not list((tmp_path / "state").rglob("train_state.pt"))  # removed once every member is trained
    plain = train_solver(problems, problems[:4], "mathen", SMALL_CONFIG, replace(config, resume_dir=None), tmp_path / "b")
    assert [e["train_loss"] for e in resumed.epochs] == pytest.approx([e["train_loss"] for e in plain.epochs], abs=1e-6)


def _jsonl(tmp_path, problems):
    path = tmp_path / "toys.jsonl"
    write_jsonl(problems, path)
    return path
