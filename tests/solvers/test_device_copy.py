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
