"""The shape-fixed teacher-forced pass (solvers/gts_dense.py) against the row-wise one the trainer uses
(solvers/gts_teacher.py): the same log-probabilities and gradients in float64, with and without the
repeated-value rule, on problems with chains of merges, lone quantities, constants and padding; and,
given its plan, a pass that reads nothing back from the device (traced with fake tensors, where any read
of a value fails), the condition for capturing it as a CUDA graph."""
import pytest
import torch

from solvers.gts import GTSConfig, GTSModel
from solvers.gts_decoder import DecoderContext
from solvers.gts_dense import dense_log_probs, dense_plan, plan_of_targets
from solvers.vocab import build_encoding
from test_gts_teacher import hand_problems


def model_and_batch(any_equal_slot: bool, dropout: float = 0.0):
    problems = hand_problems()
    enc = build_encoding(problems)
    torch.manual_seed(5)
    cfg = GTSConfig(embedding_size=12, hidden_size=16, dropout=dropout, any_equal_slot=any_equal_slot)
    return GTSModel(cfg, enc).double().train(), enc.batch(problems)


def log_probs_and_grads(model, batch, dense: bool, qty_class):
    model.zero_grad()
    ctx = model.context(batch)
    if dense:
        logp = dense_log_probs(model.decoder, ctx, batch.target, batch.target_mask, qty_class)
    else:
        logp = model.decoder.token_log_probs(ctx, batch.target, batch.target_mask, qty_class)
    (-logp.sum()).backward()
    return logp.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("any_equal_slot", [False, True])
def test_the_shape_fixed_pass_equals_the_row_wise_one_in_float64(any_equal_slot):
    model, batch = model_and_batch(any_equal_slot)
    assert batch.has_repeated_values and (~batch.target_mask).any()  # the rule and padding are exercised
    qty_class = batch.qty_class if any_equal_slot else None
    rowwise, rowwise_grads = log_probs_and_grads(model, batch, False, qty_class)
    dense, dense_grads = log_probs_and_grads(model, batch, True, qty_class)
    assert torch.allclose(dense, rowwise, rtol=0, atol=1e-12)
    assert (dense[~batch.target_mask] == 0).all()
    assert dense_grads.keys() == rowwise_grads.keys()
    for name, grad in rowwise_grads.items():
        assert torch.allclose(dense_grads[name], grad, rtol=1e-10, atol=1e-12), name


def test_the_plan_merges_bottom_up_the_operators_a_leaf_closes():
    # + * 3 4 - 5 2: "2" (step 6) closes "-" (step 4; left child "5" done at step 5) and then "+" (step 0;
    # left child "* 3 4" done at step 3); "4" (step 3) closes "*" (step 1, left child done at step 2)
    n_ops = 4  # ids below are operators
    plan = dense_plan([[0, 2, 10, 11, 1, 12, 13]], n_ops, 8)
    assert plan.levels == 2
    assert plan.parent[:, 0].tolist() == [0, 0, 1, 1, 0, 4, 4, 0]
    assert plan.is_right[:, 0].tolist() == [False, False, False, True, True, False, True, False]
    assert plan.left_step[:, 0].tolist() == [0, 0, 0, 2, 3, 0, 5, 0]
    assert plan.merge_valid[6, :, 0].tolist() == [True, True] and plan.merge_valid[3, :, 0].tolist() == [True, False]
    assert plan.merge_pos[6, :, 0].tolist() == [4, 0] and plan.merge_left[6, :, 0].tolist() == [5, 3]
    assert plan.merge_pos[3, 0, 0] == 1 and plan.merge_left[3, 0, 0] == 2
    assert not plan.merge_valid[7].any()  # padding merges nothing
    # indices are rows t * B + b of all steps' rows: the second of two problems reads its own rows
    two = dense_plan([[0, 10, 11], [0, 2, 10, 11, 12]], n_ops, 5)
    assert two.parent[:, 1].tolist() == [1, 1, 3, 3, 1] and two.left_step[:, 1].tolist() == [1, 1, 1, 5, 7]
    assert two.levels == 1  # "+ * a b c": "b" closes "*", "c" closes "+", one operator each
    assert two.merge_left[3, 0, 1] == 5 and two.merge_left[4, 0, 1] == 7 and two.merge_valid[3:, 0, 1].all()
    assert two.merge_left[2, 0, 0] == 2 and two.merge_valid[:, 0, 0].tolist() == [False, False, True, False, False]


