"""An interrupted training continues from its last epoch (TrainConfig.resume_dir) and ends with the
weights, history and best epoch of the same training run without interruption; a state written for
another training is refused, naming what differs."""
import dataclasses

import pytest
import torch

from solvers.base import TrainConfig
from solvers.gts import GTSConfig, GTSSolver
from solvers.train_state import STATE_FILE
from toy_problems import toy_problems

CFG = GTSConfig(embedding_size=8, hidden_size=16, dropout=0.5)  # dropout: the torch generator matters


class Interrupt(Exception):
    pass


def _train(config, on_epoch=None, train=None):
    problems = toy_problems()
    solver = GTSSolver(CFG, device="cpu")
    result = solver.fit(train or problems[:6], problems[6:], config, on_epoch)
    return solver, result


def _stop_after(n):
    def on_epoch(stats):
        if stats.epoch == n:
            raise Interrupt
    return on_epoch


def _same_weights(a, b):
    sa, sb = a.model.state_dict(), b.model.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_interrupted_training_resumes_to_the_same_result(tmp_path):
    config = TrainConfig(epochs=5, batch_size=3, seed=3, progress=False, lr_halving_epochs=2, device="cpu")
    plain, plain_result = _train(config)

    resumable = dataclasses.replace(config, resume_dir=str(tmp_path / "state"))
    with pytest.raises(Interrupt):
        _train(resumable, _stop_after(3))
    assert (tmp_path / "state" / STATE_FILE).exists()
    seen = []
    resumed, result = _train(resumable, lambda s: seen.append(s.epoch))
    assert seen == [4, 5]  # only the epochs left are trained
    assert [e.epoch for e in result.epochs] == [1, 2, 3, 4, 5]
    assert [e.train_loss for e in result.epochs] == [e.train_loss for e in plain_result.epochs]
    assert [e.lr for e in result.epochs] == [e.lr for e in plain_result.epochs]  # the schedule went on
    assert result.best_epoch == plain_result.best_epoch
    assert _same_weights(resumed, plain)

    # A finished state: started again, nothing is trained and the same weights come back.
    again_seen = []
    again, again_result = _train(resumable, lambda s: again_seen.append(s.epoch))
    assert again_seen == [] and again_result.best_epoch == plain_result.best_epoch
    assert _same_weights(again, plain)


def test_early_stopping_is_remembered(tmp_path):
    config = TrainConfig(epochs=30, batch_size=3, seed=0, progress=False, patience=1, device="cpu",
                         resume_dir=str(tmp_path))
    _, first = _train(config)
    assert len(first.epochs) < 30  # stopped early
    seen = []
    _, again = _train(config, lambda s: seen.append(s.epoch))
    assert seen == [] and len(again.epochs) == len(first.epochs) and again.best_epoch == first.best_epoch


def test_a_state_of_another_training_is_refused(tmp_path):
    config = TrainConfig(epochs=2, batch_size=3, seed=0, progress=False, device="cpu", resume_dir=str(tmp_path))
    with pytest.raises(Interrupt):
        _train(config, _stop_after(1))
    with pytest.raises(ValueError, match=r"another training \(differs in: config\.lr\)"):
        _train(dataclasses.replace(config, lr=0.01))
    with pytest.raises(ValueError, match="training problems"):
        _train(config, train=toy_problems()[:5])
    # the same data and configuration, started from other weights (a warm start from a trained model)
    other = GTSSolver(CFG, device="cpu")
    other.fit(toy_problems()[:6], toy_problems()[6:], dataclasses.replace(config, resume_dir=None, epochs=1))
    with pytest.raises(ValueError, match="initial weights"):
        other.fit(toy_problems()[:6], toy_problems()[6:], config, warm_start=True)
    # where it runs and whether a bar shows are not part of what is trained
    _train(dataclasses.replace(config, progress=True))


def test_an_unreadable_state_is_an_error_naming_the_file(tmp_path):
    (tmp_path / STATE_FILE).write_bytes(b"not a torch file")
    config = TrainConfig(epochs=1, batch_size=3, progress=False, device="cpu", resume_dir=str(tmp_path))
    with pytest.raises(ValueError, match=f"{STATE_FILE}: not a readable training state"):
        _train(config)
