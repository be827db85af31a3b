"""The batched teacher-forced pass of the GTS decoder (solvers/gts_teacher.py) against a plain
reference: each problem walked alone, node by node, with Python stacks as the public GTS does, through
the decoder's building blocks (the ones beam search uses). Loss and every gradient must agree in
float64, with and without the repeated-value rule. Tiny sizes keep it to seconds."""
import pytest
import torch

from mwp.problem import build_problem
from solvers.gts import GTSConfig, GTSModel
from solvers.gts_teacher import PassDropout
from solvers.vocab import build_encoding
from toy_problems import toy_problems

HAND = [  # nested right subtrees (chains of merges), a lone quantity, a constant, repeated values
    ("h1", "Mix 3 and 4 then times 5 minus 2 .", "x=(3+4)*(5-2)", 21),
    ("h2", "Use 8 and 9 and 7 and 11 .", "x=8/(9-(7-11))", "0.6153846153846154"),
    ("h3", "Take 10 and 2 and 6 and 1 .", "x=10-2*(6+1)", -4),
    ("h4", "She has 6 .", "x=6", 6),
    ("h5", "Tom has 4 red and 4 blue and 6 green .", "x=4*6", 24),
    ("h6", "Add 5 to 7 and then 5 more and 2 .", "x=(5+7)-5*2", 2),
    ("h7", "Half of 9 is what ?", "x=9/2", 4.5),
]


def hand_problems():
    return [build_problem(pid, text, eq, ans, source="toy", language="en", check_answer=False)
            for pid, text, eq, ans in HAND] + toy_problems()


def reference_log_probs(dec, ctx, ids: list[int], qty_class: list[int] | None) -> torch.Tensor:
    """Log-probabilities of one problem's prefix ids (ctx: its one row), walked node by node: a stack
    of pending goals (left children from their parent's left goal, right children from their
    parent's right goal and the finished left sibling on top of the subtree stack) and a stack of
    operator labels and finished subtrees, merged whenever a leaf completes a right child."""
    first = dec.n_ops + dec.n_constants
    pending = [("left", ctx.problem)]
    stack: list[tuple[str, torch.Tensor]] = []  # ("op", label) or ("sub", finished subtree)
    out = []
    for tok in ids:
        side, vec = pending.pop()
        goal = dec.left_goal(vec) if side == "left" else dec.right_goal(stack[-1][1], vec)
        logits, context = dec.scores(ctx, goal)
        if qty_class is not None and tok >= first:  # the equal-valued slot scored highest
            same = [q for q, c in enumerate(qty_class) if c == qty_class[tok - first]]
            tok = first + max(same, key=lambda q: logits[0, first + q].item())
        out.append(logits.log_softmax(-1)[0, tok])
        if tok < dec.n_ops:
            left, right, label = dec.child_goals(goal, context, torch.tensor([tok]))
            pending += [("right", right), ("left", left)]
            stack.append(("op", label))
            continue
        cur = dec.leaf_embedding(ctx, torch.tensor([tok]))
        while stack and stack[-1][0] == "sub":
            _, left_sub = stack.pop()
            _, label = stack.pop()
            cur = dec.merge_subtrees(label, left_sub, cur)
        stack.append(("sub", cur))
    assert not pending
    return torch.stack(out)


@pytest.mark.parametrize("any_equal_slot", [False, True])
def test_batched_teacher_forcing_equals_the_node_by_node_reference_in_float64(any_equal_slot):
    problems = hand_problems()
    enc = build_encoding(problems)
    torch.manual_seed(3)
    cfg = GTSConfig(embedding_size=12, hidden_size=16, dropout=0.0, any_equal_slot=any_equal_slot)
    model = GTSModel(cfg, enc).double().train()  # train mode: the deferred weight gradients run
    batch = enc.batch(problems)
    assert batch.has_repeated_values

    model.zero_grad()
    loss = model.loss(batch)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    model.zero_grad()
    ctx = model.context(batch)
    terms = []
    for b, p in enumerate(problems):
        ids = batch.target[b, : len(p.prefix())].tolist()
        classes = batch.qty_class[b].tolist() if any_equal_slot else None
        terms.append(reference_log_probs(model.decoder, ctx.select(torch.tensor([b])), ids, classes))
    reference = -torch.cat(terms).sum() / batch.target_mask.sum()
    reference.backward()

    assert loss.item() == pytest.approx(reference.item(), rel=1e-12)
    assert len(grads) >= 20
    for name, p in model.named_parameters():
        if name in grads:
            assert torch.allclose(grads[name], p.grad, rtol=1e-9, atol=1e-12), (name, (grads[name] - p.grad).abs().max())


def test_pass_dropout_draws_a_mask_per_site_and_hands_out_its_rows_in_turn():
    torch.manual_seed(0)
    drop = PassDropout(0.5, rows=6, device=torch.device("cpu"), dtype=torch.float64)
    ones = torch.ones(4, 8, dtype=torch.float64)
    a, b = drop("attend", ones[:4]), drop("attend", ones[:2])  # rows 0-3, then 4-5 of one mask
    mask = drop.masks["attend"]
    assert mask.shape == (6, 8) and set(mask.unique().tolist()) <= {0.0, 2.0}
    assert torch.equal(a, mask[:4]) and torch.equal(b, mask[4:])
    assert torch.equal(drop.at("attend", 1, ones[:3]), mask[1:4])  # explicit rows: the same draws
    assert torch.equal(drop("leaf", ones[:2]), drop.masks["leaf"][:2])  # another site, its own mask
    with pytest.raises(ValueError, match="beyond"):
        drop("attend", ones[:1])
    big = PassDropout(0.5, rows=400, device=torch.device("cpu"), dtype=torch.float32)
    kept = (big("goal", torch.ones(400, 100)) > 0).float().mean().item()
    assert 0.47 < kept < 0.53
    assert torch.equal(PassDropout(0.0, rows=1, device=torch.device("cpu"), dtype=torch.float32)("x", ones), ones)
