"""Host-to-device copies that leave the host free to run ahead of the GPU (issue #32).

A copy from pageable host memory (``t.to("cuda")``) makes the host wait for the work already queued on
the stream: torch synchronizes after a blocking copy, and with ``non_blocking=True`` the CUDA driver may
synchronize to stage a pageable source. A training step that copies its batch that way cannot build the
next batch while the GPU runs this one. A pinned source copied with ``non_blocking=True`` does not wait:
torch's caching host allocator keeps the pinned block until the copy's stream event has passed, and the
pinned copy is made here, so nothing on the host writes to it while the copy is under way.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import torch


def to_device(t: torch.Tensor, device: torch.device | str) -> torch.Tensor:
    """``t`` on ``device``: from the host to a CUDA device through pinned memory without waiting;
    anything else as ``t.to(device)`` (on the CPU, ``t`` itself)."""
    device = torch.device(device)
    if device.type != "cuda" or t.device.type != "cpu":
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)


def host_waits(step: Callable[[], object]) -> dict:
    """Runs ``step`` on CUDA with torch's sync debug mode warning at each call that makes the host wait for
    the GPU (a blocking copy, a value read back, a synchronize): how many (``host_waits``) and from where
    (``host_wait_places``, file:line of the Python frame, sorted, at most 8)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            step()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    waits = [w for w in caught if "synchroniz" in str(w.message)]
    places = sorted({f"{Path(w.filename).name}:{w.lineno}" for w in waits})
    return {"host_waits": len(waits), "host_wait_places": places[:8]}
