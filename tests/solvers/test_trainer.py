"""Vocabularies and batches by hand, batching order, checkpoints, registry, and the trainer's
best-epoch selection on validation accuracy (with the weights of that epoch restored)."""
import random

import pytest
import torch

from mwp.problem import build_problem
from solvers.base import TrainConfig
from solvers.checkpoint import CheckpointError, data_hash, load_checkpoint, read_meta, save_checkpoint
from solvers.evaluate import evaluate_predictions
from solvers.gts import GTSConfig, GTSSolver
from solvers.registry import MODULES, build_solver, solver_class
from solvers.trainer import bucketing_steps, float32_products, length_bucketed
from solvers.vocab import EncodingError, build_encoding
from toy_problems import toy_problems


def _two():
    return [
        build_problem("a", "Tom has 3 apples and 5 pears .", "x=3+5", 8, source="toy", language="en"),
        build_problem("b", "Half of 20 apples .", "x=20/2", 10, source="toy", language="en"),
    ]


def test_encoding_by_hand():
    enc = build_encoding(_two(), n_slots=1)  # learned slots: raised to the training maximum, 2
    assert enc.output.tokens == ("+", "-", "*", "/", "^", "2", "N0", "N1")
    assert (enc.output.n_ops, enc.output.slot_start, len(enc.output)) == (5, 6, 8)
    words = enc.input.words
    assert words[:3] == ("<pad>", "<unk>", "NUM") and "tom" in words and "3" not in words
    batch = enc.batch(_two())
    assert batch.tokens.shape == (2, 8)  # "Tom has 3 apples and 5 pears ." is 8 tokens
    assert batch.lengths.tolist() == [8, 5]
    assert batch.tokens[0, 2].item() == 2 and batch.tokens[1, 2].item() == 2  # NUM
    assert batch.tokens[1, 5:].tolist() == [0, 0, 0]
    assert batch.qty_positions.tolist() == [[2, 5], [2, 0]]
    assert batch.qty_mask.tolist() == [[True, True], [True, False]]
    assert batch.n_quantities.tolist() == [2, 1]
    assert batch.target.tolist() == [[0, 6, 7], [3, 6, 5]]
    assert batch.target_mask.tolist() == [[True, True, True], [True, True, True]]
    assert enc.decode([3, 6, 5]) == ("/", "N0", "2")
    assert [t.dtype for t in (batch.tokens, batch.lengths, batch.qty_positions, batch.n_quantities, batch.qty_class,
                              batch.target)] == [torch.long] * 6
    assert batch.qty_mask.dtype == batch.target_mask.dtype == torch.bool
    assert batch.qty_class.tolist() == [[0, 1], [0, -1]]


def test_unseen_constant_is_an_error_naming_the_problem():
    enc = build_encoding(_two()[:1])
    with pytest.raises(EncodingError, match="problem b") as err:
        enc.batch(_two())
    assert err.value.reason == "unseen_constant"


def _three():
    return build_problem("c", "Tom has 3 apples , 5 pears and 4 plums .", "x=3+5+4", 12, source="toy", language="en")


def test_pointer_slots_reach_every_quantity_whatever_the_training_maximum():
    enc = build_encoding(_two())  # every training problem has at most 2 quantities
    assert enc.output.n_slots is None
    batch = enc.batch([_two()[0], _three()])
    assert batch.n_quantities.tolist() == [2, 3]
    assert batch.qty_mask.tolist() == [[True, True, False], [True, True, True]]
    assert enc.target_ids(_three()) == [0, 0, 6, 7, 8]  # + + N0 N1 N2 after 5 operators and the constant 2
    assert enc.decode([0, 8, 106]) == ("+", "N2", "N100")
    restored = type(enc).from_dict(enc.to_dict())
    assert restored.output.n_slots is None and restored.target_ids(_three()) == enc.target_ids(_three())


def test_learned_slots_refuse_a_quantity_past_their_count_by_reason():
    enc = build_encoding(_two(), n_slots=2)
    batch = enc.batch([_three()], with_targets=False)
    assert batch.n_quantities.tolist() == [2]  # the third quantity has no slot
    with pytest.raises(EncodingError, match="problem c.*beyond the solver's 2 slots") as err:
        enc.batch([_three()])
    assert err.value.reason == "no_slot_for_quantity"


