"""Pointwise tails fused by TorchInductor (solvers/fusion.py): the hand-written passes compute the same values and
gradients with ``graph_fusion`` "inductor" as without, the backward follows its forward's choice, and a fused
step runs a generated kernel or a few where the eager one dispatched several operations (C++ kernels on the CPU,
as CI compiles them)."""
from __future__ import annotations

import collections

import pytest
import torch

from solvers.fast_gru import BiGRU
from solvers.fusion import (FUSIONS, Pointwise, check_fusion, check_fusion_available, dispatches, fusing, fusion,
                            fusion_unavailable)

pytestmark = pytest.mark.skipif(fusion_unavailable(torch.device("cpu")) is not None,
                                reason="TorchInductor needs a C++ compiler on the CPU")


def _counts(fn) -> collections.Counter:
    """:func:`solvers.fusion.dispatches`, generated kernels as "fused"."""
    counts = dispatches(fn)
    counts["fused"] = counts.pop("generated", 0)
    return counts


def _gru_run(gru: BiGRU, x: torch.Tensor, lengths: torch.Tensor, name: str):
    gru.zero_grad()
    x.grad = None
    with fusion(name):
        out, finals = gru(x, lengths, shape_fixed=True)
    # backward outside the block: it follows the forward's choice
    (out.pow(2).sum() + finals.sum()).backward()
    return out, finals, x.grad.clone(), *(p.grad.clone() for p in gru.parameters())


def test_the_fused_recurrence_computes_what_the_eager_one_does_in_float64():
    torch.manual_seed(0)
    gru = BiGRU(5, 6, 2).double()
    x = torch.randn(4, 7, 5, dtype=torch.float64, requires_grad=True)
    lengths = torch.tensor([7, 3, 5, 1])
    eager, fused = _gru_run(gru, x, lengths, "none"), _gru_run(gru, x, lengths, "inductor")
    for a, b in zip(eager, fused):
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-12)
    assert any(a.abs().sum() > 0 for a in eager[2:])


def test_the_fused_recurrence_runs_generated_kernels_for_the_eager_steps_elementwise_operations():
    torch.manual_seed(0)
    T = 6
    gru = BiGRU(8, 16, 1)
    x = torch.randn(3, T, 8, requires_grad=True)
    lengths = torch.tensor([6, 4, 2])
    _gru_run(gru, x, lengths, "inductor")  # compiled before it is counted
    counts = {}
    for name in FUSIONS:
        with fusion(name):
            fwd = _counts(lambda: gru(x, lengths, shape_fixed=True))
        with fusion(name):
            out, finals = gru(x, lengths, shape_fixed=True)
        bwd = _counts(lambda: (out.sum() + finals.sum()).backward())
        counts[name] = fwd, bwd
    (eager_fwd, eager_bwd), (fused_fwd, fused_bwd) = counts["none"], counts["inductor"]
    # forward, a step: baddbmm, two sigmoids, addcmul, tanh_, lerp eager; baddbmm and one kernel fused
    assert eager_fwd["aten::lerp"] == T and eager_fwd["aten::sigmoid"] == 2 * T and eager_fwd["fused"] == 0
    # (TorchInductor's C++ backend may split a step's gates into up to 3 loops for a fixed shape, 1 once symbolic)
    assert T <= fused_fwd["fused"] <= 3 * T and "aten::lerp" not in fused_fwd and "aten::sigmoid" not in fused_fwd
    # each step's recurrent product adds into its own addend in place (an out-of-place baddbmm copies the addend
    # first: on CUDA a kernel a step); the input projection is the one out-of-place product
    assert fused_fwd["aten::baddbmm"] == eager_fwd["aten::baddbmm"] == 1
    assert fused_fwd["aten::baddbmm_"] == eager_fwd["aten::baddbmm_"] == T
    # backward, a step after the first: mul_, addcmul and baddbmm_ eager; one kernel and baddbmm_ fused, each step's
    # kernel writing a new tensor (the step 0 one too), stacked once at the end
    assert eager_bwd["aten::addcmul"] == T - 1 and "aten::addcmul" not in fused_bwd
    assert eager_bwd["aten::mul_"] == T + 1 and fused_bwd["aten::mul_"] == 1  # the n input side's, after the loop
    # (fused, the steps' results are stacked once and the output gradients copied into a buffer instead)
    assert fused_bwd["fused"] == T and fused_bwd["aten::stack"] == eager_bwd["aten::stack"]
    assert fused_bwd["aten::baddbmm_"] == eager_bwd["aten::baddbmm_"] == T - 1 and "aten::baddbmm" not in eager_bwd
    assert sum(fused_fwd.values()) + 2 * T <= sum(eager_fwd.values())
    assert sum(fused_bwd.values()) < sum(eager_bwd.values())


