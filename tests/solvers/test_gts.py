"""GTS: tree plans checked by hand, batching equals one-at-a-time, overfitting, constrained beams,
save/load. Tiny configurations (embedding 32, hidden 32) keep each test to seconds."""
import dataclasses
import pytest
import torch
from torch.overrides import TorchFunctionMode

from mwp.expr import OPERATORS, is_valid_prefix
from mwp.problem import build_problem
from solvers.base import TrainConfig
from solvers.gts import GTSConfig, GTSModel, GTSSolver
from solvers.gts_beam import beam_search
from solvers.gts_decoder import TEACHER_PASSES
from solvers.gts_plan import step_rows, tree_plan
from solvers.gts_teacher import tree_loss
from solvers.registry import load_solver
from solvers.trainer import expressible, predict
from solvers.vocab import build_encoding
from test_gts_teacher import hand_problems
from toy_problems import toy_problems

TINY = GTSConfig(embedding_size=32, hidden_size=32, dropout=0.0)
FAST = TrainConfig(epochs=40, batch_size=8, lr=0.02, lr_halving_epochs=100, eval_every=10, progress=False, seed=0)

# deeper trees: right subtrees that are operators, so leaves trigger chains of merges
NESTED = [
    ("n1", "Mix 3 and 4 then times 5 minus 2 .", "x=(3+4)*(5-2)", 21),
    ("n2", "Take 10 and 2 and 6 and 1 .", "x=10-2*(6+1)", -4),
    ("n3", "Use 8 and 9 and 7 and 11 .", "x=8/(9-(7-11))", "0.6153846153846154"),
    ("n4", "Add 12 to 13 .", "x=12+13", 25),
]


def nested_problems():
    return [build_problem(pid, text, eq, ans, source="toy", language="en", check_answer=False) for pid, text, eq, ans in NESTED]


def test_tree_plan_by_hand():
    # prefix "* + N0 N1 - N2 N3" with operators < 5: '*'=2, '+'=0, '-'=1, slots 5..8
    plan = tree_plan([[2, 0, 5, 6, 1, 7, 8]], n_ops=5, length=7)
    assert plan.parent[0].tolist() == [0, 0, 1, 1, 0, 4, 4]
    assert plan.is_right[0].tolist() == [False, False, False, True, True, False, True]
    # '-' (step 4) is the right child of '*': its left sibling '+' was completed at step 3
    assert plan.left_step[0, 4].item() == 3 and plan.left_step[0, 3].item() == 2
    assert plan.merges_at == [0, 0, 0, 1, 0, 0, 2]
    # N3 closes '-' (left child N2 finished at step 5), then '*' (left child '+' finished at step 3)
    assert plan.merge_parent[0, 6].tolist() == [4, 0]
    assert plan.merge_left_step[0, 6].tolist() == [5, 3]
    assert plan.merge_valid[0, 3].tolist() == [True, False]


def test_step_rows_by_hand():
    # the same tree; operator outputs are stored compactly: '*' (step 0) -> 0, '+' (step 1) -> 1, '-' (step 4) -> 2
    rows = step_rows([[2, 0, 5, 6, 1, 7, 8]], n_ops=5, length=7, active=[1] * 7)
    listed = lambda xs: [x.tolist() for x in xs]  # noqa: E731
    assert listed(rows.ops) == [[0], [0], [], [], [0], [], []]  # child goals only where the token is an operator
    assert rows.right == [[], [], [], [0], [0], [], [0]]  # N1, '-', N3 are right children
    assert rows.left == [[0], [0], [0], [], [], [0], []]
    assert listed(rows.left_goal_at) == [[], [0], [1], [], [], [2], []]  # '+' <- '*', N0 <- '+', N2 <- '-'
    assert listed(rows.right_goal_at) == [[], [], [], [1], [0], [], [2]]
    assert listed(rows.sibling_at) == [[], [], [], [2], [3], [], [5]]  # N0 done at 2, '+' at 3, N2 at 5
    # N1 closes '+' (left child N0 at step 2); N3 closes '-' (left N2 at 5) and then '*' (left '+' at 3)
    assert [listed(k) for k in rows.merge_label_at] == [[], [], [], [[1]], [], [], [[2], [0]]]
    assert [listed(k) for k in rows.merge_left_at] == [[], [], [], [[2]], [], [], [[5], [3]]]


