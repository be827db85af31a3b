"""Host-to-device copies that leave the host free to run ahead of the GPU (issue #32).

A copy from pageable host memory (``t.to("cuda")``) makes the host wait for the work already queued on
the stream: torch synchronizes after a blocking copy, and with ``non_blocking=True`` the CUDA driver may
synchronize to stage a pageable source. A training step that copies its batch that way cannot build the
next batch while the GPU runs this one. A pinned source copied with ``non_blocking=True`` does not wait:
torch's caching host allocator keeps the pinned block until the copy's stream event has passed, and the
pinned copy is made here, so nothing on the host writes to it while the copy is under way.
"""
from __future__ import annotations

import traceback
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
    (``host_wait_places``, sorted, at most 8: the Python frame that made the call, and where it lies outside
    torch, the nearest caller that is not torch's, ``torch/cuda/__init__.py:1270 <- trainer.py:212``)."""
    places: list[str] = []

    def record(message, category, filename, lineno, file=None, line=None):
        if _is_wait(message):
            places.append(_place(filename, lineno, traceback.extract_stack()[:-1]))

    # the mode is turned on before the recording starts: turning it on warns once a process that the mode
    # "is a prototype feature" (torch 2.11), a warning of its own, not a wait; the H200 session of 2026-11-27
    # counted it as one while the filter (_is_wait) took any warning that said "synchroniz"
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings():  # restores showwarning and the filters after
            warnings.simplefilter("always")
            warnings.showwarning = record
            step()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    return {"host_waits": len(places), "host_wait_places": sorted(set(places))[:8]}


def _is_wait(message: Warning | str) -> bool:
    """Whether a warning is the sync debug mode's report of a host wait (torch's c10 warn_or_error_on_sync:
    "called a synchronizing CUDA operation"), not another warning that speaks of synchronization."""
    return "called a synchronizing CUDA operation" in str(message)


def _place(filename: str, lineno: int, stack: list[traceback.FrameSummary]) -> str:
    """file:line of a warning's frame (a path below torch's package relative to it, else the file's name),
    followed, when that frame is torch's, by the nearest frame of the stack that is not."""
    torch_dir = Path(torch.__file__).parent

    def name(path: str, line: int | None) -> str:
        p = Path(path)
        shown = f"torch/{p.relative_to(torch_dir)}" if p.is_relative_to(torch_dir) else p.name
        return f"{shown}:{line}"

    where = name(filename, lineno)
    if Path(filename).is_relative_to(torch_dir):
        caller = next((f for f in reversed(stack) if not Path(f.filename).is_relative_to(torch_dir)
                       and Path(f.filename).name != "warnings.py"), None)
        if caller is not None:
            where += f" <- {name(caller.filename, caller.lineno)}"
    return where
