"""The solvers and a loop round on CUDA, in its default mixed precision and in float32. Skipped where
no CUDA device is present; CI without a GPU covers the autocast path through the CPU tests of
test_gts.py, test_bert_gts.py and test_trainer.py, and the library GRU path CUDA takes through
test_fast_gru.py.

Two kinds of check. Equivalence: the same weights give the same loss and gradients on CUDA as on the
CPU, in float32 with TF32 off (``float32_products``, which "fp32" training on CUDA uses), and the
cuDNN GRU equals the hand-written one. Training: each solver overfits the eight toy problems with a
criterion every CPU seed tried meets (docs/solvers.md, "CUDA test failures"): a toy training is a
chaotic process, and a CUDA run is another draw of it than the CPU's seed 0 (other random streams
for BERT's dropout, non-deterministic atomics, other summation orders), so an outcome only some CPU
seeds reach is no test of CUDA; the equivalence tests are the exact ones."""
import copy
import math

import pytest
import torch

from baseline_toys import GOLD, assert_valid_predictions, toy_problems, unseen_problems
from solvers.base import GRAPHED_STEPS, TrainConfig
from solvers.fast_gru import BiGRU
from solvers.registry import build_solver, load_solver
from solvers.trainer import float32_products
from test_baselines import SPECS, Spec

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _fusions():
    """graph_fusion's values, inductor skipped where it cannot compile for CUDA (no Triton)."""
    from solvers.fusion import fusion_unavailable

    why = fusion_unavailable(torch.device("cuda")) if torch.cuda.is_available() else "no CUDA"
    return ["none", pytest.param("inductor", marks=pytest.mark.skipif(why is not None, reason=str(why)))]

# Budgets and the gold count below come from CPU seed sweeps of these toys (docs/solvers.md, "CUDA
# test failures"): with them, loss fell more than 10x at every seed tried (GTS at 60 epochs only 13.9x
# at one seed, hence 100), but 8 of 8 expressions came back at most seeds, not all (GTS seed 0 at 60
# epochs, bert-gts 2 of 15 seeds: 6 of 8), and whether a borderline expression comes back changed with
# the batch it was decoded in. So a CUDA run of those two is asked for 6 of 8, as every CPU seed
# gave; the others for 8 (convs2s gave 8 at its 5 CPU seeds, with its loss down 300x or more).
BUDGET = {"gts": dict(epochs=100)}
MIN_GOLD = {"gts": 6, "bert-gts": 5}
# bert-gts keeps BERT's dropout (0.1) in its tiny config, and on CUDA its loss fell 6.5x and 7.1x in two
# runs of this test at seed 0 (and 105x in a sweep run of seed 0 on the same machine: CUDA's atomics make
# each run another draw), 9.4x to 1,642x over CUDA seeds 0-7 (docs/measurements/
# toy_seed_sweep_bert_gts_h200_2026-11-26.txt): "down 10x" is not what every CUDA draw gives; 5x is. The
# same sweep under autocast gave 5 of 8 gold expressions at seed 5 (6 or more elsewhere): 5 is asked.
MIN_FALL = {"bert-gts": 5}
ALL = [Spec(s.name, s.tiny, **{**dict(epochs=s.epochs, lr=s.lr, encode_width=s.encode_width), **BUDGET.get(s.name, {})})
       for s in SPECS + [Spec("gts", dict(embedding_size=32, hidden_size=64, dropout=0.0), epochs=60, lr=1e-2)]]


