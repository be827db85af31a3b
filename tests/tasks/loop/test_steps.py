"""tasks/loop/steps.py: which failures of the data step are retried (issue #16: data errors cannot
succeed on retry, so they are not retried)."""
import pytest

from mwp.readers import DataFormatError
from tasks.loop.steps import _transient


class _FailedState:
    """What Prefect hands a retry condition: a state whose result() raises the task's error."""

    def __init__(self, error: BaseException):
        self.error = error

    def result(self):
        raise self.error


@pytest.mark.parametrize("error, retried", [
    (OSError(5, "Input/output error"), True),  # a file system hiccup may pass
    (DataFormatError("d.json: not JSON"), False),
    (ValueError("too few problems to split: 3 usable"), False),
    (FileNotFoundError(2, "No such file or directory"), False),
    (PermissionError(13, "Permission denied"), False),
    (IsADirectoryError(21, "Is a directory"), False),
])
def test_only_transient_failures_of_the_data_step_are_retried(error, retried):
    assert _transient(None, None, _FailedState(error)) is retried