def test_length_bucketed_covers_every_problem_once():
    problems = toy_problems()
    batches = list(length_bucketed(problems, 3, random.Random(0)))
    assert sorted(p.id for b in batches for p in b) == sorted(p.id for p in problems)
    assert sorted(len(b) for b in batches) == [2, 3, 3]
    ordered = [p for b in length_bucketed(problems, 3, None) for p in b]
    assert [len(p.tokens) for p in ordered] == sorted(len(p.tokens) for p in problems)


def test_steps_bucketing_sorts_each_pool_by_the_decoders_steps_then_by_length():
    problems = toy_problems()
    steps = [(7 * i) % 5 for i in range(len(problems))]  # unrelated to the texts' lengths
    key = {p.id: (n, len(p.tokens)) for p, n in zip(problems, steps)}
    batches = list(length_bucketed(problems, 3, random.Random(0), steps))
    assert sorted(p.id for b in batches for p in b) == sorted(p.id for p in problems)
    ordered = sorted(key.values())  # one pool (16 batches) holds them all: each batch a run of that order
    runs = sorted(sorted(key[p.id] for p in b) for b in batches)
    assert sum(runs, []) == ordered
    by_length = list(length_bucketed(problems, 3, random.Random(0)))
    assert sum(max(key[p.id][0] for p in b) for b in batches) < sum(max(key[p.id][0] for p in b) for b in by_length)
    with pytest.raises(ValueError, match="3 decoder step counts for 8 problems"):
        list(length_bucketed(problems, 3, random.Random(0), steps[:3]))


def test_steps_bucketing_needs_a_model_that_counts_its_decoder_steps():
    problems = toy_problems()
    enc = build_encoding(problems)
    config = TrainConfig(bucketing="steps", progress=False)
    assert bucketing_steps(torch.nn.Linear(2, 2), enc, problems, TrainConfig(progress=False)) is None  # "length"
    with pytest.raises(ValueError, match="bucketing 'steps': Linear does not say its decoder's steps"):
        bucketing_steps(torch.nn.Linear(2, 2), enc, problems, config)
    with pytest.raises(ValueError, match="bucketing must be one of length, steps"):
        TrainConfig(bucketing="depth")


def _depth_against_length():
    """Deep trees in short texts, shallow ones in long texts, lengths interleaved: by length the batches of two
    pair a deep tree with a shallow one, by the decoder's steps the two deep ones share a batch."""
    rows = [("d1", "Add 2 to 3 , times 4 , minus 1 .", "x=(2+3)*4-1", 19),
            ("s1", "Tom has 3 apples and buys 5 more apples at the shop today .", "x=3+5", 8),
            ("d2", "Take 6 and 2 , add them , multiply by 3 , then take away 4 and add 7 to it .", "x=(6+2)*3-4+7", 27),
            ("s2", "Sara had 10 pencils in her bag and gave 4 of them to her friend Mia after the long day at "
                   "school .", "x=10-4", 6)]
    return [build_problem(pid, text, eq, ans, source="toy", language="en") for pid, text, eq, ans in rows]


def test_a_gts_training_bucketed_by_steps_batches_deep_trees_together_and_learns():
    problems = _depth_against_length()
    assert [len(p.tokens) for p in problems] == sorted(len(p.tokens) for p in problems)
    losses = {}
    for bucketing in ("length", "steps"):
        solver = GTSSolver(GTSConfig(embedding_size=16, hidden_size=16, dropout=0.0, min_count=1))
        result = solver.fit(problems, [], TrainConfig(epochs=10, batch_size=2, lr=0.02, progress=False, seed=0,
                                                      bucketing=bucketing))
        losses[bucketing] = [e.train_loss for e in result.epochs]
    steps = solver.model.decoder_steps(solver.encoding, problems)
    assert steps[0] > steps[1] and steps[2] > steps[3]  # deep, shallow, deep, shallow
    batches = [{p.id for p in b} for b in length_bucketed(problems, 2, random.Random(0), steps)]
    assert sorted(map(sorted, batches)) == [["d1", "d2"], ["s1", "s2"]]
    assert losses["steps"][-1] < losses["steps"][0] / 3
    assert losses["steps"][0] != losses["length"][0]  # other batches from the first epoch on


