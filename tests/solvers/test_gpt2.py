"""GPT-2 style decoder-only baseline (config-built, random weights): overfits eight problems, likelihood rises, save/load round trip, valid beams."""
import pytest
import torch

from baseline_toys import GOLD, assert_valid_predictions, fit_tracing_likelihood, toy_problems, unseen_problems
from solvers.base import TrainConfig
from solvers.registry import build_solver, load_solver
from solvers.gpt2 import GPT2Solver, GPT2SolverConfig
from solvers.vocab import build_encoding

TINY = dict(embedding_size=64, n_layer=2, n_head=2, hidden_size=128, dropout=0.0)
EPOCHS = 60


@pytest.fixture(scope="module")
def trained():
    solver = build_solver("gpt2", **TINY)
    config = TrainConfig(epochs=EPOCHS, batch_size=8, lr=3e-3, lr_halving_epochs=100, eval_every=EPOCHS,
                         beam_size=3, seed=0, device="cpu", progress=False)
    result, trace = fit_tracing_likelihood(solver, toy_problems(), config)
    return solver, result, trace


def test_registry_name_and_class():
    assert isinstance(build_solver("gpt2", **TINY), GPT2Solver)


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
    solver.save(tmp_path / "gpt2")
    again = load_solver(tmp_path / "gpt2", device="cpu")
    problems = toy_problems() + unseen_problems()
    assert [p.tokens for p in again.predict(problems)] == [p.tokens for p in solver.predict(problems)]
    assert [l.total for l in again.log_likelihood(toy_problems())] == pytest.approx(
        [l.total for l in solver.log_likelihood(toy_problems())], abs=1e-6)
    assert torch.allclose(again.encode(problems), solver.encode(problems), atol=1e-6)
    assert solver.encode(problems).shape == (len(problems), TINY["embedding_size"])


def test_untrained_beam_search_gives_valid_expressions_only():
    torch.manual_seed(3)
    solver = GPT2Solver(GPT2SolverConfig(**TINY), device="cpu")
    solver.encoding = build_encoding(toy_problems())
    solver.model = solver.build_model(solver.encoding)
    problems = toy_problems() + unseen_problems()
    for beam in (1, 4):
        assert_valid_predictions(problems, solver.predict(problems, beam_size=beam))


def test_sequence_layout_bos_text_with_slot_tokens_sep():
    problems = toy_problems()
    encoding = build_encoding(problems)
    model = GPT2Solver(GPT2SolverConfig(**TINY), device="cpu").build_model(encoding)
    W, O = len(encoding.input), len(encoding.output)
    # [input words | output tokens | sep, bos, eos]: bos and eos live inside the small vocabulary
    assert (model.sep_id, model.bos_id, model.eos_id) == (W + O, W + O + 1, W + O + 2)
    assert model.lm.config.vocab_size == W + O + 3
    assert (model.lm.config.bos_token_id, model.lm.config.eos_token_id) == (W + O + 1, W + O + 2)
    prompt = model.prompts(encoding.batch(problems[:1], with_targets=False))[0]
    words = ["<bos>"] + [encoding.input.words[i] if i < W else encoding.output.tokens[i - W] if i < W + O else "<sep>"
                         for i in prompt[1:]]
    # "Tom has 3 apples and buys 5 more ." + question: 3 and 5 are written as the slots N0 and N1
    assert words[:8] == ["<bos>", "tom", "has", "N0", "apples", "and", "buys", "N1"]
    assert words[-1] == "<sep>"


def _local_pretrained_folder(path):
    """A GPT-2 folder as from_pretrained expects it, made here: a word-level tokenizer over the toy
    words with bos/eos <|endoftext|>, and a tiny GPT2LMHeadModel (no download anywhere)."""
    from tokenizers import Tokenizer, normalizers
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = sorted({t.lower() for p in toy_problems() for t in p.tokens})
    vocab = {w: i for i, w in enumerate(["<|endoftext|>", "<unk>"] + words)}
    core = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer, core.normalizer = Whitespace(), normalizers.Lowercase()
    PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                            unk_token="<unk>").save_pretrained(path)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_embd=32, n_layer=1, n_head=2, n_inner=64,
                               bos_token_id=0, eos_token_id=0)).save_pretrained(path)
    return str(path)


def test_local_pretrained_path_adds_expression_tokens(tmp_path):
    path = _local_pretrained_folder(tmp_path / "gpt2-local")
    solver = build_solver("gpt2", pretrained_path=path)
    problems = toy_problems()
    config = TrainConfig(epochs=10, batch_size=8, lr=3e-3, eval_every=10, beam_size=2, device="cpu", progress=False)
    result = solver.fit(problems, problems, config)
    assert result.epochs[-1].train_loss < result.epochs[0].train_loss
    model = solver.model
    prompt = model.tokenizer.convert_ids_to_tokens(model.prompts(solver.encoding.batch(problems[:1]))[0])
    assert prompt[:5] == ["<|endoftext|>", "tom", "has", "<expr:N0>", "apples"]
    assert prompt[-1] == "<expr:sep>"
    assert model.lm.get_input_embeddings().num_embeddings == len(model.tokenizer)
    assert_valid_predictions(problems + unseen_problems(), solver.predict(problems + unseen_problems(), beam_size=2))
    solver.save(tmp_path / "ckpt")
    again = load_solver(tmp_path / "ckpt", device="cpu")
    assert [p.tokens for p in again.predict(problems)] == [p.tokens for p in solver.predict(problems)]


def test_transformers_is_imported_only_when_a_model_is_built():
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; import solvers.gpt2, solvers.bert_gts; from solvers.registry import solver_class; "
            "[solver_class(n) for n in ('lstm', 'transformer', 'bert-gts', 'gpt2')]; "
            "print('transformers' in sys.modules)")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip() == "False"