def test_a_fused_backward_step_of_the_recurrence_compiles_to_one_kernel():
    """The eager step's two results (its factors times dh in place, the direct path's gradient new) compile to two
    kernels (on the H200 they were two Triton kernels a step); the fused step's one (2, B, 4, H) result to one.
    Counted by TorchInductor here on the CPU: one elementwise result of one shape is one kernel on either backend."""
    from torch._inductor import metrics

    from solvers.fast_gru import _cell_back, _cell_back_fused

    D, B, H = 2, 3, 5
    factors, carry, dh, d_out = torch.randn(D, B, 3, H), torch.rand(D, B, H), torch.randn(D, B, H), torch.randn(D, B, H)
    torch._dynamo.reset()  # compiled here, whatever the process compiled before
    kernels = {}
    for name, fn, args in (("eager", _cell_back, (factors.clone(), dh, d_out, carry)),
                           ("fused", _cell_back_fused.fn, (factors, carry, dh, d_out))):
        metrics.reset()
        torch.compile(fn, fullgraph=True)(*args)
        kernels[name] = metrics.generated_kernel_count
    assert kernels == {"eager": 2, "fused": 1}
    scaled, expected = factors.clone(), torch.addcmul(d_out, dh, carry)
    _cell_back(scaled, dh, d_out, carry)
    out = _cell_back_fused(factors, carry, dh, d_out, fused=True)
    assert out.shape == (D, B, 4, H)
    assert torch.allclose(out[:, :, :3], scaled) and torch.allclose(out[:, :, 3], expected)


