"""Pointwise tails fused into one kernel each by torch.compile (TorchInductor), for the graphed steps (issue #32).

On the H200 a steady graphed step launched 3,200 to 3,850 kernels a MAWPS batch where issue #32 asks for 1,500
(docs/solvers.md): most of them are short elementwise kernels run one after another, each a few microseconds of
a mostly idle GPU. A CUDA graph removes their launch cost from the host but still runs each as its own kernel.
Here the chains of elementwise operations that the hand-written forward and backward passes run at every
step (the encoder recurrence's gates, solvers/fast_gru.py; the decoder's gated layers, solvers/step_autograd.py;
its attention weights, solvers/gts_decoder.py; the repeated-value rule's choice a wave, solvers/gts_wave_graph.py)
are plain functions wrapped in :class:`Pointwise`: they run as written, or, inside a :func:`fusion` block with
``"inductor"``, compiled once by ``torch.compile`` so that each chain runs as one generated kernel or a few
(Triton on CUDA; C++ loops on the CPU, which may split a chain in up to three). The matrix products stay the
library's.

What decides: a hand-written autograd function reads :func:`fusing` in its forward and keeps the answer for its
backward, so a backward run after the block has ended (an eager step's ``loss.backward()``) matches its forward.
A captured step runs its forward and backward inside the block (solvers/gts_graphs.py); compiling happens in the
capture's warm-up runs, before the capture, and a replay runs the generated kernels without Python.

The same values as the eager code up to floating-point rounding (a fused multiply-add; the attention energies
and the rule's scores a sum over H where the eager code takes a matrix-vector product; float64 tests).
A function is compiled for the first shape it meets and recompiled once for symbolic shapes when a second
comes (torch.compile's automatic dynamic shapes), so a training compiles each function about twice.
"""
from __future__ import annotations

import collections
import contextlib
import shutil
import threading
from collections.abc import Callable, Iterator

import torch

from solvers.base import GRAPH_FUSIONS

FUSIONS = GRAPH_FUSIONS  # TrainConfig.graph_fusion's values

_state = threading.local()


def check_fusion(name: str) -> None:
    if name not in FUSIONS:
        raise ValueError(f"graph_fusion must be one of {', '.join(FUSIONS)}, got {name!r}")


def fusion_unavailable(device: torch.device) -> str | None:
    """Why ``"inductor"`` fusion cannot compile for ``device`` here, or None when it can: TorchInductor generates
    Triton kernels on CUDA and C++ compiled by the system's compiler on the CPU."""
    if device.type == "cuda":
        from torch.utils._triton import has_triton

        return None if has_triton() else "Triton is not installed (TorchInductor writes CUDA kernels in Triton)"
    if device.type == "cpu":
        if shutil.which("g++") or shutil.which("c++") or shutil.which("clang++"):
            return None
        return "no C++ compiler (g++, c++ or clang++) on PATH (TorchInductor compiles C++ for the CPU)"
    return f"TorchInductor fusion is not supported on {device.type}"


def check_fusion_available(name: str, device: torch.device) -> None:
    """Refuses ``name`` (a :data:`FUSIONS` value) where it cannot run on ``device``, saying why."""
    check_fusion(name)
    if name == "inductor":
        why = fusion_unavailable(device)
        if why is not None:
            raise RuntimeError(f"graph_fusion 'inductor' cannot run on {device.type}: {why}; use graph_fusion 'none'")


@contextlib.contextmanager
def fusion(name: str) -> Iterator[None]:
    """Inside the block, the hand-written passes' forwards (and the backwards of those forwards) run their
    :class:`Pointwise` functions compiled when ``name`` is ``"inductor"``, as written when ``"none"``."""
    check_fusion(name)
    before = fusing()
    _state.on = name == "inductor"
    try:
        yield
    finally:
        _state.on = before


def fusing() -> bool:
    """Whether this thread is inside a ``fusion("inductor")`` block."""
    return getattr(_state, "on", False)


class Pointwise:
    """An elementwise function (tensors in, tensors out, in-place writes to its arguments allowed) that runs as
    written, or with ``fused=True`` compiled by torch.compile (fullgraph: one graph, no Python fallback), the
    compiled function made at its first fused call and kept for the process."""

    def __init__(self, fn: Callable[..., object]):
        self.fn = fn
        self._compiled: Callable[..., object] | None = None
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __call__(self, *args: torch.Tensor, fused: bool = False):
        if not fused:
            return self.fn(*args)
        if self._compiled is None:
            # each generated C++ kernel a profiler event of its own (the CPU op counts of bench/gpu_speed.py and
            # the tests; a CUDA profile sees Triton's kernels anyway); outside a profile the cost is a flag check
            self._compiled = torch.compile(self.fn, fullgraph=True, options={"cpp.enable_kernel_profile": True})
        return self._compiled(*args)


def pointwise(fn: Callable[..., object]) -> Pointwise:
    """Decorator: ``fn`` as a :class:`Pointwise`."""
    return Pointwise(fn)


# Aten operations that launch no kernel on a GPU themselves: views, metadata, allocations without a fill, and
# conversions whose copy, when there is one, is an operation of its own inside them (counted there).
NO_KERNEL = frozenset(
    "aten::" + name for name in (
        "view", "slice", "select", "unbind", "as_strided", "transpose", "t", "expand", "unsqueeze", "squeeze",
        "reshape", "alias", "detach", "detach_", "split", "split_with_sizes", "chunk", "narrow", "permute", "empty",
        "empty_like", "empty_strided", "new_empty", "new_empty_strided", "resolve_conj", "resolve_neg", "_unsafe_view",
        "lift_fresh", "result_type", "to", "contiguous", "expand_as", "view_as", "unflatten", "flatten", "movedim",
        "squeeze_", "unsqueeze_", "_reshape_alias"))


def dispatches(fn: Callable[[], object]) -> "collections.Counter[str]":
    """What running ``fn`` on the CPU dispatches that would launch a GPU kernel, by name: each aten operation not in
    :data:`NO_KERNEL` that no other such operation called (a composite counts once, a copy inside a conversion
    counts), and as ``"generated"`` each TorchInductor kernel run (on the CPU a C++ kernel, an event of its own as
    :class:`Pointwise` compiles them). A device-independent proxy for a CUDA step's kernels (a library call may
    launch more than one)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    counts: collections.Counter[str] = collections.Counter()
    for e in prof.events():
        if "cpp_fused_" in e.name:
            counts["generated"] += 1
        elif _launches(e) and not any(_launches(a) for a in _ancestors(e)):
            counts[e.name] += 1
    return counts


def _launches(event) -> bool:
    return event.name.startswith("aten::") and event.name not in NO_KERNEL


def _ancestors(event) -> Iterator:
    parent = event.cpu_parent
    while parent is not None:
        yield parent
        parent = parent.cpu_parent