@pytest.mark.parametrize("precision", ["auto", "fp32"])
@pytest.mark.parametrize("spec", ALL, ids=lambda s: s.name)
def test_every_solver_trains_predicts_and_loads_on_the_cpu(spec, precision, tmp_path):
    solver = build_solver(spec.name, device="cuda", **spec.tiny)
    config = TrainConfig(epochs=spec.epochs, batch_size=8, lr=spec.lr, lr_halving_epochs=100, eval_every=spec.epochs,
                         beam_size=3, seed=0, device="cuda", progress=False, precision=precision)
    problems = toy_problems()
    tf32_during = []  # "fp32" on CUDA trains with TF32 off, autocast runs leave the flags as they are
    result = solver.fit(problems, problems, config,
                        on_epoch=lambda _: tf32_during.append(torch.backends.cudnn.allow_tf32))
    expected = "fp32" if precision == "fp32" else ("bf16" if torch.cuda.is_bf16_supported() else "fp16")
    assert result.precision == expected
    assert set(tf32_during) == ({False} if precision == "fp32" else {torch.backends.cudnn.allow_tf32})
    losses = [e.train_loss for e in result.epochs]
    assert all(math.isfinite(x) for x in losses) and losses[-1] < losses[0] / MIN_FALL.get(spec.name, 10), losses
    assert next(solver.model.parameters()).is_cuda
    predictions = solver.predict(problems + unseen_problems(), beam_size=3)
    assert_valid_predictions(problems + unseen_problems(), predictions)
    right = [list(p.tokens) == g for p, g in zip(predictions, GOLD)]
    assert sum(right) >= MIN_GOLD.get(spec.name, 8), [p.tokens for p in predictions[:8]]
    # a beam's score is the likelihood of the expression it returns: compared where that expression is
    # the gold one (the likelihoods are of the gold expressions)
    likelihoods = solver.log_likelihood(problems)
    assert all(p.score == pytest.approx(lik.total, abs=1e-3) for p, lik, ok in zip(predictions, likelihoods, right) if ok)
    solver.save(tmp_path / spec.name)
    on_cpu = load_solver(tmp_path / spec.name, device="cpu")
    assert [p.tokens for p in on_cpu.predict(problems)] == [p.tokens for p in predictions[:8]]
    assert torch.allclose(on_cpu.encode(problems), solver.encode(problems), atol=1e-3)


