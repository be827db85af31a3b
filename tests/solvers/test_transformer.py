"""Transformer baseline: overfits eight problems, likelihood rises, save/load round trip, valid beams."""
import pytest
import torch

from baseline_toys import GOLD, assert_valid_predictions, fit_tracing_likelihood, toy_problems, unseen_problems
from solvers.base import TrainConfig
from solvers.registry import build_solver, load_solver
from solvers.transformer import TransformerConfig, TransformerSolver
from solvers.vocab import build_encoding

TINY = dict(embedding_size=64, hidden_size=128, n_heads=2, encoder_layers=1, decoder_layers=1, dropout=0.0)
EPOCHS = 100
LR = 3e-3


@pytest.fixture(scope="module")
def trained():
    solver = build_solver("transformer", **TINY)
    config = TrainConfig(epochs=EPOCHS, batch_size=8, lr=LR, lr_halving_epochs=100, eval_every=EPOCHS,
                         beam_size=3, seed=0, device="cpu", progress=False)
    result, trace = fit_tracing_likelihood(solver, toy_problems(), config)
    return solver, result, trace


def test_registry_name_and_class():
    assert isinstance(build_solver("transformer", **TINY), TransformerSolver)


def test_loss_falls_and_training_expressions_come_back(trained):
    solver, result, _ = trained
    assert result.epochs[-1].train_loss < result.epochs[0].train_loss / 20
    predictions = solver.predict(toy_problems(), beam_size=3)
    assert [list(p.tokens) for p in predictions] == GOLD
    assert result.best_valid_answer_acc == 1.0


def test_gold_likelihood_rises_with_training(trained):
    _, _, trace = trained
    assert trace[-1] > trace[0] + 1.0
    assert trace[-1] > -1.0  # 29 gold tokens in all: a mean token probability above 0.96


def test_beam_score_is_the_likelihood_of_the_predicted_expression(trained):
    solver, _, _ = trained
    problems = toy_problems()
    predictions = solver.predict(problems, beam_size=3)
    likelihoods = solver.log_likelihood(problems)
    for pred, lik in zip(predictions, likelihoods):  # predictions equal the gold expressions here
        assert pred.score == pytest.approx(lik.total, abs=1e-4)
        assert lik.per_token == pytest.approx(lik.total / lik.n_tokens)


def test_save_load_round_trip(trained, tmp_path):
    solver, _, _ = trained
    solver.save(tmp_path / "transformer")
    again = load_solver(tmp_path / "transformer", device="cpu")
    problems = toy_problems() + unseen_problems()
    assert [p.tokens for p in again.predict(problems)] == [p.tokens for p in solver.predict(problems)]
    assert [l.total for l in again.log_likelihood(toy_problems())] == pytest.approx(
        [l.total for l in solver.log_likelihood(toy_problems())], abs=1e-6)
    assert torch.allclose(again.encode(problems), solver.encode(problems), atol=1e-6)
    assert solver.encode(problems).shape == (len(problems), TINY["embedding_size"])


def test_untrained_beam_search_gives_valid_expressions_only():
    torch.manual_seed(3)
    solver = TransformerSolver(TransformerConfig(**TINY), device="cpu")
    solver.encoding = build_encoding(toy_problems())
    solver.model = solver.build_model(solver.encoding)
    problems = toy_problems() + unseen_problems()
    for beam in (1, 4):
        assert_valid_predictions(problems, solver.predict(problems, beam_size=beam))
