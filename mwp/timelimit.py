"""A CPU-time limit on a block of pure-Python work (a sympy solve): ``with cpu_time_limit(0.5): ...``.

The limit is on the CPU time of the calling thread, not on wall time: how far a solve may go must not
depend on how loaded the machine is, or a data set would read differently on a busy machine. Past the
deadline :class:`OutOfTime` is raised inside the running code; it is a ``BaseException``, so a
library's ``except Exception`` cannot swallow it.

Two ways to interrupt, both reading ``time.thread_time()``:
- in the main thread, a ``SIGVTALRM`` tick every :data:`_TICK_SECONDS` of CPU time (no cost between
  ticks);
- in any other thread (signals reach only the main thread; Prefect runs tasks in worker threads), a
  trace function of that thread, called on every Python call. Tracing itself roughly triples the CPU
  time of the block, so that budget is :data:`_TRACE_BUDGET` times larger: the same work gets about the
  same room either way. A debugger's or coverage's trace function is paused during the block.

The cycle collector is off inside the block (and back as it was after): a collection that the block's
allocations trigger walks the whole process's heap, not the block's objects (0.9 s of CPU in a process holding
Math23K's problems), and that time would be charged to the block's thread. A solve of 0.05 s failed its 0.5 s
limit in the test suite's long-lived worker process, most likely so.

An exception raised in a garbage-collector callback or a ``__del__`` method is printed and dropped by
Python, so none is raised there; the signal way raises again at every later tick until the block ends,
and never in the limiter's own enter and exit (no tick can escape the block). Neither way interrupts
one long C call (a huge integer product): callers bound their numbers first. The trace way sees only
calls: a loop inside one Python frame that calls no Python function runs on (sympy's work is calls).
"""
from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from types import FrameType, TracebackType

_TICK_SECONDS = 0.02  # CPU time between two checks of the deadline (signal way)
_CALLS_BETWEEN_CHECKS = 32  # Python calls between two checks (trace way): a clock read costs ~1 us
_TRACE_BUDGET = 3.0  # measured: a traced sympy solve takes 2.6 times the CPU time of an untraced one


class OutOfTime(BaseException):
    """The block ran past its CPU-time limit (a BaseException: ``except Exception`` lets it through)."""


def cpu_time_limit(seconds: float) -> "_SignalLimit | _TraceLimit":
    """Context manager: the block gets at most ``seconds`` of this thread's CPU time, then
    :class:`OutOfTime` is raised inside it."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        return _SignalLimit(seconds)
    return _TraceLimit(seconds * _TRACE_BUDGET)


_WEAKREF_FILES = ("weakref.py", "_weakrefset.py")  # where weakref callbacks live


def _collector_off() -> bool:
    """Turn the cycle collector off; whether it was on (the module's docstring says why)."""
    was_on = gc.isenabled()
    gc.disable()
    return was_on


def _drops_exceptions(frame: FrameType) -> bool:
    """Whether ``frame`` runs where Python prints and drops an exception instead of raising it: a finalizer, a
    gc callback, or the weakref modules' code, whose callbacks (a WeakValueDictionary's ``remove``) run inside
    garbage collection (a tick skipped in their ordinary code only waits for the next one)."""
    code = frame.f_code
    return code.co_name == "__del__" or os.path.basename(code.co_filename) in _WEAKREF_FILES or any(
        getattr(callback, "__code__", None) is code for callback in gc.callbacks)


class _SignalLimit:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.active = False

    def __enter__(self) -> None:
        self.deadline = time.thread_time() + self.seconds
        self.block_frame = sys._getframe(1)  # the frame running the with statement
        self.active = True
        self.collector_was_on = _collector_off()
        self.previous_handler = signal.signal(signal.SIGVTALRM, self._on_tick)
        self.previous_timer = signal.setitimer(signal.ITIMER_VIRTUAL, _TICK_SECONDS, _TICK_SECONDS)

    def __exit__(self, kind: type | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.active = False  # a tick inside __exit__ does nothing (see _on_tick), so this always runs
        signal.setitimer(signal.ITIMER_VIRTUAL, *self.previous_timer)
        previous = self.previous_handler
        signal.signal(signal.SIGVTALRM, previous if previous is not None else signal.SIG_DFL)
        if self.collector_was_on:
            gc.enable()

    def _on_tick(self, signum: int, frame: FrameType | None) -> None:  # noqa: ARG002 (a handler's signature)
        if not self.active or frame is None or time.thread_time() <= self.deadline:
            return
        inside = False
        while frame is not None:
            if frame.f_code in (_SignalLimit.__enter__.__code__, _SignalLimit.__exit__.__code__) or _drops_exceptions(frame):
                return
            if frame is self.block_frame:
                inside = True
                break
            frame = frame.f_back
        if inside:
            raise OutOfTime(f"over {self.seconds} s of CPU time")


class _TraceLimit:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.calls = 0

    def __enter__(self) -> None:
        self.deadline = time.thread_time() + self.seconds
        self.collector_was_on = _collector_off()
        self.previous = sys.gettrace()
        sys.settrace(self._on_call)

    def __exit__(self, kind: type | None, error: BaseException | None, trace: TracebackType | None) -> None:
        sys.settrace(self.previous)
        if self.collector_was_on:
            gc.enable()

    def _on_call(self, frame: FrameType, event: str, arg: object) -> None:  # noqa: ARG002
        self.calls += 1
        if (self.calls % _CALLS_BETWEEN_CHECKS == 0 and time.thread_time() > self.deadline
                and not _drops_exceptions(frame)):
            raise OutOfTime(f"over {self.seconds} s of CPU time")  # Python unsets a trace function that raises
        return None  # no line events: only calls are counted