def loss_and_gradients(spec: Spec, device: str, problems) -> tuple[float, dict[str, torch.Tensor]]:
    """Loss and gradients of one toy batch, dropout off, from the weights seed 0 initializes (on the
    CPU, then moved), in float32 with TF32 off."""
    solver = build_solver(spec.name, **spec.tiny)
    solver.encoding = solver.build_encoding(problems)
    torch.manual_seed(0)
    model = solver.build_model(solver.encoding).to(device).eval()
    for module in model.modules():  # cuDNN runs an RNN's backward in training mode only, so the
        if isinstance(module, torch.nn.RNNBase):  # RNNs train, with their dropout (0 in these configs) off
            module.dropout = 0.0
            module.train()
        elif isinstance(module, BiGRU):
            module.dropout_p = module.dropout.p = 0.0
            module.train()
    with float32_products():
        loss = model.loss(solver.encoding.batch(problems).to(torch.device(device)))
        loss.backward()
    return loss.item(), {n: p.grad.cpu() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("spec", ALL, ids=lambda s: s.name)
def test_every_solver_computes_the_cpu_loss_and_gradients_on_cuda(spec):
    problems = toy_problems()
    loss_cpu, grads_cpu = loss_and_gradients(spec, "cpu", problems)
    loss_gpu, grads_gpu = loss_and_gradients(spec, "cuda", problems)
    assert loss_gpu == pytest.approx(loss_cpu, rel=1e-5)
    assert grads_gpu.keys() == grads_cpu.keys()
    for name, grad in grads_cpu.items():
        assert torch.allclose(grads_gpu[name], grad, rtol=1e-3, atol=1e-5), name


@pytest.mark.parametrize("dtype, atol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_the_cudnn_encoder_equals_the_hand_written_one(dtype, atol):
    """In float64 (which TF32 does not touch) to rounding; in float32 with TF32 off to 1e-5. With
    cuDNN's default TF32 the float32 outputs differed by about 2e-4 (10-bit mantissa products)."""
    torch.manual_seed(0)
    ours = BiGRU(5, 6, 2).to(dtype)
    lengths = torch.tensor([7, 3, 5, 1])
    x = torch.randn(4, 7, 5, dtype=dtype)
    out, finals = ours(x, lengths)
    with float32_products():
        out_gpu, finals_gpu = copy.deepcopy(ours).cuda()(x.cuda(), lengths.cuda())
    valid = (torch.arange(7)[None, :] < lengths[:, None])[..., None].to(dtype)
    assert torch.allclose(out * valid, out_gpu.cpu() * valid, atol=atol)
    assert torch.allclose(finals, finals_gpu.cpu(), atol=atol)


@pytest.mark.parametrize("any_equal_slot", [False, True])
def test_the_wave_pass_equals_the_positions_pass_on_cuda(any_equal_slot):
    """Teacher forcing by waves (the default) and by positions, on CUDA in float64: the same log-probabilities
    and gradients (tests/solvers/test_gts_waves.py checks the same on the CPU)."""
    from solvers.gts import GTSConfig, GTSModel
    from solvers.gts_teacher import teacher_forced_log_probs
    from solvers.gts_waves import wave_log_probs
    from solvers.vocab import build_encoding
    from test_gts_teacher import hand_problems

    problems = hand_problems()
    enc = build_encoding(problems)
    torch.manual_seed(5)
    cfg = GTSConfig(embedding_size=12, hidden_size=16, dropout=0.0, any_equal_slot=any_equal_slot)
    model = GTSModel(cfg, enc).double().cuda().train()
    batch = enc.batch(problems).to(torch.device("cuda"))
    qty_class = batch.qty_class if any_equal_slot else None
    out = []
    for pass_ in (teacher_forced_log_probs, wave_log_probs):
        model.zero_grad()
        logp = pass_(model.decoder, model.context(batch), batch.target, batch.target_mask, qty_class)
        (-logp.sum()).backward()
        out.append((logp.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}))
    (positions, grads), (waves, wave_grads) = out
    assert waves.is_cuda and torch.allclose(waves, positions, rtol=0, atol=1e-12)
    assert wave_grads.keys() == grads.keys() and len(grads) >= 20
    for name, grad in grads.items():
        assert torch.allclose(wave_grads[name], grad, rtol=1e-10, atol=1e-12), name


def test_a_loop_round_trains_evaluates_and_scores_on_cuda(tmp_path):
    from mwp.problem import write_jsonl
    from solvers.gts import GTSConfig
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


@pytest.mark.parametrize("fusion", _fusions())
@pytest.mark.parametrize("teacher_pass", ["waves", "positions"])
@pytest.mark.parametrize("step", GRAPHED_STEPS)
def test_the_graphed_step_replays_the_models_loss_and_gradients_on_cuda(step, teacher_pass, fusion):
    """One captured pass a rounded shape (solvers/gts_graphs.py; the decoder's, or with graphed-whole the
    encoder's and the decoder's; the padded wave pass, or with teacher_pass "positions" the dense one), the
    captures sharing one memory pool: batches of two shapes, replays with other inputs and a padded row, each
    the model's own loss and gradients in float32. With fusion inductor the passes' elementwise chains are
    Triton kernels compiled in the warm-up runs (the second shape recompiles them for symbolic shapes)."""
    from solvers.gts import GTSConfig, GTSModel
    from solvers.gts_graphs import ShapeFixedLoss
    from solvers.vocab import build_encoding

    problems = toy_problems()
    enc = build_encoding(problems)
    torch.manual_seed(0)
    cfg = GTSConfig(embedding_size=16, hidden_size=32, dropout=0.0, teacher_pass=teacher_pass)
    model = GTSModel(cfg, enc).cuda().train()
    # the second: three rows in another order, padded to four (a short last batch); the third of another
    # shape (longer texts and expressions: a second capture in the shared pool), then the first shape again
    first, second, other = enc.batch(problems[:4]), enc.batch(problems[3:0:-1]), enc.batch(problems[4:])
    rows = 4
    graphed = ShapeFixedLoss(model, rows, torch.device("cuda"), graphed=True, whole=step == "graphed-whole",
                             fusion=fusion)
    shape = [graphed.key_and_plan(b)[0] for b in (first, second, other)]
    assert shape[0] == shape[1] != shape[2]
    with float32_products():
        for batch in (first, second, other, first):
            results = []
            for loss_of in (lambda b: model.loss(b.to("cuda")), graphed):
                model.zero_grad(set_to_none=True)
                loss = loss_of(batch)
                loss.backward()
                results.append((loss.item(), {n: p.grad.clone() for n, p in model.named_parameters()
                                              if p.grad is not None}))
                # an eager pass's loss still held while a shape is captured keeps its parameters' gradient
                # accumulators, made on the default stream: the capture's backward would make that stream wait
                # on the capturing one (cudaErrorStreamCaptureImplicit; the H200 session of 2026-11-27)
                del loss
            (own, own_grads), (replayed, replayed_grads) = results
            assert replayed == pytest.approx(own, rel=1e-5)
            # one-operator expressions merge nothing the loss reads: the row-wise pass leaves the merge layer
            # without a gradient, the padded pass gives it zeros (every level computed, masked out)
            assert own_grads.keys() <= replayed_grads.keys()
            for name, grad in replayed_grads.items():
                expected = own_grads.get(name, torch.zeros_like(grad))
                assert torch.allclose(grad, expected, rtol=1e-4, atol=1e-6), name
    assert graphed.captures == 2
    model.eval()  # the captures hold the training pass: refused, not replayed with dropout
    with pytest.raises(ValueError, match="call it in train mode"):
        graphed(first)
    before = torch.cuda.memory_allocated()
    graphed.close()  # what the trainer does when a training ends: the captures and their memory go
    assert graphed.captures == 0 and torch.cuda.memory_allocated() < before


@pytest.mark.parametrize("graphed_step", GRAPHED_STEPS)
def test_training_with_the_graphed_step_follows_the_row_wise_training_on_cuda(graphed_step):
    losses = {}
    for step in ("rowwise", graphed_step):
        solver = build_solver("gts", device="cuda", embedding_size=16, hidden_size=16, dropout=0.0)
        cfg = TrainConfig(epochs=4, batch_size=3, lr=1e-2, weight_decay=0.0, device="cuda", precision="fp32",
                          progress=False, eval_every=10**9, step=step)
        losses[step] = [e.train_loss for e in solver.fit(toy_problems(), [], cfg).epochs]
    assert losses[graphed_step][0] == pytest.approx(losses["rowwise"][0], rel=1e-3)
    assert losses[graphed_step] == pytest.approx(losses["rowwise"], rel=2e-2)
    assert losses[graphed_step][-1] < 0.8 * losses[graphed_step][0]
    # dropout on (a captured pass draws new masks at every replay), then it predicts valid expressions
    solver = build_solver("gts", device="cuda", embedding_size=32, hidden_size=64)
    cfg = TrainConfig(epochs=30, batch_size=4, lr=1e-2, weight_decay=0.0, device="cuda", precision="fp32",
                      progress=False, eval_every=10**9, step=graphed_step)
    result = solver.fit(toy_problems(), [], cfg)
    assert result.epochs[-1].train_loss < 0.5 * result.epochs[0].train_loss
    # each epoch says how many shapes it captured and how long that took, within its seconds
    assert result.epochs[0].captures >= 1 and all(e.captures >= 0 for e in result.epochs)
    assert all(0 <= e.capture_seconds <= e.seconds for e in result.epochs)
    assert all(e.capture_seconds == 0 for e in result.epochs if e.captures == 0)
    assert_valid_predictions(toy_problems(), solver.predict(toy_problems(), beam_size=2))


def _graphed_setup(dropout: float, step: str, fusion: str = "none"):
    from solvers.gts import GTSConfig, GTSModel
    from solvers.trainer import make_optimizer, shape_fixed_loss
    from solvers.vocab import build_encoding

    problems = toy_problems()
    enc = build_encoding(problems)
    torch.manual_seed(0)
    model = GTSModel(GTSConfig(embedding_size=16, hidden_size=32, dropout=dropout), enc).cuda().train()
    config = TrainConfig(batch_size=4, device="cuda", precision="fp32", progress=False, step=step, graph_fusion=fusion)
    device = torch.device("cuda")
    optimizer = make_optimizer(model, config, device)
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    return problems, enc, model, config, device, optimizer, scaler, shape_fixed_loss(model, config, device, None)


@pytest.mark.parametrize("fusion", _fusions())
@pytest.mark.parametrize("step", GRAPHED_STEPS)
def test_a_steady_graphed_step_never_waits_on_the_gpu(step, fusion):
    """After its shape is captured, a graphed training step (the trainer's train_step and its loss sum)
    makes no call that waits for the GPU: the batch goes through pinned memory, the plan is the host's,
    the loss is not read. torch's sync debug mode warns at any such call (solvers/device_copy.host_waits)."""
    from solvers.device_copy import host_waits
    from solvers.trainer import train_step

    problems, enc, model, config, device, optimizer, scaler, loss_of = _graphed_setup(0.0, step, fusion)
    first, second = enc.batch(problems[:4]), enc.batch(problems[3::-1])  # one shape, other row order
    with float32_products():
        for _ in range(2):
            train_step(model, first, config, optimizer, scaler, device, None, loss_of)  # captures, warms up
        torch.cuda.synchronize()
        losses = []

        def steps():
            for batch in (second, first, second):
                losses.append(train_step(model, batch, config, optimizer, scaler, device, None, loss_of).detach())
            losses.append(torch.stack(losses).double().sum())  # the trainer's epoch sum, not read

        waits = host_waits(steps)
    assert waits["host_waits"] == 0, waits  # where it waits: file:line of each place
    assert loss_of.captures == 1 and all(math.isfinite(loss.item()) for loss in losses)


@pytest.mark.parametrize("step", GRAPHED_STEPS)
def test_a_graphed_pass_draws_new_dropout_masks_at_every_replay(step):
    """The captured pass alone, replayed on the very same inputs (with graphed, one encoder run, whose own
    dropout would otherwise make the losses differ anyway): each replay another loss; a graph that had baked
    its masks in would give one."""
    problems, enc, model, _, _, _, _, loss_of = _graphed_setup(0.5, step)
    with float32_products():
        key, args = loss_of.padded_args(enc.batch(problems[:4]))
        graph = loss_of._captured(key, args)
        losses = [graph(*args).item() for _ in range(4)]
    assert loss_of.captures == 1 and len(set(losses)) == 4, losses


@pytest.mark.parametrize("step", GRAPHED_STEPS)
def test_a_training_collects_before_its_first_capture_only(step):
    """A full cycle collection costs tenths of a second in a process holding a large data set (docs/solvers.md):
    a training's first capture runs one (an earlier training's dead graphs go), its later captures do not; the
    collector is off during each (test_gts_graphs.py checks that part on the CPU)."""
    import gc

    from test_gts_graphs import CollectorOnly

    problems, enc, _, _, _, _, _, loss_of = _graphed_setup(0.0, step)
    freed: list[bool] = []
    first, other = enc.batch(problems[:4]), enc.batch(problems[4:])
    assert loss_of.key_and_plan(first)[0] != loss_of.key_and_plan(other)[0]
    gc.disable()  # only an explicit collection frees the cycles
    try:
        with float32_products():
            CollectorOnly(freed)
            loss_of._captured(*loss_of.padded_args(first))  # the training's first capture: collects
            assert freed == [True]
            CollectorOnly(freed)
            loss_of._captured(*loss_of.padded_args(other))  # a later one: does not
            assert freed == [True] and loss_of.captures == 2
    finally:
        gc.enable()
    gc.collect()
    assert freed == [True, True]
    loss_of.close()
