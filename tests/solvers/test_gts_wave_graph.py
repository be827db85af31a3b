"""The padded wave pass (solvers/gts_wave_graph.py), the one graphed steps capture with teacher_pass "waves",
against the row-wise pass (solvers/gts_teacher.py): the same log-probabilities and gradients in float64, with
and without the repeated-value rule, on hand-made problems, padded batches and random trees; its plan on
hand-made trees; and, on the meta device, no value read back to the host."""
import random

import pytest
import torch

from solvers.gts_teacher import teacher_forced_log_probs
from solvers.gts_wave_graph import PRE, padded_wave_log_probs, padded_wave_plan, plan_of_batch_targets
from solvers.gts_plan import _plan_lists
from solvers.gts_waves import _tree_waves
from test_gts_dense import on_meta
from test_gts_waves import (MINUS, PLUS, TIMES, model_and_batch, pass_log_probs_and_grads,
                            random_targets)


def run_pass(model, batch, qty_class, padded: bool, plan=None):
    model.zero_grad()
    ctx = model.context(batch)
    if padded:
        logp = padded_wave_log_probs(model.decoder, ctx, batch.target, batch.target_mask, qty_class, plan)
    else:
        logp = teacher_forced_log_probs(model.decoder, ctx, batch.target, batch.target_mask, qty_class)
    (-logp.sum()).backward()
    return logp.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def assert_same(a, b):
    (logp_a, grads_a), (logp_b, grads_b) = a, b
    assert torch.allclose(logp_a, logp_b, rtol=0, atol=1e-12)
    assert grads_a.keys() == grads_b.keys() and len(grads_a) >= 20
    for name, grad in grads_a.items():
        assert torch.allclose(grads_b[name], grad, rtol=1e-10, atol=1e-12), name


@pytest.mark.parametrize("any_equal_slot", [False, True])
def test_the_padded_wave_pass_equals_the_row_wise_one_in_float64(any_equal_slot):
    model, batch, _ = model_and_batch(any_equal_slot)
    assert batch.has_repeated_values and (~batch.target_mask).any()  # the rule and padding are exercised
    qty_class = batch.qty_class if any_equal_slot else None
    plan = plan_of_batch_targets(model.decoder, batch.target, batch.target_mask, qty_class,
                                 model.decoder.n_constants + batch.qty_positions.shape[1])
    assert plan.rule == any_equal_slot
    rowwise = run_pass(model, batch, qty_class, padded=False)
    waves = run_pass(model, batch, qty_class, padded=True, plan=plan)
    assert_same(rowwise, waves)
    assert (waves[0][~batch.target_mask] == 0).all() and (waves[0][batch.target_mask] < 0).all()


def test_a_batch_padded_to_larger_shapes_gives_the_same_losses_and_gradients():
    # tokens, positions, slots and rows padded, as a graphed step pads a batch to its rounded shape
    model, batch, _ = model_and_batch(True)
    B, T = batch.tokens.shape
    L, Q = batch.target.shape[1], batch.qty_positions.shape[1]
    padded = batch.padded(T + 5, L + 3, Q + 2, B + 4)
    plan = plan_of_batch_targets(model.decoder, padded.target, padded.target_mask, padded.qty_class,
                                 model.decoder.n_constants + Q + 2)
    assert plan.node_problem.shape[0] == B + 4 + (plan.waves - 1) * plan.is_right.shape[1]
    logp, grads = run_pass(model, padded, padded.qty_class, padded=True, plan=plan)
    assert (logp[B:] == 0).all() and (logp[:, L:] == 0).all()
    assert_same(run_pass(model, batch, batch.qty_class, padded=False), (logp[:B, :L], grads))


def test_on_random_trees_the_padded_wave_pass_equals_the_row_wise_one():
    # deep and lopsided trees with repeated values everywhere: chains of merges after waves, late readers
    model, batch, _ = model_and_batch(True, seed=7)
    dec, rng = model.decoder, random.Random(11)
    for _ in range(3):
        target, mask, qty_class = random_targets(rng, dec, batch, 8)
        for classes in (None, qty_class):
            assert_same(*(pass_log_probs_and_grads(model, batch, pass_, target, mask, classes)
                          for pass_ in (teacher_forced_log_probs, padded_wave_log_probs)))


