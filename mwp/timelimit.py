"""A CPU-time limit on a block of pure-Python work (a sympy solve): :func:`cpu_time_limit`.

The limit is on the CPU time of the calling thread, not on wall time: how far a solve may go must not
depend on how loaded the machine is, or a data set would read differently on a busy machine. Past the
deadline :class:`OutOfTime` is raised inside the running code; it is a ``BaseException``, so a
library's ``except Exception`` cannot swallow it.

Two ways to interrupt, both checking ``time.thread_time()``:
- in the main thread, a ``SIGVTALRM`` tick every :data:`_TICK_SECONDS` of CPU time (no cost between
  ticks). The handler fires at most once: it disarms the timer before it raises, so no tick can land
  after the block;
- in any other thread (signals reach only the main thread; Prefect runs tasks in worker threads), a
  trace function of that thread, called on every Python call. Tracing itself roughly triples the CPU
  time of the block, so that budget is :data:`_TRACE_BUDGET` times larger: the same work gets about the
  same room either way. A debugger's or coverage's trace function is paused during the block.

Neither interrupts one long C call (a huge integer product): callers bound their numbers first.
"""
from __future__ import annotations

import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator

_TICK_SECONDS = 0.02  # CPU time between two checks of the deadline (signal way)
_CALLS_BETWEEN_CHECKS = 32  # Python calls between two checks (trace way): a clock read costs ~1 us
_TRACE_BUDGET = 3.0  # measured: a traced sympy solve takes 2.6 times the CPU time of an untraced one


class OutOfTime(BaseException):
    """The block ran past its CPU-time limit (a BaseException: ``except Exception`` lets it through)."""


def cpu_time_limit(seconds: float):
    """Context manager: the block gets at most ``seconds`` of this thread's CPU time, then
    :class:`OutOfTime` is raised inside it."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        return _limit_by_signal(seconds)
    return _limit_by_trace(seconds * _TRACE_BUDGET)


@contextmanager
def _limit_by_signal(seconds: float) -> Iterator[None]:
    deadline = time.thread_time() + seconds
    previous_handler = signal.getsignal(signal.SIGVTALRM)
    previous_timer = (0.0, 0.0)
    armed = True

    def disarm() -> None:
        nonlocal armed
        if armed:
            armed = False
            signal.setitimer(signal.ITIMER_VIRTUAL, *previous_timer)
            signal.signal(signal.SIGVTALRM, previous_handler if previous_handler is not None else signal.SIG_DFL)

    def on_tick(signum, frame) -> None:  # noqa: ARG001 (a signal handler's signature)
        if armed and time.thread_time() > deadline:
            disarm()  # before raising: the exception may land anywhere, even in the block's cleanup
            raise OutOfTime(f"over {seconds} s of CPU time")

    signal.signal(signal.SIGVTALRM, on_tick)
    previous_timer = signal.setitimer(signal.ITIMER_VIRTUAL, _TICK_SECONDS, _TICK_SECONDS)
    try:
        yield
    finally:
        disarm()


@contextmanager
def _limit_by_trace(seconds: float) -> Iterator[None]:
    deadline = time.thread_time() + seconds
    calls = 0

    def on_call(frame, event, arg):  # noqa: ARG001 (a trace function's signature)
        nonlocal calls
        calls += 1
        if calls % _CALLS_BETWEEN_CHECKS == 0 and time.thread_time() > deadline:
            raise OutOfTime(f"over {seconds} s of CPU time")  # Python unsets a trace function that raises
        return None  # no line events: only calls are counted

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        yield
    finally:
        sys.settrace(previous)
