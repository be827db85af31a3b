"""The wave pass of the GTS decoder (solvers/gts_waves.py) against the row-wise one the trainer uses
(solvers/gts_teacher.py, itself checked against a node-by-node reference in test_gts_teacher.py): the same
log-probabilities and gradients in float64, with and without the repeated-value rule, on problems with chains
of merges, lone quantities, constants, repeated values and padding; and the plan's waves on hand-made trees."""
import random

import pytest
import torch

from solvers.gts import GTSConfig, GTSModel
from solvers.gts_teacher import repeated_value_leaves, teacher_forced_log_probs
from solvers.gts_waves import tree_wave_counts, wave_log_probs, wave_plan
from solvers.vocab import build_encoding
from test_gts_teacher import hand_problems

PLUS, TIMES, MINUS = 0, 1, 2  # operator ids below n_ops = 3; leaves are 3 + slot


def model_and_batch(any_equal_slot: bool, dropout: float = 0.0, seed: int = 5):
    problems = hand_problems()
    enc = build_encoding(problems)
    torch.manual_seed(seed)
    cfg = GTSConfig(embedding_size=12, hidden_size=16, dropout=dropout, any_equal_slot=any_equal_slot)
    return GTSModel(cfg, enc).double().train(), enc.batch(problems), problems


def pass_log_probs_and_grads(model, batch, pass_, target, mask,
                             classes) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """A teacher pass's (B, L) log-probabilities of ``target`` and the parameters' gradients of their negated sum."""
    model.zero_grad()
    logp = pass_(model.decoder, model.context(batch), target, mask, classes)
    (-logp.sum()).backward()
    return logp.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def log_probs_and_grads(model, batch, waves: bool, qty_class):
    pass_ = wave_log_probs if waves else teacher_forced_log_probs
    return pass_log_probs_and_grads(model, batch, pass_, batch.target, batch.target_mask, qty_class)


@pytest.mark.parametrize("any_equal_slot", [False, True])
def test_the_wave_pass_equals_the_row_wise_one_in_float64(any_equal_slot):
    model, batch, _ = model_and_batch(any_equal_slot)
    assert batch.has_repeated_values and (~batch.target_mask).any()  # the rule and padding are exercised
    qty_class = batch.qty_class if any_equal_slot else None
    rowwise, rowwise_grads = log_probs_and_grads(model, batch, False, qty_class)
    waves, wave_grads = log_probs_and_grads(model, batch, True, qty_class)
    assert torch.allclose(waves, rowwise, rtol=0, atol=1e-12)
    assert (waves[~batch.target_mask] == 0).all() and (waves[batch.target_mask] < 0).all()
    assert wave_grads.keys() == rowwise_grads.keys() and len(wave_grads) >= 20
    for name, grad in rowwise_grads.items():
        assert torch.allclose(wave_grads[name], grad, rtol=1e-10, atol=1e-12), name


def test_the_rule_changes_what_the_wave_pass_scores():
    # the rule is exercised: without it the same batch scores other tokens (a pass ignoring qty_class fails here)
    model, batch, _ = model_and_batch(True)
    ctx = model.context(batch)
    with torch.no_grad():
        plain = wave_log_probs(model.decoder, ctx, batch.target, batch.target_mask)
        rule = wave_log_probs(model.decoder, ctx, batch.target, batch.target_mask, batch.qty_class)
    assert not torch.equal(plain, rule)


def test_with_dropout_every_element_is_kept_independently_and_the_eval_pass_is_unchanged():
    model, batch, _ = model_and_batch(False, dropout=0.5)
    ctx = model.context(batch)
    torch.manual_seed(0)
    a = wave_log_probs(model.decoder, ctx, batch.target, batch.target_mask)
    b = wave_log_probs(model.decoder, ctx, batch.target, batch.target_mask)
    assert not torch.allclose(a, b)  # masks drawn anew each pass
    model.eval()
    with torch.no_grad():
        ctx = model.context(batch)
        assert torch.allclose(wave_log_probs(model.decoder, ctx, batch.target, batch.target_mask),
                              teacher_forced_log_probs(model.decoder, ctx, batch.target, batch.target_mask),
                              rtol=0, atol=1e-12)