def test_a_chain_of_merges_waiting_for_a_chosen_leaf_runs_one_level_a_wave():
    # "+ - * 3 4 5 6" with "4" a repeated value: chosen at wave 3; "*" is merged after wave 3, "-" (above it) after
    # wave 4, so "5" (reading "*") comes at wave 4 and "6" (reading "-") at wave 5; the eager wave plan merges
    # both after wave 3 and puts "6" at wave 4
    ids = [PLUS, MINUS, TIMES, 3, 4, 5, 6]
    parent, is_right, _, _ = _plan_lists([ids], 3, len(ids))
    waits = [False, False, False, False, True, False, False]
    wave, ready, level, _, read = _tree_waves(ids, 3, parent[0], is_right[0], waits, one_level_a_wave=True)
    assert wave == [0, 1, 2, 3, 3, 4, 5]
    assert ready[4] == 3 and ready[2] == 3 and ready[1] == 4 and ready[3] == PRE and ready[5] == PRE
    assert read == [False, True, True, True, True, True, False]
    plan = padded_wave_plan([ids], 3, len(ids), n_numbers=4, waits=[waits], row_multiple=2, merge_multiple=1)
    assert plan.rule and plan.key() == (6, 2, 0, 2, 1, 1)  # W 6, R 2; no merge before the waves; A 1
    # node rows: wave 0 row 0, then two rows a wave; subtree rows: F = 1 * (7 // 2 + 1) = 4 leaves known in
    # advance ("3", "5"), then per wave its chosen leaves (1 or 2 rows) and its merge (1 row)
    assert plan.node_at.tolist() == [0, 1, 0, 2, 0, 3, 4, 5, 0, 6, 0]
    assert plan.node_valid.tolist() == [1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0]
    assert plan.leaf_numbers.tolist() == [0, 2, 0, 0]  # "3" (slot 0) and "5" (slot 2)
    base = [4, 6, 9, 12, 15, 18]  # each wave's first subtree row: 4 + 2 = 6 after wave 0, then + 3 a wave
    assert plan.after_merges[3].tolist() == [[3], [0], [base[3] + 1]]  # "*" after wave 3: "3" and the chosen "4"
    assert plan.after_merges[4].tolist() == [[1], [base[3] + 2], [1]]  # "-": "*" merged after wave 3, and "5"
    assert plan.after_merges[[0, 1, 2, 5]].sum() == 0  # padding: row 0
    assert plan.sibling_row.tolist()[3] == [base[3] + 2, 0]  # wave 4 ("5") reads "*"
    assert plan.sibling_row.tolist()[4] == [base[4] + 2, 0]  # wave 5 ("6") reads "-"
    assert plan.waits.tolist() == [False] * 6 + [True] + [False] * 4


def test_without_waiting_leaves_every_merge_runs_before_the_waves_in_levels():
    # "+ * 3 4 - 5 6" and "- 3 + 4 + 5 6": "*" is read by its right sibling; the right spine is read by nothing
    targets = [[PLUS, TIMES, 3, 4, MINUS, 5, 6], [MINUS, 3, PLUS, 4, PLUS, 5, 6]]
    plan = padded_wave_plan(targets, 3, 7, n_numbers=4, row_multiple=4)
    assert not plan.rule and plan.waits.numel() == 0 and plan.after_merges.shape == (0, 3, 0)
    assert plan.key() == (4, 8, 1, 4, 0, 0)  # waves of 4, 6 and 2 rows: R 8, the widest padded to a multiple of 4
    # node rows: the roots 0, 1; wave 1 rows 2..; the "*" of problem 0 is row 2
    assert plan.pre_merges.tolist() == [[[2, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]]]
    assert plan.leaf_numbers[:6].tolist() == [0, 1, 2, 4, 5, 6]
    # geometric rows: the widest wave (6 rows) and merge level (1) to 4 times a power of two, the rest unchanged
    geometric = padded_wave_plan(targets, 3, 7, n_numbers=4, row_multiple=4, geometric_rows=True)
    assert geometric.key() == (4, 8, 1, 4, 0, 0)
    assert padded_wave_plan(targets, 3, 7, n_numbers=4, row_multiple=3, geometric_rows=True).key() == (4, 6, 1, 3, 0, 0)
    assert padded_wave_plan(targets, 3, 7, n_numbers=4, row_multiple=3).key() == (4, 6, 1, 3, 0, 0)
    assert padded_wave_plan(targets, 3, 7, n_numbers=4, row_multiple=5).key()[1] == 10
    assert padded_wave_plan(targets, 3, 7, n_numbers=4, row_multiple=5, geometric_rows=True).key()[1] == 10
    assert padded_wave_plan(targets, 3, 7, n_numbers=4, row_multiple=1, geometric_rows=True).key()[1:4:2] == (8, 1)
    assert padded_wave_plan(targets, 3, 7, n_numbers=4, row_multiple=1).key()[1:4:2] == (6, 1)