def on_meta(model, batch):
    """The model's decoder and the batch's context moved to the meta device (shapes, no values), the number
    scorer's input asking for a gradient."""
    with torch.no_grad():
        ctx = model.context(batch)
    meta = torch.device("meta")
    ctx = DecoderContext(*(t.to(meta) for t in ctx._fields()))
    ctx.num_proj.requires_grad_(True)
    return model.decoder.to(meta), ctx


def test_given_its_plan_the_pass_reads_nothing_back_from_the_device():
    """On the meta device tensors have shapes and no values: a .tolist(), .item() or bool() of one raises,
    as a host read inside a CUDA graph capture would. Forward and backward, dropout on, the rule on."""
    model, batch = model_and_batch(True, dropout=0.5)
    plan = plan_of_targets(batch.target, batch.target_mask, model.decoder.n_ops)
    decoder, ctx = on_meta(model, batch)
    meta = torch.device("meta")
    logp = dense_log_probs(decoder, ctx, batch.target.to(meta), batch.target_mask.to(meta), batch.qty_class.to(meta),
                           plan.to(meta))
    assert logp.shape == batch.target.shape and logp.device.type == "meta"
    logp.sum().backward()
    assert decoder.goal_left.weight.grad is not None and ctx.num_proj.grad.shape == ctx.num_proj.shape
    with pytest.raises(Exception):  # the check itself: a host read of a meta tensor does raise
        logp.sum().item()


def test_a_batch_padded_to_larger_shapes_gives_the_same_losses_and_gradients():
    """Tokens, target positions, quantity slots, rows and merge levels padded (the shapes a CUDA graph per
    rounded shape needs): the real rows' log-probabilities and every gradient are those of the batch itself."""
    model, batch = model_and_batch(True)
    B, T = batch.tokens.shape
    L, Q = batch.target.shape[1], batch.qty_positions.shape[1]

    def run(b, levels=None):
        model.zero_grad()
        plan = (plan_of_targets(b.target, b.target_mask, model.decoder.n_ops) if levels is None else
                dense_plan([ids[:n] for ids, n in zip(b.target.tolist(), b.target_mask.sum(1).tolist())],
                           model.decoder.n_ops, b.target.shape[1], levels))
        logp = dense_log_probs(model.decoder, model.context(b), b.target, b.target_mask, b.qty_class, plan)
        (-logp.sum()).backward()
        return logp.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    logp, grads = run(batch)
    padded = batch.padded(T + 5, L + 3, Q + 2, B + 4)
    assert padded.tokens.shape == (B + 4, T + 5) and padded.target.shape == (B + 4, L + 3)
    assert not padded.target_mask[B:].any() and (padded.lengths[B:] == 1).all() and not padded.qty_mask[B:].any()
    plogp, pgrads = run(padded, levels=4)
    assert torch.allclose(plogp[:B, :L], logp, rtol=0, atol=1e-12) and (plogp[B:] == 0).all()
    for name, grad in grads.items():
        assert torch.allclose(pgrads[name], grad, rtol=1e-10, atol=1e-12), name
    with pytest.raises(ValueError, match="cannot pad"):
        batch.padded(T - 1, L, Q, B)
    with pytest.raises(ValueError, match="merge levels"):
        dense_plan([[0, 2, 10, 11, 1, 12, 13]], 4, 7, levels=1)
