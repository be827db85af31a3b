"""Stops landing inside MLflow's SQLite writes and reads, and what the ending of a stopped run meets.

    .venv/bin/python bench/stop_inside_writes.py [--tries 200] [--no-release] [--seed 0]

A real store in a temporary folder; each try logs metrics and reads the run in a loop while a timer thread sends
SIGUSR1 at a random moment within 30 ms; the handler raises KeyboardInterrupt, as compaug's does on SIGINT and
SIGTERM (flows/signals.py). Then, as a stopped run's ending does, ``tasks.loop.tracking.release_interrupted_write``
(unless ``--no-release``), and a check whether another connection can take the EXCLUSIVE lock a commit needs,
waiting 0.2 s (MLflow's own writes wait 20 s, then fail "database is locked"). Prints how many tries left the store
locked and how many of those were freed. Without the release a lock left behind is never freed, so the run stops
at the first try that stays locked (its later writes would hang 20 s each).
"""
from __future__ import annotations

import argparse
import collections
import logging
import os
import random
import signal
import sqlite3
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _locked(database: Path) -> bool:
    other = sqlite3.connect(database, timeout=0.2)
    try:
        other.execute("BEGIN EXCLUSIVE")
        other.rollback()
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        other.close()


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> dict[str, int]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=200)
    parser.add_argument("--no-release", action="store_true", help="end without release_interrupted_write")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    logging.getLogger("mlflow").setLevel(logging.WARNING)
    from mlflow.tracking import MlflowClient

    from tasks.loop.tracking import release_interrupted_write

    rng = random.Random(args.seed)
    database = Path(tempfile.mkdtemp(prefix="stop-inside-writes-")) / "mlflow.db"
    client = MlflowClient(f"sqlite:///{database}")
    run = client.create_run(client.create_experiment("stops")).info.run_id
    previous = signal.signal(signal.SIGUSR1, _interrupt)
    counts: collections.Counter = collections.Counter()
    try:
        for i in range(args.tries):
            timer = threading.Timer(rng.uniform(0, 0.03), os.kill, (os.getpid(), signal.SIGUSR1))
            try:
                try:
                    timer.start()
                    for step in range(100):
                        client.log_metric(run, "m", float(step), step=step)
                        client.get_run(run)
                    timer.cancel()
                    counts["not stopped (the writes finished first)"] += 1
                except KeyboardInterrupt as stop:
                    before = _locked(database)
                    if not args.no_release:
                        release_interrupted_write(client, stop)
                    after = _locked(database)
                    counts["stopped, store locked" if before else "stopped, store free"] += 1
                    if before and not after:
                        counts["  of those locked: freed"] += 1
                    if after:
                        counts["  of those locked: STILL locked"] += 1
                        print(f"try {i}: the store stays locked; stopping here", flush=True)
                        break
            finally:
                try:
                    timer.join()
                except KeyboardInterrupt:  # the timer fired after the writes finished, before its cancel
                    pass
    finally:
        signal.signal(signal.SIGUSR1, previous)
    tries = sum(n for k, n in counts.items() if not k.startswith("  "))
    print(f"{'without' if args.no_release else 'with'} the release, {tries} tries:")
    order = ["not stopped (the writes finished first)", "stopped, store free", "stopped, store locked",
             "  of those locked: freed", "  of those locked: STILL locked"]
    for key in order:
        print(f"  {counts[key]:5d}  {key}")
    return dict(counts)


if __name__ == "__main__":
    main()