def test_the_pass_given_its_plan_reads_nothing_back_from_the_device():
    """On the meta device tensors have shapes and no values: a .tolist(), .item() or bool() of one raises,
    as a host read inside a CUDA graph capture would. Forward and backward, dropout on, the rule on."""
    model, batch, _ = model_and_batch(True, dropout=0.5)
    plan = plan_of_batch_targets(model.decoder, batch.target, batch.target_mask, batch.qty_class,
                                 model.decoder.n_constants + batch.qty_positions.shape[1])
    assert plan.rule and plan.after_merges.shape[2] > 0
    decoder, ctx = on_meta(model, batch)
    meta = torch.device("meta")
    logp = padded_wave_log_probs(decoder, ctx, batch.target.to(meta), batch.target_mask.to(meta),
                                 batch.qty_class.to(meta), plan.to(meta))
    assert logp.shape == batch.target.shape and logp.device.type == "meta"
    logp.sum().backward()
    assert decoder.merge.weight.grad is not None and ctx.num_proj.grad.shape == ctx.num_proj.shape


def test_with_dropout_masks_are_new_each_pass_and_the_eval_pass_is_unchanged():
    model, batch, _ = model_and_batch(True, dropout=0.5)
    dec = model.decoder
    ctx = model.context(batch)
    torch.manual_seed(0)
    a = padded_wave_log_probs(dec, ctx, batch.target, batch.target_mask, batch.qty_class)
    b = padded_wave_log_probs(dec, ctx, batch.target, batch.target_mask, batch.qty_class)
    assert not torch.allclose(a, b)
    model.eval()
    with torch.no_grad():
        ctx = model.context(batch)
        assert torch.allclose(padded_wave_log_probs(dec, ctx, batch.target, batch.target_mask, batch.qty_class),
                              teacher_forced_log_probs(dec, ctx, batch.target, batch.target_mask, batch.qty_class),
                              rtol=0, atol=1e-12)


def test_a_target_that_is_not_a_whole_tree_is_refused_by_its_place_in_the_batch():
    with pytest.raises(ValueError, match=r"target 1 of the batch .*operator at position 2 lacks a child"):
        padded_wave_plan([[PLUS, 3, 4], [PLUS, 3, TIMES, 4]], 3, 4, n_numbers=3)


def plain_and_default(model, batch, target, mask, classes):
    def pass_(plain):
        def run(dec, ctx, target, mask, classes):
            return padded_wave_log_probs(dec, ctx, target, mask, classes, plain=plain)
        torch.manual_seed(0)  # the same dropout masks both ways, the encoder's and the pass's
        return pass_log_probs_and_grads(model, batch, run, target, mask, classes)
    return pass_(True), pass_(False)


@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_the_plain_pass_equals_the_hand_written_one(dropout):
    # plain autograd (the decoder's layers, PlainStore) against StepStore and DeferredLinears: the same values
    model, batch, _ = model_and_batch(True, seed=7, dropout=dropout)
    rng = random.Random(5)
    for _ in range(2):
        target, mask, qty_class = random_targets(rng, model.decoder, batch, 8)
        for classes in (None, qty_class):
            assert_same(*plain_and_default(model, batch, target, mask, classes))


def test_the_plain_pass_traces_as_one_graph_and_gives_the_same_values():
    # what bench/pass_compile.py compiles: fullgraph refuses a graph break; aot_eager runs AOTAutograd's forward
    # and backward graphs without TorchInductor's code generation (seconds, not minutes, on a CPU)
    model, batch, _ = model_and_batch(True)
    plan = plan_of_batch_targets(model.decoder, batch.target, batch.target_mask, batch.qty_class,
                                 model.decoder.n_constants + batch.qty_positions.shape[1])
    torch._dynamo.reset()
    compiled = torch.compile(padded_wave_log_probs, fullgraph=True, backend="aot_eager")

    def run(dec, ctx, target, mask, classes):
        return compiled(dec, ctx, target, mask, classes, plan, plain=True)
    got = pass_log_probs_and_grads(model, batch, run, batch.target, batch.target_mask, batch.qty_class)
    assert_same(run_pass(model, batch, batch.qty_class, padded=True, plan=plan), got)
