"""The solvers and a loop round on CUDA, in its default mixed precision and in float32. Skipped where
no CUDA device is present; CI without a GPU covers the autocast path through the CPU tests of
test_gts.py, test_bert_gts.py and test_trainer.py. Each solver overfits the eight toy problems, its
beams are valid, and its checkpoint loads and predicts on the CPU."""
import math

import pytest
import torch

from baseline_toys import GOLD, assert_valid_predictions, toy_problems, unseen_problems
from solvers.base import TrainConfig
from solvers.fast_gru import BiGRU
from solvers.gts import GTSConfig, GTSModel
from solvers.registry import build_solver, load_solver
from solvers.vocab import build_encoding
from test_baselines import SPECS, Spec

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

ALL = SPECS + [Spec("gts", dict(embedding_size=32, hidden_size=64, dropout=0.0), epochs=60, lr=1e-2)]


@pytest.mark.parametrize("precision", ["auto", "fp32"])
@pytest.mark.parametrize("spec", ALL, ids=lambda s: s.name)
def test_every_solver_trains_predicts_and_loads_on_the_cpu(spec, precision, tmp_path):
    solver = build_solver(spec.name, device="cuda", **spec.tiny)
    config = TrainConfig(epochs=spec.epochs, batch_size=8, lr=spec.lr, lr_halving_epochs=100, eval_every=spec.epochs,
                         beam_size=3, seed=0, device="cuda", progress=False, precision=precision)
    problems = toy_problems()
    result = solver.fit(problems, problems, config)
    expected = "fp32" if precision == "fp32" else ("bf16" if torch.cuda.is_bf16_supported() else "fp16")
    assert result.precision == expected
    losses = [e.train_loss for e in result.epochs]
    assert all(math.isfinite(x) for x in losses) and losses[-1] < losses[0] / 10, losses
    assert next(solver.model.parameters()).is_cuda
    predictions = solver.predict(problems + unseen_problems(), beam_size=3)
    assert_valid_predictions(problems + unseen_problems(), predictions)
    gold = sum(list(p.tokens) == g for p, g in zip(predictions, GOLD))
    assert gold == 8 if precision == "fp32" else gold >= 6, [p.tokens for p in predictions[:8]]
    likelihoods = solver.log_likelihood(problems)
    assert all(p.score == pytest.approx(lik.total, abs=1e-3) for p, lik in zip(predictions, likelihoods))
    solver.save(tmp_path / spec.name)
    on_cpu = load_solver(tmp_path / spec.name, device="cpu")
    assert [p.tokens for p in on_cpu.predict(problems)] == [p.tokens for p in predictions[:8]]
    assert torch.allclose(on_cpu.encode(problems), solver.encode(problems), atol=1e-3)


def test_gts_float32_loss_and_gradients_agree_with_the_cpu():
    problems = toy_problems()
    enc = build_encoding(problems)
    torch.manual_seed(0)
    cpu = GTSModel(GTSConfig(embedding_size=32, hidden_size=64, dropout=0.0), enc)
    gpu = GTSModel(GTSConfig(embedding_size=32, hidden_size=64, dropout=0.0), enc)
    gpu.load_state_dict(cpu.state_dict())
    gpu.cuda()
    batch = enc.batch(problems)
    loss_cpu, loss_gpu = cpu.loss(batch), gpu.loss(batch.to(torch.device("cuda")))
    loss_cpu.backward()
    loss_gpu.backward()
    assert loss_gpu.item() == pytest.approx(loss_cpu.item(), rel=1e-4)
    grads = dict(gpu.named_parameters())
    for name, p in cpu.named_parameters():
        assert torch.allclose(grads[name].grad.cpu(), p.grad, rtol=1e-3, atol=1e-5), name


def test_the_cudnn_encoder_equals_the_hand_written_one():
    torch.manual_seed(0)
    ours = BiGRU(5, 6, 2)
    lengths = torch.tensor([7, 3, 5, 1])
    x = torch.randn(4, 7, 5)
    out, finals = ours(x, lengths)
    out_gpu, finals_gpu = ours.cuda()(x.cuda(), lengths.cuda())
    valid = (torch.arange(7)[None, :] < lengths[:, None])[..., None].float()
    assert torch.allclose(out * valid, out_gpu.cpu() * valid, atol=1e-4) and torch.allclose(finals, finals_gpu.cpu(), atol=1e-4)


def test_a_loop_round_trains_evaluates_and_scores_on_cuda(tmp_path):
    from mwp.problem import write_jsonl
    from tasks.loop.training import evaluate_checkpoint, score_with_checkpoint, train_solver

    problems = toy_problems()
    train = TrainConfig(epochs=3, batch_size=8, lr=1e-2, weight_decay=0.0, beam_size=2, device="cuda", progress=False)
    summary = train_solver(problems, problems[:4], "gts", GTSConfig(embedding_size=16, hidden_size=16), train,
                           tmp_path / "r0")
    assert summary.precision in ("bf16", "fp16")
    warm = train_solver(problems, problems[:4], "gts", None, train, tmp_path / "r1", tmp_path / "r0")
    assert len(warm.epochs) == 3
    write_jsonl(problems, tmp_path / "test.jsonl")
    metrics = evaluate_checkpoint(tmp_path / "r1", {"iid": tmp_path / "test.jsonl"}, beam_size=2, device="cuda")
    assert metrics["iid"].n == 8 and metrics["iid"].invalid_rate == 0.0
    scores, unscorable = score_with_checkpoint(tmp_path / "r1", problems, "confidence", {}, seed=0, device="cuda")
    assert sum(unscorable.values()) == 0 and all(0.0 < s <= 1.0 for s in scores)
    on_cpu, _ = score_with_checkpoint(tmp_path / "r1", problems, "confidence", {}, seed=0, device="cpu")
    assert on_cpu == pytest.approx(scores, rel=1e-3)