def random_prefix(rng: random.Random, n_leaves: int, n_slots: int) -> list[int]:
    """A random binary tree with ``n_leaves`` leaves, in prefix order."""
    if n_leaves == 1:
        return [3 + rng.randrange(n_slots)]
    left = rng.randint(1, n_leaves - 1)
    return [rng.randrange(3)] + random_prefix(rng, left, n_slots) + random_prefix(rng, n_leaves - left, n_slots)


def random_targets(rng: random.Random, dec, batch, max_leaves: int):
    """(B, L) targets of random trees of 1 to ``max_leaves`` leaves over the batch's numbers, their mask, and value
    classes putting every quantity slot in one of two classes (repeated values everywhere)."""
    n_numbers = dec.n_constants + batch.qty_class.shape[1]
    B = batch.target.shape[0]
    targets = [random_prefix(rng, rng.randint(1, max_leaves), n_numbers) for _ in range(B)]
    targets = [[tok + dec.n_ops - 3 if tok >= 3 else tok for tok in ids] for ids in targets]
    L = max(map(len, targets))
    target = torch.tensor([ids + [0] * (L - len(ids)) for ids in targets])
    mask = torch.tensor([[t < len(ids) for t in range(L)] for ids in targets])
    qty_class = torch.tensor([[q % 2 for q in range(batch.qty_class.shape[1])] for _ in range(B)])
    return target, mask, qty_class


def test_on_random_trees_the_wave_pass_equals_the_row_wise_one():
    # deep and lopsided trees, repeated values everywhere: the plan's ordering of late merges and waves
    model, batch, problems = model_and_batch(True, seed=7)
    dec, rng = model.decoder, random.Random(11)
    target, mask, qty_class = random_targets(rng, dec, batch, 7)
    for classes in (None, qty_class):
        grads = [pass_log_probs_and_grads(model, batch, pass_, target, mask, classes)
                 for pass_ in (teacher_forced_log_probs, wave_log_probs)]
        assert torch.allclose(grads[0][0], grads[1][0], rtol=0, atol=1e-12)
        for g0, g1 in zip(grads[0][1].values(), grads[1][1].values()):
            assert torch.allclose(g0, g1, rtol=1e-10, atol=1e-12)


def test_the_plan_runs_a_wave_a_tree_level_and_merges_first_what_no_rule_waits_for():
    # "+ * 3 4 - 5 6" (depth 3) and "- 3 + 4 + 5 6" (a right spine, depth 4): 4 waves, not 7 positions
    targets = [[PLUS, TIMES, 3, 4, MINUS, 5, 6], [MINUS, 3, PLUS, 4, PLUS, 5, 6]]
    plan = wave_plan(targets, 3, 7, n_numbers=4)
    assert len(plan.waves) == 4 and plan.n_nodes == 14
    assert [w.n for w in plan.waves] == [2, 4, 6, 2]
    # wave 1: the left children "*" and "3" then the right children "-" and "+"
    assert plan.node_at[2:6].tolist() == [0 * 7 + 1, 1 * 7 + 1, 0 * 7 + 4, 1 * 7 + 2]
    assert plan.waves[1].n_left == 2
    # merges before the waves only, and only of subtrees something reads: "*" (its right sibling's goal reads
    # it); not "-", the roots, nor the second tree's right spine, which no goal reads. Operator rows: wave 0
    # "+" "-" (0, 1), wave 1 "*" then the right children "-" "+" (2, 3, 4), wave 2 the lower "+" (5)
    assert [(m.label_at.tolist(), m.left_at.tolist(), m.right_at.tolist()) for m in plan.merges] == [([2], [0], [1])]
    assert all(not w.merges and not w.choose.numel() for w in plan.waves)
    # the leaves read, rows b * 4 + slot: "3" "4" "5" of each tree ("6", a right spine's end, is read by nothing)
    assert plan.leaf_numbers.tolist() == [0, 1, 2, 4, 5, 6] and plan.n_subtrees == 7
    assert plan.waves[1].sibling_at.tolist() == [6, 3]  # "-" reads "*" merged, "+" reads "3"
    assert plan.waves[2].sibling_at.tolist() == [0, 2, 4]
    assert plan.waves[2].right_goal_at.tolist() == [2, 3, 4] and plan.waves[3].left_goal_at.tolist() == [5]