def test_checkpoint_round_trip_and_errors(tmp_path):
    enc = build_encoding(_two())
    state = {"w": torch.arange(6, dtype=torch.float32).reshape(2, 3)}
    state["tied"] = state["w"]  # shared storage must still save
    save_checkpoint(tmp_path / "c", "gts", {"hidden_size": 8}, enc, state, data_hash(_two()), {"note": 1})
    ckpt = load_checkpoint(tmp_path / "c")
    assert ckpt.solver == "gts" and ckpt.config == {"hidden_size": 8} and ckpt.extra == {"note": 1}
    assert ckpt.encoding == enc and torch.equal(ckpt.state_dict["tied"], state["w"])
    assert ckpt.train_data_hash == data_hash(_two()) != data_hash(_two()[:1])
    with pytest.raises(CheckpointError):
        read_meta(tmp_path / "nothing")


def test_registry():
    solver = build_solver("gts", hidden_size=16, embedding_size=8)
    assert isinstance(solver, GTSSolver) and solver.config.hidden_size == 16
    with pytest.raises(KeyError):
        build_solver("nope")
    for name in MODULES:  # every registered module defines a solver under that name
        assert solver_class(name).name == name
    assert solver_class("seq2seq").name == "lstm"
    with pytest.raises(ValueError, match="gts' has no option hidden; its options: .*hidden_size"):
        build_solver("gts", hidden=16)
    with pytest.raises(ValueError, match="dropout must lie in"):
        build_solver("gts", dropout=1.0)


def test_best_epoch_is_chosen_on_validation_and_restored():
    problems = toy_problems()
    train, valid = problems[:6], problems[6:] + problems[:2]
    seen, states = [], []
    # min_count 1: six toy problems, every word kept (the scenario below was found with that vocabulary)
    solver = GTSSolver(GTSConfig(embedding_size=16, hidden_size=16, dropout=0.0, min_count=1))

    def on_epoch(stats):
        seen.append(stats)
        states.append({k: v.clone() for k, v in solver.model.state_dict().items()})

    # a learning rate this high makes validation accuracy rise and fall again (seen: best epoch 5 of 12)
    result = solver.fit(train, valid, TrainConfig(epochs=12, batch_size=4, lr=0.1, progress=False, seed=0), on_epoch)
    accs = [e.valid_answer_acc for e in seen]
    assert len(seen) == 12 and all(a is not None for a in accs) and list(result.epochs) == seen
    # epochs 4 and 5 tie at the best accuracy; the default keeps the one with the lower validation loss
    tied = [e for e in seen if e.valid_answer_acc == max(accs)]
    assert len(tied) >= 2 and all(e.valid_loss is not None and e.valid_loss > 0 for e in seen)
    assert result.best_epoch == min(tied, key=lambda e: e.valid_loss).epoch != tied[0].epoch
    assert result.best_valid_answer_acc == max(accs)
    assert accs[-1] < max(accs), "the scenario must make the last epoch worse than the best"
    # the model now holds the best epoch's weights, not the last epoch's
    final = solver.model.state_dict()
    assert all(torch.equal(final[k], v) for k, v in states[result.best_epoch - 1].items())
    assert evaluate_predictions(valid, solver.predict(valid)).answer_acc == max(accs)
    assert all(e.seconds > 0 for e in seen) and seen[0].lr == 0.1


def test_the_first_tie_break_keeps_the_earliest_epoch_at_the_best_accuracy():
    # the scenario above, with the rule runs had before the tie-break existed: no validation loss is read
    problems = toy_problems()
    train, valid = problems[:6], problems[6:] + problems[:2]
    solver = GTSSolver(GTSConfig(embedding_size=16, hidden_size=16, dropout=0.0, min_count=1))
    result = solver.fit(train, valid, TrainConfig(epochs=12, batch_size=4, lr=0.1, progress=False, seed=0,
                                                  tie_break="first"))
    accs = [e.valid_answer_acc for e in result.epochs]
    assert result.best_epoch == accs.index(max(accs)) + 1
    assert all(e.valid_loss is None for e in result.epochs)


