"""The behaviour every baseline solver (lstm, transformer, convs2s, bert-gts, gpt2) must show, one table row
per solver: it overfits eight problems, the gold likelihood rises, a beam's score is the likelihood
of its expression, save/load round-trips, and untrained beams give valid expressions only, the same batched as alone.
Solver-specific checks stay in test_gpt2.py and test_bert_gts.py."""
from dataclasses import dataclass, field

import pytest
import torch

from baseline_toys import GOLD, assert_valid_predictions, fit_tracing_likelihood, toy_problems, unseen_problems
from solvers.base import TrainConfig
from solvers.registry import build_solver, load_solver, solver_class


@dataclass(frozen=True)
class Spec:
    name: str
    tiny: dict = field(default_factory=dict)  # a config small enough to overfit in seconds
    epochs: int = 60
    lr: float = 1e-2
    encode_width: str = "hidden_size"  # the config field that is the width of encode()'s vectors


SPECS = [
    Spec("lstm", dict(embedding_size=32, hidden_size=64, encoder_layers=1, decoder_layers=1, dropout=0.0)),
    Spec("transformer", dict(embedding_size=64, hidden_size=128, n_heads=2, encoder_layers=1, decoder_layers=1,
                             dropout=0.0), epochs=100, lr=3e-3, encode_width="embedding_size"),
    Spec("bert-gts", dict(bert_hidden_size=64, bert_layers=1, bert_heads=2, bert_intermediate_size=128,
                          embedding_size=32, hidden_size=64, dropout=0.0), epochs=80, lr=5e-3),
    Spec("convs2s", dict(embedding_size=32, hidden_size=64, encoder_layers=2, decoder_layers=2, dropout=0.0),
         epochs=100, lr=3e-3, encode_width="embedding_size"),
    Spec("gpt2", dict(embedding_size=64, n_layer=2, n_head=2, hidden_size=128, dropout=0.0), lr=3e-3,
         encode_width="embedding_size"),
]


# How far the first epoch's loss must fall by the last. bert-gts keeps BERT's dropout (0.1) in its tiny config and its
# toy training is chaotic: the same function computed with other rounding (teacher forcing by waves instead of by
# positions, 2026-11-27) took seed 0 from a 117x fall to 8.5x, with the 8 gold expressions back either way; CPU seeds
# 0-7 gave 8.5x to 1,727x (bench/toy_seed_sweep.py; docs/solvers.md, "Teacher forcing by waves"). 5x, as
# test_cuda.py asks of it; the others keep 20x.
MIN_FALL = {"bert-gts": 5}


@pytest.fixture(scope="module", params=SPECS, ids=lambda s: s.name)
def trained(request):
    spec = request.param
    solver = build_solver(spec.name, **spec.tiny)
    config = TrainConfig(epochs=spec.epochs, batch_size=8, lr=spec.lr, lr_halving_epochs=100, eval_every=spec.epochs,
                         beam_size=3, seed=0, device="cpu", progress=False)
    result, trace = fit_tracing_likelihood(solver, toy_problems(), config)
    return spec, solver, result, trace


def test_loss_falls_and_training_expressions_come_back(trained):
    spec, solver, result, _ = trained
    assert solver.name == spec.name
    assert result.epochs[-1].train_loss < result.epochs[0].train_loss / MIN_FALL.get(spec.name, 20)
    predictions = solver.predict(toy_problems(), beam_size=3)
    assert [list(p.tokens) for p in predictions] == GOLD
    assert result.best_valid_answer_acc == 1.0


def test_gold_likelihood_rises_with_training(trained):
    _, _, _, trace = trained
    assert trace[-1] > trace[0] + 1.0
    assert trace[-1] > -1.0  # 29 gold tokens in all: a mean token probability above 0.96


def test_beam_score_is_the_likelihood_of_the_predicted_expression(trained):
    _, solver, _, _ = trained
    problems = toy_problems()
    predictions = solver.predict(problems, beam_size=3)
    likelihoods = solver.log_likelihood(problems)
    for pred, lik in zip(predictions, likelihoods):  # predictions equal the gold expressions here
        assert pred.score == pytest.approx(lik.total, abs=1e-4)
        assert lik.per_token == pytest.approx(lik.total / lik.n_tokens)


def test_save_load_round_trip(trained, tmp_path):
    spec, solver, _, _ = trained
    solver.save(tmp_path / spec.name)
    again = load_solver(tmp_path / spec.name, device="cpu")
    problems = toy_problems() + unseen_problems()
    assert [p.tokens for p in again.predict(problems)] == [p.tokens for p in solver.predict(problems)]
    assert [l.total for l in again.log_likelihood(toy_problems())] == pytest.approx(
        [l.total for l in solver.log_likelihood(toy_problems())], abs=1e-6)
    assert torch.allclose(again.encode(problems), solver.encode(problems), atol=1e-6)
    assert solver.encode(problems).shape == (len(problems), spec.tiny[spec.encode_width])


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_untrained_beam_search_gives_valid_expressions_only(spec):
    torch.manual_seed(3)
    cls = solver_class(spec.name)
    solver = cls(cls.config_class(**spec.tiny), device="cpu")
    solver.encoding = solver.build_encoding(toy_problems())
    solver.model = solver.build_model(solver.encoding)
    problems = toy_problems() + unseen_problems()
    for beam in (1, 4):
        batched = solver.predict(problems, beam_size=beam)
        assert_valid_predictions(problems, batched)
        # in a batch, settled problems leave the search (fewer rows for the rest): same answers as alone
        alone = solver.predict(problems, beam_size=beam, batch_size=1)
        assert [p.tokens for p in batched] == [p.tokens for p in alone]
        assert [p.score for p in batched] == pytest.approx([p.score for p in alone], abs=1e-4)
