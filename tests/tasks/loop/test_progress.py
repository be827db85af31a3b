"""What a user sees while a loop runs, on a fake clock: a log (no TTY) gets one line per round and at
most one epoch line per interval; a terminal gets a bar of rounds with the ETA."""
import io

from tasks.loop.progress import LoopProgress, duration
from solvers.base import EpochStats


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _epoch(epoch: int, acc: float | None = 0.5) -> EpochStats:
    return EpochStats(epoch=epoch, train_loss=1.0 / epoch, seconds=10.0, valid_answer_acc=acc)


def test_a_log_gets_a_line_per_round_and_an_epoch_line_at_most_every_interval():
    clock, out = Clock(), io.StringIO()
    progress = LoopProgress(total=3, done=0, epochs=10, stream=out, tty=False, interval=30.0, clock=clock)
    progress.round_started(0)
    show = progress.training(0)
    for epoch in range(1, 11):  # 10 s an epoch: lines at 30 s and 60 s since the last one, not ten lines
        clock.now += 10.0
        show(_epoch(epoch))
    lines = out.getvalue().splitlines()
    assert lines == ["compaug: round 0 epoch 3/10: loss 0.3333, valid acc 0.500; training ETA 01:10",
                     "compaug: round 0 epoch 6/10: loss 0.1667, valid acc 0.500; training ETA 00:40",
                     "compaug: round 0 epoch 9/10: loss 0.1111, valid acc 0.500; training ETA 00:10"]
    clock.now += 20.0  # the round took 120 s; two rounds left: ETA 240 s
    progress.round_finished(0)
    assert out.getvalue().splitlines()[-1] == "compaug: round 0 done in 02:00: 1/3 rounds, elapsed 02:00, ETA 04:00"


def test_a_resumed_run_counts_its_finished_rounds_and_estimates_from_this_sessions_rounds():
    clock, out = Clock(), io.StringIO()
    progress = LoopProgress(total=4, done=2, epochs=5, stream=out, tty=False, clock=clock)
    assert progress.eta(clock()) is None  # nothing measured yet
    progress.round_started(2)
    clock.now = 50.0
    progress.round_finished(2)
    assert out.getvalue() == "compaug: round 2 done in 00:50: 3/4 rounds, elapsed 00:50, ETA 00:50\n"
    progress.round_started(3)
    clock.now = 70.0
    assert progress.eta(clock()) == 30.0  # 50 s a round, 20 s of the last one gone


def test_a_terminal_gets_a_bar_of_rounds_with_elapsed_time_and_eta():
    clock, out = Clock(), io.StringIO()
    with LoopProgress(total=3, done=0, epochs=4, stream=out, tty=True, clock=clock) as progress:
        progress.round_started(0)
        clock.now = 40.0
        progress.training(0)(_epoch(2))
        progress.round_finished(0)
        progress.round_started(1)
        progress.training(1)(_epoch(1))
    text = out.getvalue()
    assert "rounds 1/3" in text and "ETA 01:20, round 1: epoch 1/4" in text
    assert "compaug: round" not in text  # the bar, not log lines
    assert duration(3725) == "1:02:05"


def test_a_round_running_past_the_mean_leaves_the_other_rounds_estimate():
    clock = Clock()
    progress = LoopProgress(total=4, done=0, epochs=5, stream=io.StringIO(), tty=False, clock=clock)
    progress.round_started(0)
    clock.now = 10.0
    progress.round_finished(0)
    progress.round_started(1)
    clock.now = 35.0  # round 1 has run 25 s, past the 10 s mean: rounds 2 and 3 still take 10 s each
    assert progress.eta(clock()) == 20.0


def test_warm_started_rounds_are_shown_and_estimated_with_their_own_epoch_count():
    clock, out = Clock(), io.StringIO()
    progress = LoopProgress(total=3, done=0, epochs=[80, 20, 20], stream=out, tty=False, interval=0.0, clock=clock)
    progress.round_started(0)
    clock.now = 800.0  # 10 s an epoch
    progress.round_finished(0)
    assert out.getvalue().splitlines()[-1].endswith("ETA 06:40")  # 2 x 20 epochs x 10 s, not 2 x 800 s
    progress.round_started(1)
    show = progress.training(1)
    clock.now = 900.0
    show(_epoch(10))
    assert out.getvalue().splitlines()[-1].startswith("compaug: round 1 epoch 10/20:")
    assert progress.eta(clock()) == 300.0  # 200 s of round 1 left by the estimate, and round 2's 200 s


def test_a_count_per_round_must_cover_every_round():
    import pytest

    with pytest.raises(ValueError, match="epochs for 2 rounds, but 3 rounds"):
        LoopProgress(total=3, done=0, epochs=[5, 5])


def test_a_training_resumed_at_a_later_epoch_estimates_from_the_epochs_run_since():
    # resumed after epoch 30 of 38 at 60 s an epoch: after epoch 33, five epochs (300 s) are left
    clock, out = Clock(), io.StringIO()
    progress = LoopProgress(total=1, done=0, epochs=38, stream=out, tty=False, interval=0.0, clock=clock)
    progress.round_started(0)
    show = progress.training(0)
    for epoch in (31, 32, 33):
        clock.now += 60.0
        show(_epoch(epoch))
    assert out.getvalue().splitlines()[-1].endswith("epoch 33/38: loss 0.0303, valid acc 0.500; training ETA 05:00")