def test_the_validation_loss_skips_problems_the_vocabularies_cannot_express():
    # a validation problem with a constant no training problem has: accuracy counts it (as wrong), the loss
    # is read on the others, and training does not fail
    problems = toy_problems()
    odd = build_problem("odd", "A rope is 3 meters long . How many centimeters long is it ?", "x=3*100", 300, "toy")
    solver = GTSSolver(GTSConfig(embedding_size=16, hidden_size=16, dropout=0.0, min_count=1))
    result = solver.fit(problems[:6], problems[6:] + [odd], TrainConfig(epochs=2, batch_size=4, progress=False, seed=0))
    assert all(e.valid_loss is not None for e in result.epochs)


def test_an_unknown_tie_break_is_refused():
    with pytest.raises(ValueError, match="tie_break must be one of valid-loss, first"):
        TrainConfig(tie_break="last")


def test_bf16_training_on_cpu_autocasts_and_keeps_float32_weights():
    problems = toy_problems()

    def fit(precision):
        solver = GTSSolver(GTSConfig(embedding_size=16, hidden_size=16, dropout=0.0, min_count=1))
        result = solver.fit(problems, [], TrainConfig(epochs=8, batch_size=4, lr=0.02, progress=False, seed=0,
                                                      device="cpu", precision=precision))
        assert result.precision == ("fp32" if precision == "auto" else precision)  # what ran, "auto" resolved
        return solver, [e.train_loss for e in result.epochs]

    full, full_losses = fit("fp32")
    low, low_losses = fit("bf16")
    assert all(p.dtype == torch.float32 for p in low.model.parameters())
    assert low_losses[-1] < low_losses[0] / 2, low_losses  # it learns
    # the same start, so the first epoch's losses agree up to bfloat16 rounding, but they do differ
    assert low_losses[0] != full_losses[0] and abs(low_losses[0] - full_losses[0]) < 0.05 * full_losses[0]
    assert fit("auto")[1] == full_losses  # auto is float32 on CPU
    half, half_losses = fit("fp16")  # float16 with the gradient scaler (a GPU without bfloat16)
    assert all(p.dtype == torch.float32 for p in half.model.parameters())
    assert half_losses[-1] < half_losses[0] / 2 and abs(half_losses[0] - full_losses[0]) < 0.05 * full_losses[0]
    with pytest.raises(ValueError, match="precision must be one of"):
        TrainConfig(precision="fp8")


def test_early_stopping_after_patience():
    problems = toy_problems()
    solver = GTSSolver(GTSConfig(embedding_size=8, hidden_size=8, dropout=0.0))
    result = solver.fit(problems[:4], problems[4:], TrainConfig(epochs=30, batch_size=4, lr=1e-6, patience=2, progress=False))
    # with a learning rate this small the accuracy never improves after epoch 1: patience counts accuracy,
    # so training stops after epoch 3, and of the three tied epochs the lowest validation loss is kept
    assert len(result.epochs) == 3 and len({e.valid_answer_acc for e in result.epochs}) == 1
    assert result.best_epoch == min(result.epochs, key=lambda e: e.valid_loss).epoch
    first = GTSSolver(GTSConfig(embedding_size=8, hidden_size=8, dropout=0.0)).fit(
        problems[:4], problems[4:], TrainConfig(epochs=30, batch_size=4, lr=1e-6, patience=2, progress=False,
                                                tie_break="first"))
    assert first.best_epoch == 1 and len(first.epochs) == 3


