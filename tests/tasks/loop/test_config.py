"""The loop's own settings (tasks/loop/config.py): one validation, and what each round does."""
import pytest

from tasks.loop.config import LoopConfig


def test_rounds_zero_train_once_and_later_rounds_augment_unless_told_not_to():
    assert [LoopConfig().augments(r) for r in range(3)] == [False, True, True]
    assert [LoopConfig(augment_rounds=False).augments(r) for r in range(3)] == [False, False, False]


def test_warm_started_rounds_train_their_own_epochs_after_round_zero():
    warm = LoopConfig(warm_start=True, warm_start_epochs=3)
    assert [warm.warm_starts(r) for r in range(3)] == [False, True, True]
    assert [warm.round_epochs(r, 10) for r in range(3)] == [10, 3, 3]
    assert [LoopConfig(warm_start=True).round_epochs(r, 10) for r in range(2)] == [10, 10]
    assert LoopConfig(warm_start_epochs=3).round_epochs(1, 10) == 10  # without warm_start the epochs do not apply


@pytest.mark.parametrize("changes, message", [
    ({"rounds": -1}, "rounds must be a whole number in [0, 50], got -1"),
    ({"rounds": 51}, "rounds must be a whole number in [0, 50]"),
    ({"keep_fraction": 0}, "keep_fraction must lie in (0, 1], got 0"),
    ({"keep_fraction": 1.01}, "keep_fraction must lie in (0, 1]"),
    ({"retention": "best"}, "retention must be one of top-fraction, per-operator, per-origin, got 'best'"),
    ({"score": "vibes"}, "score must be one of"),
    ({"warm_start_epochs": 0}, "warm_start_epochs must be at least 1"),
])
def test_a_refused_setting_is_named_with_its_value(changes, message):
    with pytest.raises(ValueError) as err:
        LoopConfig(**changes)
    assert message in str(err.value)