def test_a_leaf_that_waits_for_its_goal_delays_its_right_hand_relatives():
    # "+ - 3 4 5": with "4" a repeated value, its slot is chosen at wave 2; the subtree "- 3 4" is merged after
    # wave 2, and "5", the right child of "+", comes at wave 3 instead of wave 1
    targets = [[PLUS, MINUS, 3, 4, 5]]
    free = wave_plan(targets, 3, 5, n_numbers=3)
    assert [w.n for w in free.waves] == [1, 2, 2]
    waiting = wave_plan(targets, 3, 5, n_numbers=3, waits=[[False, False, False, True, False]])
    assert [w.n for w in waiting.waves] == [1, 1, 2, 1]
    assert waiting.waves[2].choose.tolist() == [1] and waiting.waves[2].choose_at.tolist() == [3]
    assert [len(m.label_at) for m in waiting.waves[2].merges] == [1]  # "-", after its leaf was chosen
    assert not waiting.merges and not waiting.waves[3].merges  # "+" waits for "-"'s subtree: merged after wave 3
    assert waiting.node_at[-1].item() == 4


def test_problems_without_a_target_token_are_left_out_of_every_wave():
    targets = [[PLUS, 3, 4], [], [5]]
    plan = wave_plan(targets, 3, 3, n_numbers=3)
    assert plan.waves[0].problem.tolist() == [0, 2]
    assert plan.node_problem.tolist() == [0, 2, 0, 0]


def test_a_target_that_is_not_a_whole_tree_is_refused_by_its_place_in_the_batch():
    with pytest.raises(ValueError, match=r"target 1 of the batch .*operator at position 2 lacks a child"):
        wave_plan([[PLUS, 3, 4], [PLUS, 3, TIMES, 4]], 3, 4, n_numbers=3)


def test_each_rows_wave_count_is_the_waves_its_pass_alone_takes():
    # TrainConfig.bucketing "steps" sorts by these: each row's count is the length of its own plan, with the
    # repeated-value rule's waiting leaves (which delay their right-hand relatives) and without
    model, batch, _ = model_and_batch(True, seed=7)
    dec = model.decoder
    target, mask, qty_class = random_targets(random.Random(3), dec, batch, 7)
    n_numbers = dec.n_constants + qty_class.shape[1]
    lengths = mask.sum(1).tolist()
    rows = [ids[:n] for ids, n in zip(target.tolist(), lengths)]
    waits = repeated_value_leaves(dec, target, mask, qty_class)[0].tolist()
    free, ruled = tree_wave_counts(dec, target, mask), tree_wave_counts(dec, target, mask, qty_class)
    for b, ids in enumerate(rows):
        assert free[b] == len(wave_plan([ids], dec.n_ops, target.shape[1], n_numbers).waves)
        assert ruled[b] == len(wave_plan([ids], dec.n_ops, target.shape[1], n_numbers, [waits[b]]).waves)
    assert all(r >= f for r, f in zip(ruled, free)) and ruled != free  # the rule delays some rows here
    assert max(ruled) == len(wave_plan(rows, dec.n_ops, target.shape[1], n_numbers, waits).waves)


def test_a_model_says_its_decoder_steps_a_problem_by_its_teacher_pass():
    model, batch, problems = model_and_batch(True)
    enc = build_encoding(problems)
    qty_class = batch.qty_class if batch.has_repeated_values else None
    assert model.decoder_steps(enc, problems) == tree_wave_counts(model.decoder, batch.target, batch.target_mask,
                                                                  qty_class)
    assert model.decoder_steps(enc, problems[:2]) + model.decoder_steps(enc, problems[2:]) == \
        model.decoder_steps(enc, problems)  # a problem's count does not depend on its batch
    model.decoder.teacher_pass = "positions"  # a step a prefix position: the expression's length
    assert model.decoder_steps(enc, problems) == batch.target_mask.sum(1).tolist()
