"""GPT-2 solver specifics: the sequence layout, a local pretrained folder (the shared baseline
behaviour is in test_baselines.py)."""

from baseline_toys import assert_valid_predictions, toy_problems, unseen_problems
from solvers.base import TrainConfig
from solvers.registry import build_solver, load_solver
from solvers.gpt2 import GPT2Solver, GPT2SolverConfig

TINY = dict(embedding_size=64, n_layer=2, n_head=2, hidden_size=128, dropout=0.0)


def test_sequence_layout_bos_text_with_slot_tokens_sep():
    problems = toy_problems()
    solver = GPT2Solver(GPT2SolverConfig(**TINY), device="cpu")
    encoding = solver.build_encoding(problems)
    model = solver.build_model(encoding)
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
