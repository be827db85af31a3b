"""The trainer's shape-fixed steps (solvers/gts_graphs.py): on the CPU the ``dense`` step, the padded pass a
CUDA graph captures (the padded wave pass, or with teacher_pass "positions" the dense one), run eagerly; the
loss and gradients of a padded batch against the model's own loss, a training with it against the row-wise
one, and the settings it refuses. test_cuda.py trains with the ``graphed`` step on a GPU."""
import dataclasses

import pytest
import torch

from solvers.base import TrainConfig
from solvers.gts import GTSConfig, GTSModel
from solvers.gts_graphs import (WAVE_ROUNDINGS, DenseLoss, ShapeFixedLoss, WaveLoss, WholeLoss, capture_footprint,
                                rounded_plan, rounded_wave_plan)
from solvers.registry import build_solver
from solvers.train_state import identity
from solvers.vocab import build_encoding
from test_gts_teacher import hand_problems
from toy_problems import toy_problems


def _model(any_equal_slot: bool, problems, teacher_pass: str = "waves"):
    enc = build_encoding(problems)
    torch.manual_seed(3)
    cfg = GTSConfig(embedding_size=12, hidden_size=16, dropout=0.0, any_equal_slot=any_equal_slot,
                    teacher_pass=teacher_pass)
    return GTSModel(cfg, enc).double().train(), enc


class CollectorOnly:
    """An object only Python's cycle collector frees (it refers to itself), as a graphed callable is; its freeing
    is recorded in ``freed``."""

    def __init__(self, freed: list[bool]):
        self.me, self.freed = self, freed

    def __del__(self):
        self.freed.append(True)