def test_the_fused_backward_step_compiles_for_one_shape_then_once_for_all_shapes():
    """Each call of the compiled backward step meets views of one layout, so a training compiles it twice (its first
    shape, then symbolic shapes) whatever its batches' sizes and lengths. A view at storage offset 0 or a dh of other
    strides would compile it again each (the full suite once reached torch's limit of 8 compiles, a hard failure)."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list

    from solvers.fast_gru import _cell_back_fused

    torch._dynamo.reset()
    torch.manual_seed(0)
    gru = BiGRU(8, 16, 2)
    for B, T in ((3, 6), (5, 4), (2, 9), (4, 2), (6, 7)):
        x = torch.randn(B, T, 8, requires_grad=True)
        lengths = torch.randint(1, T + 1, (B,))
        lengths[0] = T
        _gru_run(gru, x, lengths, "inductor")
    assert len(_debug_get_cache_entry_list(_cell_back_fused.fn.__code__)) == 2


def test_fusion_blocks_nest_and_restore():
    assert not fusing()
    with fusion("inductor"):
        assert fusing()
        with fusion("none"):
            assert not fusing()
        assert fusing()
    assert not fusing()


def test_unknown_fusions_are_refused_by_name():
    with pytest.raises(ValueError, match="graph_fusion must be one of none, inductor, got 'triton'"):
        check_fusion("triton")
    with pytest.raises(ValueError, match="graph_fusion must be one of"):
        with fusion("jit"):
            pass
    check_fusion_available("inductor", torch.device("cpu"))  # this machine compiles C++
    with pytest.raises(RuntimeError, match="graph_fusion 'inductor' cannot run on meta"):
        check_fusion_available("inductor", torch.device("meta"))
    check_fusion_available("none", torch.device("meta"))


def test_a_pointwise_function_compiles_once_for_its_fused_calls_of_one_shape():
    from torch._dynamo.utils import counters

    def double_plus_one(x):
        return x * 2 + 1

    f = Pointwise(double_plus_one)
    x = torch.arange(4.0)
    graphs = counters["stats"]["unique_graphs"]
    assert torch.equal(f(x), x * 2 + 1) and counters["stats"]["unique_graphs"] == graphs  # eager: no compile
    assert torch.equal(f(x, fused=True), x * 2 + 1)
    assert counters["stats"]["unique_graphs"] == graphs + 1
    assert torch.equal(f(x + 1, fused=True), (x + 1) * 2 + 1)
    assert counters["stats"]["unique_graphs"] == graphs + 1  # same shape: the compiled graph again
    assert f.__name__ == "double_plus_one"


def _loss_and_grads(model, loss_of, batch, seed: int = 0):
    model.zero_grad()
    torch.manual_seed(seed)  # the same dropout masks for either fusion
    loss = loss_of(batch)
    loss.backward()  # outside the step's fusion block: each backward follows its forward
    return loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("dropout", [0.0, 0.5])
@pytest.mark.parametrize("whole", [False, True], ids=["decoder-pass", "whole-pass"])
@pytest.mark.parametrize("any_equal_slot", [False, True])
def test_the_fused_padded_pass_computes_the_unfused_loss_and_gradients(any_equal_slot, whole, dropout):
    """The padded wave pass the graphed steps capture (with ``whole`` the encoder in it), run eagerly in float64
    with graph_fusion inductor and none: the same loss and gradients (the gated layers, the attention weights and,
    with the encoder, its recurrence fused), the repeated-value rule on or off, dropout off or on."""
    from solvers.gts_graphs import ShapeFixedLoss
    from test_gts_graphs import _model
    from test_gts_teacher import hand_problems

    problems = hand_problems()
    model, enc = _model(any_equal_slot, problems)
    model.decoder.dropout.p = dropout
    batch = enc.batch(problems)
    steps = {name: ShapeFixedLoss(model, batch.size + 3, torch.device("cpu"), graphed=False, whole=whole, fusion=name)
             for name in FUSIONS}
    results = {name: _loss_and_grads(model, step, batch) for name, step in steps.items()}
    ran = {name: _counts(lambda step=step: step(batch).backward()) for name, step in steps.items()}
    assert ran["none"]["fused"] == 0 and ran["inductor"]["fused"] > 0  # the generated kernels ran
    assert ran["inductor"]["aten::sigmoid"] < ran["none"]["aten::sigmoid"]
    (loss, grads), (fused_loss, fused_grads) = results["none"], results["inductor"]
    assert fused_loss == pytest.approx(loss, rel=1e-12)
    assert fused_grads.keys() == grads.keys()
    for name, grad in grads.items():
        assert torch.allclose(fused_grads[name], grad, rtol=1e-9, atol=1e-12), name
    assert grads["decoder.goal_right.weight"].abs().sum() > 0
    if whole:
        assert grads["encoder.gru.w_hh.0"].abs().sum() > 0


def test_the_trainer_fuses_as_the_training_config_says_and_trains_alike():
    """A dense-step training with graph_fusion inductor: its step fuses, and its epochs' losses are those of the
    same training unfused (same weights, batches and dropout masks; float32 rounding apart)."""
    from solvers.base import TrainConfig
    from solvers.registry import build_solver
    from solvers.trainer import shape_fixed_loss
    from test_gts_graphs import _model
    from toy_problems import toy_problems

    problems = toy_problems()
    model, _ = _model(True, problems)
    config = TrainConfig(batch_size=4, step="dense", graph_fusion="inductor")
    assert shape_fixed_loss(model, config, torch.device("cpu"), None).fusion == "inductor"
    losses = {}
    for name in FUSIONS:
        solver = build_solver("gts", device="cpu", embedding_size=16, hidden_size=16, dropout=0.3)
        cfg = TrainConfig(epochs=3, batch_size=3, lr=1e-2, device="cpu", progress=False, eval_every=10**9,
                          step="dense", graph_fusion=name)
        losses[name] = [e.train_loss for e in solver.fit(problems, [], cfg).epochs]
    assert losses["inductor"] == pytest.approx(losses["none"], rel=1e-4)
    assert losses["inductor"][-1] < losses["inductor"][0]


def test_the_fusion_settings_are_refused_where_they_cannot_apply_and_kept_out_of_old_identities():
    import dataclasses

    from solvers.base import TrainConfig
    from solvers.train_state import identity
    from test_gts_graphs import _model
    from toy_problems import toy_problems

    with pytest.raises(ValueError, match="graph_fusion must be one of none, inductor, got 'jit'"):
        TrainConfig(step="dense", graph_fusion="jit")
    with pytest.raises(ValueError, match="graph_fusion inductor fuses the shape-fixed steps' passes .* step rowwise "
                                         "has none to fuse"):
        TrainConfig(graph_fusion="inductor")
    problems = toy_problems()
    model, _ = _model(True, problems)
    dense = identity(dataclasses.replace(TrainConfig(), step="dense"), problems, [], model)
    assert "graph_fusion" not in dense["config"]  # states saved before the setting existed continue
    fused = identity(dataclasses.replace(TrainConfig(), step="dense", graph_fusion="inductor"), problems, [], model)
    assert fused["config"]["graph_fusion"] == "inductor" and fused != dense