def test_batched_teacher_forcing_equals_one_at_a_time():
    problems = toy_problems() + nested_problems()
    enc = build_encoding(problems)
    torch.manual_seed(0)
    model = GTSModel(GTSConfig(embedding_size=16, hidden_size=24, dropout=0.3), enc).eval()
    with torch.no_grad():
        batched = model.token_log_probs(enc.batch(problems))  # (B, L)
        batch_loss = model.loss(enc.batch(problems)).item()
        total_tokens = sum(len(p.prefix()) for p in problems)
        summed = 0.0
        for b, p in enumerate(problems):
            single = model.token_log_probs(enc.batch([p]))[0]
            n = len(p.prefix())
            assert torch.allclose(batched[b, :n], single[:n], atol=1e-5), p.id
            assert torch.all(batched[b, n:] == 0)
            summed += -single.sum().item()
    assert batch_loss == pytest.approx(summed / total_tokens, rel=1e-5)


def test_batched_gradients_equal_the_sum_of_one_at_a_time_gradients_in_float64():
    """The batched teacher-forced pass (sorted rows, per-step row sets, running concatenations,
    deferred weight gradients) computes the same function as decoding each problem alone: in float64
    the gradient of the batch's summed log-likelihood is the sum of the single problems' gradients."""
    problems = toy_problems() + nested_problems()
    enc = build_encoding(problems)
    torch.manual_seed(0)
    model = GTSModel(GTSConfig(embedding_size=16, hidden_size=24, dropout=0.0), enc).double().train()

    def grads_of(batch_problems):
        model.zero_grad()
        model.token_log_probs(enc.batch(batch_problems)).sum().backward()
        return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    batched = grads_of(problems)
    singles = [grads_of([p]) for p in problems]
    assert len(batched) >= 20
    for name, grad in batched.items():
        summed = sum(g[name] for g in singles if name in g)
        assert torch.allclose(grad, summed, rtol=1e-9, atol=1e-11), (name, (grad - summed).abs().max().item())


REPEATED = [
    ("r1", "Tom has 4 red and 4 blue and 6 green .", "x=4*6", 24),
    ("r2", "Add 5 to 7 and then 5 more and 2 .", "x=(5+7)-5*2", 2),
    ("r3", "Take 3 from 9 .", "x=9-3", 6),
]


def test_repeated_values_share_a_slot_class():
    problems = [build_problem(pid, text, eq, ans, source="toy", language="en", check_answer=False) for pid, text, eq, ans in REPEATED]
    batch = build_encoding(problems).batch(problems)
    assert batch.qty_class.tolist() == [[0, 0, 2, -1], [0, 1, 0, 3], [0, 1, -1, -1]]


def test_a_repeated_value_trains_on_its_best_scored_slot():
    """With qty_class, each leaf whose value occurs twice takes the equal-valued slot scored highest
    at its step (greedy, left to right), and the later steps go on from that choice: the result must
    equal plain teacher forcing of the expression with those slots written in."""
    problems = [build_problem(pid, text, eq, ans, source="toy", language="en", check_answer=False) for pid, text, eq, ans in REPEATED]
    enc = build_encoding(problems)
    first = enc.output.slot_start
    changed = 0
    for seed in range(3):
        torch.manual_seed(seed)
        model = GTSModel(GTSConfig(embedding_size=16, hidden_size=24, dropout=0.0), enc).eval()
        batch = enc.batch(problems)
        with torch.no_grad():
            ctx = model.context(batch)
            chosen = model.decoder.token_log_probs(ctx, batch.target, batch.target_mask, batch.qty_class)
            expected_targets = batch.target.clone()
            picks = 0
            for b, p in enumerate(problems):
                classes = batch.qty_class[b].tolist()
                for t in range(len(p.prefix())):
                    slot = expected_targets[b, t].item() - first
                    if slot < 0:
                        continue
                    options = [q for q, c in enumerate(classes) if c == classes[slot]]
                    scored = []
                    for q in options:  # log-probability at step t depends only on the prefix before t
                        variant = expected_targets.clone()
                        variant[b, t] = first + q
                        scored.append((model.decoder.token_log_probs(ctx, variant, batch.target_mask)[b, t].item(), q))
                    expected_targets[b, t] = first + max(scored)[1]
                    picks += len(options) > 1
            expected = model.decoder.token_log_probs(ctx, expected_targets, batch.target_mask)
            assert picks == 3  # r1's N0, r2's two N0
            changed += not torch.equal(expected_targets, batch.target)
            assert torch.allclose(chosen, expected, atol=1e-6)
            plain = model.decoder.token_log_probs(ctx, batch.target, batch.target_mask)
            assert chosen[0, 1] >= plain[0, 1] - 1e-6  # r1 '* N0 N2': its one choice beats or ties the first slot
            assert model.loss(batch).item() == pytest.approx(-expected.sum().item() / batch.target_mask.sum().item(), rel=1e-5)
            first_only = GTSModel(GTSConfig(embedding_size=16, hidden_size=24, dropout=0.0, any_equal_slot=False), enc).eval()
            first_only.load_state_dict(model.state_dict())
            assert first_only.loss(batch).item() == pytest.approx(-plain.sum().item() / batch.target_mask.sum().item(), rel=1e-5)
    assert changed > 0  # at some seed a later slot outscored the first, so the rule changed the targets