def _powers_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@pytest.mark.parametrize("teacher_pass,rounding", [("waves", "coarse"), ("waves", "fine"), ("positions", "coarse")])
@pytest.mark.parametrize("whole", [False, True], ids=["decoder-pass", "whole-pass"])
@pytest.mark.parametrize("any_equal_slot", [False, True])
def test_the_padded_loss_equals_the_models_loss_with_its_gradients(any_equal_slot, whole, teacher_pass, rounding):
    """The padded pass of the graphed steps, eager: the decoder's after the encoder (step graphed) or the
    encoder's and the decoder's in one module (step graphed-whole), against the model's own loss; the padded
    wave pass with teacher_pass "waves" (its shapes rounded coarsely, the default, or finely), the dense pass
    with "positions"."""
    problems = hand_problems()
    model, enc = _model(any_equal_slot, problems, teacher_pass)
    batch = enc.batch(problems)
    assert batch.has_repeated_values
    rows = batch.size + 3  # padded rows too, as a short last batch of an epoch is
    step = ShapeFixedLoss(model, rows, torch.device("cpu"), graphed=False, whole=whole, rounding=rounding)
    key, _ = step.key_and_plan(batch)
    if teacher_pass == "positions":
        assert key == rounded_plan(batch, model.decoder.n_ops, rows)[0]
        T, L, Q, K = key
        assert (T % 16, L % 4, Q % 4, K % 2) == (0, 0, 0, 0) and L > batch.target.shape[1] - 4
    else:
        how = WAVE_ROUNDINGS[rounding]
        assert key == rounded_wave_plan(batch, model.decoder, rows, any_equal_slot, how, encoder=whole)[0]
        T, L, Q, W, R, H0, M0, A, rule = key
        assert (W % 2, H0 % 2, A % 16, rule) == (0, 0, 0, any_equal_slot)
        needed = (batch.tokens.shape[1], batch.target.shape[1], batch.qty_positions.shape[1])
        assert all(n >= m for n, m in zip((T, L, Q), needed))
        if rounding == "coarse":  # a power of two times 32 positions, 16 slots and 2 batches of rows; tokens:
            assert [_powers_of_two(n // m) and n % m == 0 for n, m in
                    ((L, 32), (Q, 16), (R, 2 * rows), (M0, 2 * rows))] == [True] * 4
            if whole:  # a multiple of 32 (the encoder's recurrence runs a step a token)
                assert T % 32 == 0 and T < needed[0] + 32
            else:  # 64 times a power of two
                assert _powers_of_two(T // 64) and T % 64 == 0
        else:  # multiples of 32 tokens, 16 positions, 4 slots, a batch of rows
            assert [n % m for n, m in ((T, 32), (L, 16), (Q, 4), (R, rows), (M0, rows))] == [0] * 5
            assert all(n < m + unit for n, m, unit in zip((T, L, Q), needed, (32, 16, 4)))
    assert isinstance(step.loss_module(), WholeLoss if whole else WaveLoss if teacher_pass == "waves" else DenseLoss)
    grads = []
    for loss_of in (model.loss, step):
        model.zero_grad()
        loss = loss_of(batch)
        loss.backward()
        grads.append((loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}))
    (own, own_grads), (dense, dense_grads) = grads
    assert dense == pytest.approx(own, rel=1e-12)
    assert dense_grads.keys() == own_grads.keys()
    for name, grad in own_grads.items():
        assert torch.allclose(dense_grads[name], grad, rtol=1e-9, atol=1e-12), name


def test_a_batch_larger_than_the_step_is_refused():
    problems = hand_problems()
    model, enc = _model(True, problems)
    with pytest.raises(ValueError, match="batch of .* rows for a step shaped for 2"):
        ShapeFixedLoss(model, 2, torch.device("cpu"), graphed=False)(enc.batch(problems))


@pytest.mark.parametrize("teacher_pass", ["waves", "positions"])
def test_training_with_the_dense_step_follows_the_row_wise_training(teacher_pass):
    """Same weights, same batches, dropout off: the two steps compute the same loss up to rounding, so the
    first epoch's mean loss agrees closely and both fall; what ran is the padded pass (its captures: none)."""
    problems = toy_problems()
    losses = {}
    for step in ("rowwise", "dense"):
        solver = build_solver("gts", device="cpu", embedding_size=16, hidden_size=16, dropout=0.0,
                              teacher_pass=teacher_pass)
        cfg = TrainConfig(epochs=4, batch_size=3, lr=1e-2, weight_decay=0.0, device="cpu", progress=False,
                          eval_every=10**9, step=step)
        result = solver.fit(problems, [], cfg)
        losses[step] = [e.train_loss for e in result.epochs]
        assert all(e.captures is None and e.capture_seconds is None for e in result.epochs)  # no graphs here
    assert losses["dense"][0] == pytest.approx(losses["rowwise"][0], rel=1e-4)
    assert losses["dense"] == pytest.approx(losses["rowwise"], rel=1e-2)
    assert losses["dense"][-1] < 0.8 * losses["dense"][0]


def test_the_settings_a_shape_fixed_step_cannot_take_are_refused_by_name():
    problems = toy_problems()
    with pytest.raises(ValueError, match="step must be one of rowwise, dense, graphed"):
        TrainConfig(step="fused")
    with pytest.raises(ValueError, match=r"needs precision fp32 \(got auto\) and a CUDA device \(got auto\)"):
        TrainConfig(step="graphed")
    with pytest.raises(ValueError, match=r"needs precision fp32 \(got fp32\) and a CUDA device \(got cpu\)"):
        TrainConfig(step="graphed", precision="fp32", device="cpu")
    with pytest.raises(ValueError, match=r"step graphed-whole captures .* \(got bf16\) and a CUDA device \(got auto\)"):
        TrainConfig(step="graphed-whole", precision="bf16")
    with pytest.raises(ValueError, match="graph_rounding must be one of coarse, fine, got 'exact'"):
        TrainConfig(graph_rounding="exact")
    with pytest.raises(ValueError, match="unknown wave rounding 'exact'"):
        ShapeFixedLoss(_model(True, problems)[0], 4, torch.device("cpu"), graphed=False, rounding="exact")
    lstm = build_solver("lstm", device="cpu")
    with pytest.raises(ValueError, match="step 'dense': .* has no shape-fixed pass"):
        lstm.fit(problems, [], TrainConfig(epochs=1, device="cpu", progress=False, step="dense"))


@pytest.mark.parametrize("rounding", ["coarse", "fine"])
def test_the_trainers_step_rounds_as_the_training_config_says(rounding):
    from solvers.trainer import shape_fixed_loss

    problems = toy_problems()
    model, enc = _model(True, problems)
    config = TrainConfig(batch_size=4, step="dense", graph_rounding=rounding)
    step = shape_fixed_loss(model, config, torch.device("cpu"), None)
    assert step.rounding == WAVE_ROUNDINGS[rounding]
    batch = enc.batch(problems[:4])
    assert step.key_and_plan(batch)[0] == rounded_wave_plan(batch, model.decoder, 4, True, WAVE_ROUNDINGS[rounding])[0]
    assert (step.key_and_plan(batch)[0][0] == 64) == (rounding == "coarse")  # 16 tokens: 64 or 32


def test_a_saved_training_state_keeps_its_identity_at_the_default_step_and_rounding():
    problems = toy_problems()
    model, _ = _model(True, problems)
    default = identity(TrainConfig(), problems, [], model)
    assert "step" not in default["config"]  # states saved before the setting existed continue
    assert "graph_rounding" not in default["config"]
    dense = identity(dataclasses.replace(TrainConfig(), step="dense"), problems, [], model)
    assert dense["config"]["step"] == "dense" and dense != default
    fine = identity(dataclasses.replace(TrainConfig(), step="dense", graph_rounding="fine"), problems, [], model)
    assert fine["config"]["graph_rounding"] == "fine" and fine != dense


@pytest.mark.skipif(torch.cuda.is_available(), reason="device auto finds a GPU here")
@pytest.mark.parametrize("step", ["graphed", "graphed-whole"])
def test_graphed_is_refused_when_device_auto_finds_no_gpu(step):
    gts = build_solver("gts", device="auto", embedding_size=8, hidden_size=8)
    with pytest.raises(ValueError, match=f"step '{step}' captures CUDA graphs: it needs a CUDA device, not cpu"):
        gts.fit(toy_problems(), [], TrainConfig(epochs=1, device="auto", precision="fp32", progress=False,
                                                step=step))


@pytest.mark.parametrize("teacher_pass", ["waves", "positions"])
def test_a_batch_without_value_classes_reads_every_slot_as_its_own(teacher_pass):
    """A Batch may come without ``qty_class`` (the row-wise pass then applies no repeated-value rule): the
    dense step's classes are then one per slot, which gives the same loss as the row-wise pass without it."""
    problems = hand_problems()
    model, enc = _model(True, problems, teacher_pass)
    batch = dataclasses.replace(enc.batch(problems), qty_class=None)
    own = model.loss(batch).item()
    dense = ShapeFixedLoss(model, batch.size, torch.device("cpu"), graphed=False)(batch).item()
    assert dense == pytest.approx(own, rel=1e-12)


def _padded_args(model, enc, problems):
    """The step's decoder pass (the model's teacher_pass's) and its arguments for the problems' batch."""
    batch = enc.batch(problems)
    step = ShapeFixedLoss(model, batch.size + 3, torch.device("cpu"), graphed=False)
    return step.loss_module(), step.padded_args(batch)[1]


@pytest.mark.parametrize("teacher_pass", ["waves", "positions"])
@pytest.mark.parametrize("any_equal_slot,dropout", [(False, 0.0), (True, 0.5)])
def test_the_captured_pass_reads_nothing_back_and_its_footprint_counts_what_a_capture_keeps(any_equal_slot, dropout,
                                                                                            teacher_pass):
    """A CUDA graph captures kernels, never a host read of a value: the pass a graphed step captures runs
    forward and backward on the meta device (shapes, no values), taking CUDA's dropout branch; and its
    footprint counts the inputs and the gradients the real pass on the CPU computes."""
    problems = hand_problems()
    enc = build_encoding(problems)
    torch.manual_seed(3)
    model = GTSModel(GTSConfig(embedding_size=12, hidden_size=16, dropout=dropout, any_equal_slot=any_equal_slot,
                               teacher_pass=teacher_pass), enc).train()
    loss, args = _padded_args(model, enc, problems)
    assert isinstance(loss, WaveLoss if teacher_pass == "waves" else DenseLoss)
    footprint = capture_footprint(loss, args)
    assert footprint.inputs == sum(a.numel() * a.element_size() for a in args)
    # the real pass on the CPU: which inputs and parameters get a gradient
    inputs = tuple(a.detach().requires_grad_(a.requires_grad) for a in args)
    params = list(model.decoder.parameters())
    wanted = [a for a in inputs if a.requires_grad] + params
    grads = torch.autograd.grad(loss(*inputs), wanted, allow_unused=True)
    assert sum(g.numel() * g.element_size() for g in grads if g is not None) == footprint.grads
    assert footprint.kept == footprint.inputs + footprint.grads and footprint.saved > footprint.inputs


@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_the_whole_pass_reads_nothing_back_with_the_encoder_in_it(dropout, monkeypatch):
    """Step graphed-whole captures the encoder too: the whole pass runs on the meta device, its encoder on the
    masked recurrence even where the packed one would run (on CUDA; here ``library=True``, with packing made
    to fail: packing reads the lengths' values), and its footprint's gradients are those of every parameter
    the real pass on the CPU reaches, the encoder's and the embedding's included."""
    problems = hand_problems()
    enc = build_encoding(problems)
    torch.manual_seed(3)
    model = GTSModel(GTSConfig(embedding_size=12, hidden_size=16, dropout=dropout), enc).train()
    batch = enc.batch(problems)
    step = ShapeFixedLoss(model, batch.size + 3, torch.device("cpu"), graphed=False, whole=True)
    args = step.padded_args(batch)[1]
    assert isinstance(step.loss_module(), WholeLoss) and torch.equal(args[0][:batch.size, :batch.tokens.shape[1]],
                                                                     batch.tokens)  # token ids, not states
    inputs = tuple(a.detach().requires_grad_(a.requires_grad) for a in args)
    params = list(model.parameters())
    grads = torch.autograd.grad(WholeLoss(model)(*inputs), params, allow_unused=True)
    encoder = {id(p) for p in model.encoder.parameters()}
    assert all(g is not None for p, g in zip(params, grads) if id(p) in encoder)  # the encoder is in the pass
    model.encoder.gru.library = True

    def no_packing(*a):
        raise AssertionError("the whole pass packed its batch")

    monkeypatch.setattr("solvers.fast_gru.pack_rows", no_packing)
    footprint = capture_footprint(WholeLoss(model), args)
    assert footprint.inputs == sum(a.numel() * a.element_size() for a in args)
    assert footprint.grads == sum(g.numel() * g.element_size() for g in grads if g is not None)
    with pytest.raises(AssertionError, match="packed"):
        model.encoder(*args[:2])  # the encoder without the flag: the library path


def test_every_argument_of_the_whole_pass_is_on_the_steps_device():
    """A captured pass copies its arguments into its static inputs on the GPU: each must be on the step's device
    already. Batch.to leaves the lengths on the host (the packed path wants them there), so the whole pass's
    arguments move them themselves; capture_footprint moves everything to meta and cannot tell. Here the step's
    device is meta: every argument lands there."""
    problems = hand_problems()
    model, enc = _model(True, problems)
    batch = enc.batch(problems)
    step = ShapeFixedLoss(model, batch.size + 1, torch.device("meta"), graphed=False, whole=True)
    args = step.padded_args(batch)[1]
    assert {a.device.type for a in args} == {"meta"}
    assert args[1].shape == (batch.size + 1,)  # the lengths, padded rows included


def test_the_footprint_refuses_a_pass_that_reads_a_value_back_to_the_host(monkeypatch):
    problems = hand_problems()
    model, enc = _model(True, problems)
    loss, args = _padded_args(model, enc, problems)
    capture_footprint(loss, args)  # the pass as it is: runs
    op_labels = type(model.decoder).op_labels

    def reads_back(self, tokens, dtype):
        tokens.tolist()  # what a captured pass cannot do
        return op_labels(self, tokens, dtype)

    monkeypatch.setattr(type(model.decoder), "op_labels", reads_back)
    with pytest.raises((NotImplementedError, RuntimeError)):
        capture_footprint(loss, args)


def test_a_capture_runs_with_the_cycle_collector_off_after_a_collection():
    """A CUDA graph freed mid-capture breaks the capture (an earlier training's graphs are freed by Python's
    cycle collector only): captures run with the collector off, leave it as found, and the first of a
    training after a collection (a later one does not collect: a full collection costs tenths of a second)."""
    import gc

    from solvers.gts_graphs import _no_collection

    freed: list[bool] = []
    gc.disable()  # so that no collection of the collector's own frees it before the capture's
    try:
        CollectorOnly(freed)  # unreachable, but only the collector frees it
        assert freed == []
    finally:
        gc.enable()
    with _no_collection():
        assert freed == [True] and not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with _no_collection():
            pass
        assert not gc.isenabled()  # a caller's own setting is left alone
        CollectorOnly(freed)
        with _no_collection(collect=False):
            assert freed == [True] and not gc.isenabled()  # not collected: a training's later capture
    finally:
        gc.enable()
    gc.collect()
    assert freed == [True, True]
