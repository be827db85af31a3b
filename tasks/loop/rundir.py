"""The run directory: where each round's files live, and reading and writing them (pure).

Layout::

    params.json, mlflow.json                                  (the run's parameters; its MLflow run ids)
    data/train.jsonl, data/valid.jsonl, data/test_<name>.jsonl, data/report.json,
    data/quantity_labeler.json                                (with a split file: its atom labels)
    round_00/pool.jsonl, round_00/checkpoint/, round_00/metrics.json  (round 0: the original pool)
    round_NN/candidates.jsonl, scored.jsonl, kept.jsonl, pool.jsonl, checkpoint/, metrics.json
    round_NN/correct_<set>.json                               (answer correctness per test problem)
    round_NN/epochs.json                                      (per-epoch loss and validation accuracy)
A round is complete when its metrics.json exists and reads: it is written last, after everything in the
round's folder is on disk, durably (:mod:`mwp.durable`), so a crash of the machine leaves it whole or
absent. A marker that cannot be read (damaged on disk, cut short by hand) does not count: that round is
redone, and the markers of later rounds (which built on it) are set aside as ``metrics.json.redone``.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Iterable

from mwp.durable import sync_tree, write_json_durable
from mwp.problem import Problem, read_problems_jsonl
from tasks.loop.record import RoundRecord


class RunLock:
    """A held run-directory lock (:func:`lock`); ``close`` releases this holder's share of it."""

    def __init__(self, key: str):
        self.key, self.closed = key, False

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with _HELD_GUARD:
            entry = _HELD[self.key]
            entry[1] -= 1
            if entry[1] == 0:
                entry[0].close()
                del _HELD[self.key]


class RunRefused(ValueError):
    """A run that must not start (its directory is in use, its data changed since it started); the message
    is one line that names the directory and what to do. Raised before anything is written or tracked, so
    the command line prints it and a flow run started by a deployment ends Cancelled with it."""


_HELD: dict[str, list] = {}  # resolved run directory -> [open lock file, holders in this process]
_HELD_GUARD = threading.Lock()


def lock(run_dir: Path) -> RunLock:
    """An exclusive lock on the run directory for as long as a returned lock stays open (the process
    holds it; it goes with the process). A second run on the same directory is refused, never
    interleaved. Within one process the lock is shared: the command that took it before starting any
    work (so that a refusal comes before a Prefect flow run exists) can run the flow that takes it again."""
    import fcntl

    key = str(Path(run_dir).resolve())
    with _HELD_GUARD:
        if key in _HELD:
            _HELD[key][1] += 1
            return RunLock(key)
        handle = open(run_dir / ".lock", "a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise RunRefused(f"{run_dir} is in use by another run ({holder}); wait for it or use another --out") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        _HELD[key] = [handle, 1]
        return RunLock(key)


def round_dir(run_dir: Path, round_index: int) -> Path:
    return run_dir / f"round_{round_index:02d}"


def write_json_atomic(path: Path, data: Any) -> None:
    """``data`` as JSON at ``path``: the old file or the new one after any crash (:mod:`mwp.durable`)."""
    write_json_durable(path, data, indent=2, sort_keys=True, default=str)


class UnreadableRecord(ValueError):
    """A round's metrics.json that exists but is not a round record; the message names the file."""


def record_path(run_dir: Path, round_index: int) -> Path:
    return round_dir(run_dir, round_index) / "metrics.json"


def completed_rounds(run_dir: Path) -> list[int]:
    """Indices of the rounds whose metrics.json exists and reads, in order, stopping at the first gap
    (a missing or unreadable marker)."""
    done = []
    i = 0
    while record_path(run_dir, i).exists():
        try:
            read_record(run_dir, i)
        except UnreadableRecord:
            break
        done.append(i)
        i += 1
    return done


def unreadable_records(run_dir: Path) -> list[tuple[Path, str]]:
    """(file, why) of every round marker that exists but cannot be read."""
    out = []
    for path in sorted(run_dir.glob("round_*/metrics.json")):
        try:
            _parse_record(path)
        except UnreadableRecord as err:
            out.append((path, str(err)))
    return out


def set_aside_records_from(run_dir: Path, first_round: int) -> list[Path]:
    """Rename the markers of ``first_round`` and later rounds to ``metrics.json.redone``, so those rounds
    are redone and none of them counts as complete before it is; the renamed files are returned."""
    moved = []
    for path in sorted(run_dir.glob("round_*/metrics.json")):
        index = path.parent.name.removeprefix("round_")
        if index.isdigit() and int(index) >= first_round:
            aside = path.with_name("metrics.json.redone")
            os.replace(path, aside)
            moved.append(aside)
    return moved


def redo_unreadable(run_dir: Path) -> list[str]:
    """Before a run resumes: when a round's marker cannot be read, that round and every later one are
    redone (their markers set aside, :func:`set_aside_records_from`). Returns one line per marker
    found unreadable and per marker set aside, for the run's log; nothing when all read."""
    bad = unreadable_records(run_dir)
    if not bad:
        return []
    first = min(int(path.parent.name.removeprefix("round_")) for path, _ in bad)
    lines = [f"{why}; round {int(path.parent.name.removeprefix('round_'))} is redone" for path, why in bad]
    moved = set_aside_records_from(run_dir, first)
    lines += [f"{path}: set aside, its round follows round {first} and is redone" for path in moved
              if int(path.parent.name.removeprefix("round_")) > first]
    return lines


def _parse_record(path: Path) -> RoundRecord:
    try:
        return RoundRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError, AttributeError) as err:  # JSONDecodeError is a ValueError
        raise UnreadableRecord(f"{path}: not a round record ({err.__class__.__name__}: {err})") from err


def read_record(run_dir: Path, round_index: int) -> RoundRecord:
    """The record of a completed round (its metrics.json); :class:`UnreadableRecord` naming the file
    when it is not one."""
    return _parse_record(record_path(run_dir, round_index))


def write_record(run_dir: Path, record: RoundRecord) -> None:
    """Written last, once every file of the round's folder is on disk: from then on the round counts
    as complete, also after a power cut."""
    directory = round_dir(run_dir, record.round)
    sync_tree(directory)
    write_json_atomic(directory / "metrics.json", record.to_dict())


def write_scored(path: Path, problems: Iterable[Problem], scores: Iterable[float]) -> int:
    """Problems as JSONL, each with its ``confidence`` (the score that ranked it)."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for problem, score in zip(problems, scores, strict=True):
            record = problem.to_dict()
            record["confidence"] = score
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_scored(path: Path) -> list[tuple[Problem, float]]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = json.loads(line)
                out.append((Problem.from_dict(record), float(record["confidence"])))
    return out


def current_pool(train: Path, run_dir: Path, up_to_round: int) -> list[Problem]:
    """The training pool after ``up_to_round``: the original training set plus every round's kept problems."""
    pool = read_problems_jsonl(train)
    for r in range(1, up_to_round + 1):
        kept = round_dir(run_dir, r) / "kept.jsonl"
        pool.extend(p for p, _ in read_scored(kept))
    return pool


def parameter_changes(before: dict[str, Any], after: dict[str, Any], prefix: str = "") -> list[str]:
    """Each setting that differs between two parameter documents, as ``section.key: old -> new`` (nested
    sections walked; a key present on one side only shows as missing on the other)."""
    changes = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, "(missing)"), after.get(key, "(missing)")
        if isinstance(old, dict) and isinstance(new, dict):
            changes += parameter_changes(old, new, f"{prefix}{key}.")
        elif old != new:
            changes.append(f"{prefix}{key}: {json.dumps(old)} -> {json.dumps(new)}")
    return changes