def test_the_progress_bar_spans_every_epoch_and_shows_the_remaining_time(monkeypatch):
    from solvers import trainer

    bars = []

    def recorded(*args, **kwargs):
        bars.append(trainer_tqdm(*args, **kwargs))
        return bars[-1]

    trainer_tqdm = trainer.tqdm
    monkeypatch.setattr(trainer, "tqdm", recorded)
    problems = toy_problems()
    solver = GTSSolver(GTSConfig(embedding_size=8, hidden_size=8, dropout=0.0))
    # 6 problems in batches of 4: 2 batches an epoch, 3 epochs -> one bar of 6 batches, not three bars of 2
    solver.fit(problems[:6], problems[6:], TrainConfig(epochs=3, batch_size=4, progress=True, seed=0))
    assert len(bars) == 1
    bar = bars[0]
    assert (bar.n, bar.total, bar.desc) == (6, 6, "epoch 3/3: ")
    line = bar.format_meter(**{**bar.format_dict, "n": 3, "elapsed": 30.0, "rate": None})  # half way after 30 s
    assert "3/6 [00:30<00:30" in line  # [elapsed<remaining: the ETA of the whole training


def test_float32_products_turns_tf32_off_for_the_block_and_restores_the_flags():
    """On CUDA "fp32" training and inference run inside this block (TF32 would otherwise round the
    cuDNN GRU's and convolutions' products to 10 mantissa bits); the flags exist on a CPU build too."""
    flags = lambda: (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)  # noqa: E731
    before = flags()
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = True, True
    try:
        with float32_products():
            assert flags() == (False, False)
        assert flags() == (True, True)
        with pytest.raises(RuntimeError), float32_products():
            raise RuntimeError("inside")
        assert flags() == (True, True)
        with float32_products(enabled=False):
            assert flags() == (True, True)
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = before


def test_the_epoch_loss_is_the_mean_of_its_steps_read_once_and_the_bar_shows_it(monkeypatch):
    """The trainer sums the step losses on the device (read back at the epoch's end, so that no step
    waits for a GPU) in float64: the same number as a Python sum of the steps' values."""
    from solvers import trainer

    steps, bars = [], []

    def recorded_step(*args, **kwargs):
        loss = real_step(*args, **kwargs)
        steps.append(loss.item())
        return loss

    def recorded_bar(*args, **kwargs):
        bars.append(real_bar(*args, **kwargs))
        return bars[-1]

    real_step, real_bar = trainer.train_step, trainer.tqdm
    monkeypatch.setattr(trainer, "train_step", recorded_step)
    monkeypatch.setattr(trainer, "tqdm", recorded_bar)
    solver = GTSSolver(GTSConfig(embedding_size=8, hidden_size=8))
    problems = toy_problems()
    result = solver.fit(problems, [], TrainConfig(epochs=2, batch_size=1, progress=True, seed=0, eval_every=10**9))
    n = len(problems)
    assert len(steps) == 2 * n
    assert [e.train_loss for e in result.epochs] == [sum(steps[:n]) / n, sum(steps[n:]) / n]  # exactly
    assert bars[0].postfix == f"loss={result.epochs[-1].train_loss:.3f}"


def test_bf16_on_a_cpu_that_emulates_it_warns_at_the_start_and_nowhere_else(monkeypatch):
    import warnings

    from solvers import trainer

    problems = toy_problems()[:8]

    def warned(precision):
        solver = GTSSolver(GTSConfig(embedding_size=8, hidden_size=8, min_count=1))
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            solver.fit(problems, [], TrainConfig(epochs=2, batch_size=4, progress=False, seed=0, device="cpu",
                                                 precision=precision))
        return [w for w in seen if "bfloat16 hardware" in str(w.message)]

    monkeypatch.setattr(trainer, "cpu_emulates_bf16", lambda: True)  # an AVX2 CPU, as this project's CI has
    emulated = warned("bf16")
    assert len(emulated) == 1 and emulated[0].category is RuntimeWarning  # once a training, not once a batch
    assert "precision fp32" in str(emulated[0].message)
    assert warned("fp32") == [] and warned("auto") == []  # auto is float32 on a CPU
    monkeypatch.setattr(trainer, "cpu_emulates_bf16", lambda: False)  # AVX512-BF16 or AMX, or not judged
    assert warned("bf16") == []
    assert trainer.slow_precision_warning(torch.device("cuda"), torch.bfloat16) is None  # a GPU has its own bf16
    monkeypatch.undo()
    assert trainer.cpu_emulates_bf16() in (True, False)  # the probe runs on this CPU, whatever it has
