"""solvers/device_copy.py: host-to-device copies through pinned memory on CUDA; on the CPU no copy."""
import pytest
import torch

from solvers.device_copy import to_device


def test_on_the_cpu_a_tensor_stays_itself():
    x = torch.arange(6).view(2, 3)
    assert to_device(x, "cpu") is x and to_device(x, torch.device("cpu")) is x


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_host_tensor_reaches_the_gpu_as_it_was_when_copied():
    x = torch.arange(10_000)
    y = to_device(x, "cuda")
    x.add_(1)  # the host changes its tensor at once: the copy came from a pinned copy of it
    assert y.device.type == "cuda" and torch.equal(y.cpu(), torch.arange(10_000))
    assert to_device(y, "cpu").device.type == "cpu" and to_device(y, "cuda") is y


def test_a_wait_inside_torch_is_placed_with_its_caller_outside_torch():
    """host_waits names each place by the frame that made the call and, when that frame is torch's own
    (a helper such as torch.cuda.synchronize), by the nearest caller that is not: where to look."""
    import traceback
    from pathlib import Path

    from solvers.device_copy import _place

    torch_file = str(Path(torch.__file__).parent / "cuda" / "__init__.py")
    stack = traceback.extract_stack()  # this test's frames, under pytest's
    assert _place(torch_file, 1270, stack) == f"torch/cuda/__init__.py:1270 <- test_device_copy.py:{stack[-1].lineno}"
    # a frame of our own is its own place
    assert _place(__file__, 7, stack) == "test_device_copy.py:7"


def test_only_the_sync_debug_modes_report_of_a_wait_counts_as_one():
    """Turning the mode on warns that it "is a prototype feature": the H200 session of 2026-11-27 counted
    that notice as a wait of the step (a filter on "synchroniz")."""
    from solvers.device_copy import _is_wait

    assert _is_wait(UserWarning("called a synchronizing CUDA operation"))
    assert not _is_wait(UserWarning("Synchronization debug mode is a prototype feature and does not yet detect "
                                    "all synchronizing operations"))
