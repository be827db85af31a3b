"""What a user sees while a loop runs: rounds done of the total, elapsed time and an ETA.

On a terminal (stderr a TTY) a tqdm bar of rounds sits above the trainer's own bar of batches. The
ETA is the seconds per training epoch measured over this session's rounds (whole rounds: generation,
scoring and evaluation included) times the epochs the rounds left will train, less the time the current
round has run, so that warm-started rounds (fewer epochs than round 0) are estimated for what they
train; a growing pool makes later epochs longer, so it is rough. Elsewhere (a log file, a
deployment's worker) the same facts come as short lines: one when a round ends and, while a round
trains, at most one every ``interval`` seconds with the epoch, loss, validation accuracy and the
training's ETA. Nothing here touches MLflow or Prefect: the flow calls it.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Callable, Sequence, TextIO

from tqdm import tqdm

from solvers.base import EpochStats

LINE_INTERVAL_S = 30.0  # the least time between two epoch lines in a log


def duration(seconds: float) -> str:
    """``mm:ss`` or ``h:mm:ss`` (tqdm's own format, so bar and lines read alike)."""
    return tqdm.format_interval(max(0.0, seconds))


def _terminal(stream: TextIO) -> bool:
    """A terminal a bar can be drawn on: a TTY with a width (a pty of width 0 would show no bar at all)."""
    try:
        return stream.isatty() and os.get_terminal_size(stream.fileno()).columns > 0
    except (AttributeError, OSError, ValueError):
        return False


class LoopProgress:
    """Progress of rounds 0..T. ``done`` rounds were complete before this session (a resumed run);
    ``epochs`` is every round's epoch count, or one count per round (round 0 first)."""

    def __init__(self, total: int, done: int, epochs: int | Sequence[int], stream: TextIO | None = None,
                 tty: bool | None = None, interval: float = LINE_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic):
        self.total, self.done = total, done
        self.epochs = [epochs] * total if isinstance(epochs, int) else list(epochs)
        if len(self.epochs) != total:
            raise ValueError(f"epochs for {len(self.epochs)} rounds, but {total} rounds")
        self.stream = stream if stream is not None else sys.stderr
        self.tty = _terminal(self.stream) if tty is None else tty
        self.interval, self.clock = interval, clock
        self.started = self._last_line = clock()
        self._round_started = self._train_started = self.started
        self._running: int | None = None  # the round under way
        self.round_seconds: list[float] = []  # rounds measured in this session
        self._measured_epochs = 0  # the epochs those rounds planned
        self.bar = None
        if self.tty:
            self.bar = tqdm(total=total, initial=done, desc="rounds", unit="round", smoothing=0, file=self.stream,
                            position=0, leave=True, dynamic_ncols=True,
                            bar_format="{desc} {n_fmt}/{total_fmt} |{bar}| [{elapsed}{postfix}]")

    def __enter__(self) -> "LoopProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def eta(self, now: float) -> float | None:
        """Seconds left: the measured seconds per epoch times the epochs of the rounds left, less what
        the current round has run (a round past its estimate counts as ending now); None before a round
        is measured. Rounds run in order, so the rounds left are ``done``..T."""
        if not self.round_seconds:
            return None
        per_epoch = sum(self.round_seconds) / max(1, self._measured_epochs)
        left = [per_epoch * e for e in self.epochs[self.done:]]
        if self._running is None or not left:
            return sum(left)
        return sum(left[1:]) + max(0.0, left[0] - (now - self._round_started))

    def _eta_text(self, now: float) -> str:
        eta = self.eta(now)
        return "ETA " + (duration(eta) if eta is not None else "?")

    def round_started(self, round_index: int) -> None:
        self._round_started = self.clock()
        self._running = round_index
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self._eta_text(self._round_started)}, round {round_index}")

    def training(self, round_index: int) -> Callable[[EpochStats], None]:
        """The callable that shows each epoch of this round's training (the trainer's ``on_epoch``)."""
        self._train_started = self.clock()
        epochs = self.epochs[round_index]
        resumed_after: list[int] = []  # a training resumed from its saved state starts past epoch 1

        def show(stats: EpochStats) -> None:
            now = self.clock()
            if not resumed_after:
                resumed_after.append(stats.epoch - 1)
            if self.bar is not None:
                where = f"round {round_index}: epoch {stats.epoch}/{epochs}"
                self.bar.set_postfix_str(f"{self._eta_text(now)}, {where}")
                return
            if now - self._last_line < self.interval:
                return
            run_here = stats.epoch - resumed_after[0]  # the epochs this sitting's time was spent on
            left = (now - self._train_started) / run_here * (epochs - stats.epoch)
            acc = "" if stats.valid_answer_acc is None else f", valid acc {stats.valid_answer_acc:.3f}"
            acc += "" if stats.valid_loss is None else f", valid loss {stats.valid_loss:.4f}"
            self._line(f"round {round_index} epoch {stats.epoch}/{epochs}: loss {stats.train_loss:.4f}{acc}; "
                       f"training ETA {duration(left)}", now)

        return show

    def round_finished(self, round_index: int) -> None:
        now = self.clock()
        self.round_seconds.append(now - self._round_started)
        self._measured_epochs += self.epochs[round_index]
        self.done += 1
        self._running = None
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self._eta_text(now)}, round {round_index} done", refresh=False)
            self.bar.update(1)
            return
        self._line(f"round {round_index} done in {duration(self.round_seconds[-1])}: {self.done}/{self.total} rounds, "
                   f"elapsed {duration(now - self.started)}, {self._eta_text(now)}", now)

    def _line(self, text: str, now: float) -> None:
        print(f"compaug: {text}", file=self.stream, flush=True)
        self._last_line = now