def _assert_valid(problems, predictions, enc):
    constants = set(enc.output.constants)
    for p, pred in zip(problems, predictions):
        assert is_valid_prefix(pred.tokens), (p.id, pred.tokens)
        for tok in pred.tokens:
            if tok in OPERATORS or tok in constants:
                continue
            assert tok.startswith("N") and int(tok[1:]) < len(p.quantities), (p.id, pred.tokens)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_untrained_beam_search_is_valid_and_batch_independent(seed):
    problems = toy_problems() + nested_problems()
    one = build_problem("one", "A dog eats 4 bones .", "x=4", 4, source="toy", language="en")
    problems.append(one)
    enc = build_encoding(problems)
    torch.manual_seed(seed)
    model = GTSModel(GTSConfig(embedding_size=16, hidden_size=16, dropout=0.0, max_output_length=9), enc).eval()
    for beam in (1, 3, 5):
        batched = predict(model, enc, problems, beam_size=beam, batch_size=16)
        _assert_valid(problems, batched, enc)
        assert all(len(pred.tokens) <= 9 for pred in batched)
        single = predict(model, enc, problems, beam_size=beam, batch_size=1)
        assert [p.tokens for p in batched] == [p.tokens for p in single]
        for a, b in zip(batched, single):
            assert a.score == pytest.approx(b.score, abs=1e-4)


def test_finished_problems_leave_the_beam_batch():
    problems = toy_problems() + nested_problems()
    enc = build_encoding(problems)
    torch.manual_seed(0)
    model = GTSModel(GTSConfig(embedding_size=16, hidden_size=16, dropout=0.0, max_output_length=9), enc).eval()
    rows_per_step, scores = [], model.decoder.scores

    def counting_scores(ctx, goal):  # the real scoring, counting the rows decoded at each step
        rows_per_step.append(goal.shape[0])
        return scores(ctx, goal)

    model.decoder.scores = counting_scores
    batched = predict(model, enc, problems, beam_size=5, batch_size=16)
    # 12 problems x beam 5 start; problems whose answer is settled stop costing a row
    assert rows_per_step[0] == 60 and rows_per_step[-1] < 60 and rows_per_step == sorted(rows_per_step, reverse=True)
    single = predict(model, enc, problems, beam_size=5, batch_size=1)
    assert [p.tokens for p in batched] == [p.tokens for p in single]
    # keeping every row to the end (the earlier search, the bench's baseline) settles the same answers
    batch = enc.batch(problems, with_targets=False)
    rows_per_step.clear()
    kept = beam_search(model.decoder, model.context(batch), batch.n_quantities, 5, 9, drop_finished=False)
    assert set(rows_per_step) == {60}
    dropped = beam_search(model.decoder, model.context(batch), batch.n_quantities, 5, 9)
    assert [h.ids for h in kept] == [h.ids for h in dropped]
    assert [h.score for h in kept] == pytest.approx([h.score for h in dropped], abs=1e-4)


def test_overfits_eight_problems_and_likelihood_rises(tmp_path):
    problems = toy_problems()
    solver = GTSSolver(TINY)
    solver.encoding = build_encoding(problems)
    torch.manual_seed(0)
    solver.model = solver.build_model(solver.encoding)
    before = [l.total for l in solver.log_likelihood(problems)]

    result = solver.fit(problems, problems, FAST)
    losses = [e.train_loss for e in result.epochs]
    assert losses[-1] < 0.3 * losses[0]
    preds = solver.predict(problems, beam_size=5)
    assert [list(p.tokens) for p in preds] == [p.prefix() for p in problems]
    after = solver.log_likelihood(problems)
    assert all(a.total > b + 1.0 for a, b in zip(after, before))
    assert all(a.n_tokens == len(p.prefix()) and a.per_token == pytest.approx(a.total / a.n_tokens)
               for a, p in zip(after, problems))
    # the beam's score is the teacher-forced log-probability of the expression it returns
    assert [p.score for p in preds] == pytest.approx([a.total for a in after], abs=1e-4)

    path = solver.save(tmp_path / "gts")
    loaded = load_solver(path, device="cpu")
    assert isinstance(loaded, GTSSolver) and loaded.config == TINY
    assert loaded.train_data_hash == solver.train_data_hash
    assert [p.tokens for p in loaded.predict(problems)] == [p.tokens for p in preds]
    assert [l.total for l in loaded.log_likelihood(problems)] == [l.total for l in after]
    assert torch.equal(loaded.encode(problems), solver.encode(problems))
    assert solver.encode(problems).shape == (8, 32)


