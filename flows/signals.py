"""Ctrl-C and SIGTERM on ``compaug run`` and ``compaug study``: an orderly stop within seconds.

The first SIGINT or SIGTERM raises ``Stopped`` (a ``KeyboardInterrupt``) in the main thread. Inside a flow
run Prefect turns SIGTERM into its own ``TerminationSignal`` first and marks the flow run Crashed, then
sends the signal again to the handler below. On the way out the loop marks its MLflow runs KILLED
(flows/augment_loop.py, flows/study.py); here the flow runs the stop crashed, with the flow runs below them
(a study's cells on Dask workers) and their unfinished task runs, are set Cancelled; the temporary Prefect
server is stopped (flows/prefect_server.py); one line is printed; the exit status is 128 + the signal's
number (130 for SIGINT, 143 for SIGTERM). Further signals during the stop are ignored: it takes seconds, and
kill -9 remains (docs/reliability.md, "Signals").
"""
from __future__ import annotations

import gc
import signal
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(KeyboardInterrupt):
    """Raised in the main thread by the first SIGINT or SIGTERM (a KeyboardInterrupt, so that code that
    treats Ctrl-C specially treats SIGTERM the same way)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def is_stop(err: BaseException) -> bool:
    """Whether ``err`` is a run being stopped by a signal (Ctrl-C, SIGTERM), not a failure: the stop itself, or an
    error raised while it was being handled. A SIGTERM that lands as Prefect starts a task run makes Prefect's own
    crash handling fail (``ValueError: Task run is not set``, raised while handling the TerminationSignal, which
    is its context): that is the stop too."""
    from prefect.exceptions import TerminationSignal

    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, (KeyboardInterrupt, TerminationSignal)):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False


_crashed_flow_runs: list[str] = []  # flow runs of this process that a BaseException ended (hook below)
_received: list[int] = []  # the signals received, in order
_swallowed: list[int] = []  # stops raised where Python ignores exceptions, to be raised again
REDELIVER_SECONDS = 0.05


def remember_crash(flow, flow_run, state) -> None:
    """``on_crashed`` hook of compaug's flows: a stop sets these flow runs Cancelled afterwards (the engine
    marks them Crashed on its way out; nothing in Prefect 3 lets an in-process signal end one Cancelled)."""
    _crashed_flow_runs.append(str(flow_run.id))


def _handle(signum: int, frame) -> None:
    if _swallowed:  # the stop raised again after Python ignored it (below)
        del _swallowed[:]
        raise Stopped(_received[0] if _received else signum)
    _received.append(signum)
    if len(_received) == 1:
        raise Stopped(signum)
    # a second signal while stopping: the stop finishes (seconds); kill -9 is for a stop that hangs


def _unraisable(previous: Callable) -> Callable:
    """A ``sys.unraisablehook`` that raises a swallowed stop again. The handler runs between two
    instructions of the main thread, wherever it is; when that is a weakref callback or a ``__del__``
    (the garbage collector runs them at any allocation), Python prints the exception and drops it, and
    the run would go on with every later signal ignored. The stop is sent to the main thread once more
    (``_thread.interrupt_main``) a moment later, when it has left that place."""
    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, Stopped):
            import _thread
            import threading

            _swallowed.append(unraisable.exc_value.signum)
            threading.Timer(REDELIVER_SECONDS, _thread.interrupt_main, args=(unraisable.exc_value.signum,)).start()
            return
        previous(unraisable)

    return hook


@contextmanager
def _stop_handlers() -> Iterator[None]:
    """Our handler for SIGINT and SIGTERM while the block runs (main thread only). A SIGINT that the
    process was started ignoring (a shell's background job) stays ignored."""
    installed = {}
    for signum in STOP_SIGNALS:
        if signum == signal.SIGINT and signal.getsignal(signum) == signal.SIG_IGN:
            continue
        try:
            installed[signum] = signal.signal(signum, _handle)
        except ValueError:  # not the main thread: signals stay as they are
            pass
    previous_hook = sys.unraisablehook
    if installed:
        sys.unraisablehook = _unraisable(previous_hook)
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        for signum, previous in installed.items():
            signal.signal(signum, previous)


def cancel_flow_runs(roots: list[str], message: str) -> int:
    """Set Cancelled the flow runs ``roots`` and every flow run below them (subflows, also those run on Dask
    workers) that is not Completed or Failed, and their task runs that have not finished; returns how many
    flow runs were set."""
    from prefect import get_client
    from prefect.client.schemas.filters import (FlowRunFilter, FlowRunFilterId, FlowRunFilterParentFlowRunId,
                                                TaskRunFilter, TaskRunFilterState, TaskRunFilterStateType)
    from prefect.client.schemas.objects import StateType
    from prefect.states import Cancelled

    unfinished = [StateType.SCHEDULED, StateType.PENDING, StateType.RUNNING, StateType.PAUSED,
                  StateType.CANCELLING, StateType.CRASHED]
    with get_client(sync_client=True) as client:
        tree, frontier = set(roots), list(roots)
        while frontier:
            below = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=frontier)))
            frontier = [str(r.id) for r in below if str(r.id) not in tree]
            tree.update(frontier)
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=sorted(tree))))
        cancelled = 0
        for run in runs:
            if run.state is None or run.state.type in unfinished:
                client.set_flow_run_state(run.id, Cancelled(message=message), force=True)
                cancelled += 1
        tasks = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=sorted(tree))),
            task_run_filter=TaskRunFilter(state=TaskRunFilterState(type=TaskRunFilterStateType(any_=unfinished))))
        for task_run in tasks:
            client.set_task_run_state(task_run.id, Cancelled(message=message), force=True)
    return cancelled