def test_unknown_config_key_is_an_error():
    with pytest.raises(TypeError):
        GTSSolver(hiden_size=64)


def test_under_cpu_bf16_autocast_only_the_encoder_computes_in_bf16():
    """precision="bf16" on CPU: the encoder's products run in bfloat16, the tree decoder's in float32
    (they gain nothing from bf16 there and their mixed temporaries grew the heap)."""
    problems = toy_problems()
    enc = build_encoding(problems)
    torch.manual_seed(0)
    model = GTSModel(TINY, enc)
    weights = {m.weight.data_ptr(): name for name, m in model.decoder.named_modules() if isinstance(m, torch.nn.Linear)}
    seen = {}

    products = (torch.nn.functional.linear, torch.mm, torch.Tensor.mm)  # step layers: x.mm(weight.t()) (step_autograd)

    class RecordLinear(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func in products and args[1].data_ptr() in weights:
                seen.setdefault(weights.get(args[1].data_ptr(), "other"), set()).add(out.dtype)
            return out
    batch = enc.batch(problems)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with RecordLinear():
            low = model.loss(batch)
        encoder_product = torch.nn.functional.linear(torch.ones(2, 4), torch.ones(3, 4))  # autocast is on here
    assert encoder_product.dtype == torch.bfloat16
    assert len(seen) >= 8, seen
    assert all(dtypes == {torch.float32} for dtypes in seen.values()), seen
    full = model.loss(batch)
    assert low.dtype == torch.float32
    assert low.item() != full.item() and abs(low.item() - full.item()) < 0.02 * full.item()  # the encoder's bf16


class MixedFloatMeetings(TorchFunctionMode):
    """Records the calls where floating tensors of different dtypes meet in an op that CUDA's
    autocast does not reconcile (CPU autocast promotes some of them, e.g. index_copy, so a CPU run
    alone would not fail where a GPU run does)."""

    OPS = {torch.cat, torch.stack, torch.where, torch.Tensor.index_copy, torch.Tensor.index_copy_,
           torch.Tensor.index_put, torch.Tensor.index_put_, torch.Tensor.__setitem__}

    def __init__(self):
        super().__init__()
        self.seen: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in self.OPS:
            flat = [a for arg in args for a in (arg if isinstance(arg, (list, tuple)) else [arg])]
            dtypes = {a.dtype for a in flat if isinstance(a, torch.Tensor) and a.is_floating_point()}
            if len(dtypes) > 1:
                self.seen.append(f"{func.__name__}{sorted(map(str, dtypes))}")
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("teacher_pass", TEACHER_PASSES)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_the_decoder_under_cuda_autocast_trains_and_searches(dtype, teacher_pass):
    """On CUDA autocast stays on through the tree decoder (GTS turns it off only on CPU), so its
    linear layers return ``dtype`` while gathered encoder states, constants and operator embeddings
    come from elsewhere: every place they meet (cat, index_copy, the beam's stacks, masked logits)
    must agree. The same regime here on CPU, forward, backward and beam search."""
    problems = toy_problems() + nested_problems()
    enc = build_encoding(problems)
    torch.manual_seed(0)
    model = GTSModel(GTSConfig(embedding_size=16, hidden_size=24, dropout=0.0, teacher_pass=teacher_pass), enc)
    batch = enc.batch(problems)
    text_mask = torch.arange(batch.tokens.shape[1])[None] < batch.lengths[:, None]

    def loss_and_grads(autocast: bool):
        model.zero_grad()
        with torch.autocast("cpu", dtype=dtype, enabled=autocast):
            states, problem = model.encoder(batch.tokens, batch.lengths)
            ctx = model.decoder.context(states, text_mask, problem, batch.qty_positions, batch.qty_mask)
            loss = tree_loss(model.decoder, ctx, batch, any_equal_slot=True)
        loss.backward()
        return ctx, loss, {n: p.grad.clone() for n, p in model.decoder.named_parameters() if p.grad is not None}

    meetings = MixedFloatMeetings()
    with torch.no_grad(), torch.autocast("cpu", dtype=dtype):  # plain layers (no deferred weight gradients)
        states, problem = model.encoder(batch.tokens, batch.lengths)
        with meetings:
            ctx = model.decoder.context(states, text_mask, problem, batch.qty_positions, batch.qty_mask)
            assert model.decoder.token_log_probs(ctx, batch.target, batch.target_mask).dtype == torch.float32
            beam_search(model.decoder, ctx, batch.n_quantities, 3, 9)
        # the repeated-value rule's choices meet autocast's dtypes too (hand-made problems with repeated values)
        repeated = enc.batch([p for p in hand_problems() if expressible(enc, p)])
        assert repeated.has_repeated_values
        states, problem = model.encoder(repeated.tokens, repeated.lengths)
        with meetings:
            mask = torch.arange(repeated.tokens.shape[1])[None] < repeated.lengths[:, None]
            ctx = model.decoder.context(states, mask, problem, repeated.qty_positions, repeated.qty_mask)
            assert torch.isfinite(tree_loss(model.decoder, ctx, repeated, any_equal_slot=True))
    assert meetings.seen == []
    _, full, full_grads = loss_and_grads(False)
    ctx, low, low_grads = loss_and_grads(True)
    assert {ctx.enc.dtype, ctx.enc_proj.dtype, ctx.num_emb.dtype, ctx.num_proj.dtype, ctx.problem.dtype} == {dtype}
    assert low.dtype == torch.float32 and low.item() == pytest.approx(full.item(), rel=0.02)
    assert low_grads.keys() == full_grads.keys() and len(low_grads) >= 15
    for name, grad in low_grads.items():
        assert grad.dtype == torch.float32
        cosine = torch.nn.functional.cosine_similarity(grad.flatten(), full_grads[name].flatten(), dim=0)
        assert cosine > 0.98, (name, cosine.item())
    with torch.no_grad(), torch.autocast("cpu", dtype=dtype):
        hyps = beam_search(model.decoder, ctx, batch.n_quantities, 5, 9)
    tokens = [enc.decode(h.ids) for h in hyps]
    assert all(torch.isfinite(torch.tensor(h.score)) for h in hyps)
    assert all(is_valid_prefix(t) for t in tokens), tokens


TWO_QUANTITY = [p for p in toy_problems() if len(p.quantities) == 2]
COMPOSED = [  # each composes two of the training templates: three quantities, more than any training problem
    ("c1", "Tom has 3 apples and buys 5 more and then 4 more . How many apples does he have ?", "x=3+5+4", 12),
    ("c2", "A box holds 4 pens . How many pens are in 6 boxes and 2 more pens ?", "x=4*6+2", 26),
]


@pytest.mark.parametrize("name", ["gts", "bert-gts"])
def test_a_pointer_solver_trained_on_two_quantities_predicts_and_scores_three(name):
    from solvers.registry import build_solver

    assert max(len(p.quantities) for p in TWO_QUANTITY) == 2
    tiny = dict(hidden_size=32, embedding_size=32, dropout=0.0)
    if name == "bert-gts":
        tiny = dict(hidden_size=32, embedding_size=32, bert_hidden_size=32, bert_layers=1, bert_heads=2,
                    bert_intermediate_size=64, dropout=0.0)
    solver = build_solver(name, device="cpu", **tiny)
    # validation is the training set and ties at 1.000 from early on: the earliest tied epoch (the
    # scenario was found with it) still spreads some beam mass over the unseen third slot
    solver.fit(TWO_QUANTITY, TWO_QUANTITY, dataclasses.replace(FAST, tie_break="first"))
    composed = [build_problem(pid, text, eq, ans, source="toy", language="en") for pid, text, eq, ans in COMPOSED]
    likelihoods = solver.log_likelihood(composed)
    assert all(l.n_tokens == 5 and l.total < 0 for l in likelihoods)  # "+ + N0 N1 N2", "+ * N0 N1 N2": scored
    predictions = solver.predict(composed, beam_size=3)
    assert all(p.expression is not None for p in predictions)
    used = {tok for p in predictions for tok in p.tokens}
    assert used <= set(OPERATORS) | {"N0", "N1", "N2", "2"}
    # the beam may reach the third quantity: its best hypothesis using N2 scores as its likelihood
    third = solver.predict(composed, beam_size=20)
    assert any("N2" in p.tokens for p in third)