def crash_abandoned_flow_runs(flow_run_ids: list[str], message: str) -> int:
    """Set Crashed those of ``flow_run_ids`` still marked Running (or Pending): earlier flow runs of a run
    directory whose process ended without an orderly stop (kill -9, a power cut). Called by a run that holds
    the directory's lock, so no process works on them any more. Returns how many were set; a flow run the
    server does not know (another server's) is left alone."""
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    from prefect.client.schemas.objects import StateType
    from prefect.states import Crashed

    if not flow_run_ids:
        return 0
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=flow_run_ids)))
        abandoned = [r for r in runs if r.state is not None and r.state.type in (StateType.RUNNING, StateType.PENDING)]
        for run in abandoned:
            client.set_flow_run_state(run.id, Crashed(message=message), force=True)
    return len(abandoned)


def crash_abandoned(mlflow_client, mlflow_run_id: str, current: str | None, logger) -> None:
    """A run resuming its directory sets Crashed the earlier flow runs of that directory (the MLflow run's tag
    ``prefect.flow_run_ids``, tasks/loop/tracking.py) that are still Running: kill -9 left them so."""
    try:
        tag = mlflow_client.get_run(mlflow_run_id).data.tags.get("prefect.flow_run_ids", "")
        earlier = [i for i in tag.split(",") if i and i != str(current)]
        crash_abandoned_flow_runs(earlier, "Its process ended without an orderly stop (kill -9?); the run "
                                           f"directory was resumed by flow run {current}.")
    except Exception as err:  # a record of the past, never a reason to stop this run
        logger.warning("could not mark earlier flow runs of this run directory Crashed: %s", err)


def run_stoppable(command: str, resume_hint: str, body: Callable[[], T]) -> T:
    """``body()`` with a temporary Prefect server (when none is configured) and an orderly stop on SIGINT or
    SIGTERM; a stop prints one line, ``compaug COMMAND: stopped by SIGTERM; RESUME_HINT``, and exits with
    128 + the signal's number."""
    from flows.prefect_server import temporary_server

    del _crashed_flow_runs[:], _received[:], _swallowed[:]
    with _stop_handlers():
        try:
            with temporary_server():
                try:
                    return body()
                except BaseException as err:
                    if is_stop(err) and _crashed_flow_runs:
                        _mark_cancelled(_stop_name(err))
                    raise
        except BaseException as err:
            if not is_stop(err):
                raise
            print(f"compaug {command}: stopped by {_stop_name(err)}; {resume_hint}", file=sys.stderr, flush=True)
            # The process ends now: spare it the interpreter's final garbage collection of a heap of torch,
            # MLflow and Prefect objects, which would delay the exit by seconds.
            gc.freeze()
            raise SystemExit(128 + _stop_signal(err)) from None


def _stop_signal(err: BaseException) -> int:
    if _received:
        return _received[0]
    return getattr(err, "signal", None) or getattr(err, "signum", None) or signal.SIGINT


def _stop_name(err: BaseException) -> str:
    return signal.Signals(_stop_signal(err)).name


def _mark_cancelled(name: str) -> None:
    try:
        cancel_flow_runs(list(dict.fromkeys(_crashed_flow_runs)), f"Stopped by {name}.")
    except Exception as err:  # the run is stopped either way; say what was not recorded
        print(f"compaug: could not mark the stopped flow runs Cancelled: {type(err).__name__}: {err}",
              file=sys.stderr)
