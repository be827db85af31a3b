"""A round's candidate scoring split into chunks that Dask workers score in parallel (no Prefect, no MLflow).

The chunks are the fixed ones the single-process scoring uses (``training.chunk_bounds``: SCORE_CHUNK
candidates each, counted from the first candidate, whatever the number of workers), so every candidate is
scored in the same batches beside the same neighbours as in one process, and gets the same float. The
``random`` score is drawn per candidate id, so no chunk changes its stream. A worker gets paths and
numbers only: it reads its chunk's lines of the candidates file, loads the checkpoint from the run
directory and returns the chunk's ids and scores; live models never cross a process boundary. The
caller puts the chunks back in their original order and checks the ids.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mwp.problem import Problem, read_problems_jsonl
from tasks.loop.training import chunk_bounds, load_scorer, score_chunk


@dataclass(frozen=True)
class ChunkScores:
    start: int  # index of the chunk's first candidate in the candidates file
    ids: list[str]
    scores: list[float]
    unscorable: dict[str, int]  # reason -> candidates


def read_candidate_lines(path: Path, start: int, stop: int) -> list[Problem]:
    """Candidates ``start .. stop-1`` of a JSONL file (blank lines skipped, as ``read_problems_jsonl`` does);
    only those lines are parsed."""
    out = []
    with open(path, encoding="utf-8") as fh:
        index = 0
        for line in fh:
            if not line.strip():
                continue
            if index >= stop:
                break
            if index >= start:
                out.append(Problem.from_dict(json.loads(line)))
            index += 1
    return out


def score_chunk_file(checkpoint_dir: str, candidates_path: str, pool_path: str, start: int, stop: int,
                     score_name: str, seed: int, device: str, threads: int | None) -> ChunkScores:
    """One chunk, in whichever process runs it (a Dask worker): ``threads`` torch threads (None: the
    worker's own setting), the checkpoint and the candidates read from their files."""
    from ranking.scores import POOL_SCORES

    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    part = read_candidate_lines(Path(candidates_path), start, stop)
    pool = {p.id: p for p in read_problems_jsonl(pool_path)} if score_name in POOL_SCORES else {}
    scores, unscorable = score_chunk(load_scorer(Path(checkpoint_dir), score_name, device), part, score_name,
                                     pool, seed)
    return ChunkScores(start, [p.id for p in part], scores, dict(unscorable))


def score_on_dask(address: str, checkpoint_dir: Path, candidates_path: Path, pool_path: Path, ids: list[str],
                  score_name: str, seed: int, device: str, threads: int | None) -> tuple[list[float], Counter[str]]:
    """Scores of the candidates in ``candidates_path`` (whose ids, in file order, are ``ids``), one Dask task
    per fixed chunk on the scheduler at ``address``, put back in the file's order. The paths are made
    absolute: a worker on another machine needs them at the same place (a shared mount)."""
    from distributed import Client

    paths = [str(Path(p).resolve()) for p in (checkpoint_dir, candidates_path, pool_path)]
    bounds = chunk_bounds(len(ids))
    with Client(address, timeout=30) as client:
        futures = [client.submit(score_chunk_file, *paths, start, stop, score_name, seed, device, threads,
                                 pure=False) for start, stop in bounds]
        parts: list[ChunkScores] = client.gather(futures)
    scores: list[float] = []
    unscorable: Counter[str] = Counter()
    for (start, stop), part in zip(bounds, parts):
        if part.start != start or part.ids != ids[start:stop]:
            raise RuntimeError(f"chunk {start}..{stop} of {candidates_path} came back with other candidates "
                               "(the file changed while it was scored?)")
        scores.extend(part.scores)
        unscorable.update(part.unscorable)
    return scores, unscorable


def check_scheduler(address: str, timeout: float = 5.0) -> None:
    """One bounded connection to a Dask scheduler, before any training: a clear line when it is not there."""
    from distributed import Client

    try:
        Client(address, timeout=timeout).close()
    except (OSError, TimeoutError) as err:
        raise ValueError(f"Dask scheduler {address} is not reachable: {err}") from err


def default_threads(workers: int) -> int:
    """Torch threads of each of ``workers`` processes on this machine, so that together they do not
    oversubscribe its cores."""
    return max(1, (os.cpu_count() or 1) // workers)


def local_cluster_kwargs(workers: int) -> dict[str, Any]:
    """A Dask LocalCluster of ``workers`` single-threaded processes that listens on 127.0.0.1 only: no
    dashboard, and the scheduler's health endpoint on a free loopback port (its default is :8787 on
    every interface)."""
    return {"n_workers": workers, "threads_per_worker": 1, "processes": True, "host": "127.0.0.1",
            "dashboard_address": None, "scheduler_kwargs": {"dashboard_address": "127.0.0.1:0"}}


class ScoringWorkers:
    """Where a run's scoring chunks go: nowhere (one process), an existing scheduler (checked when this
    object is made, before any training), or a LocalCluster of ``workers`` processes started at the first
    round that scores and closed with the run. Workers listen on 127.0.0.1 only, with no dashboard."""

    def __init__(self, workers: int = 1, address: str | None = None, threads: int | None = None):
        self.workers, self._address = workers, address
        self.threads = default_threads(workers) if threads is None and not address else threads
        self._cluster: Any = None
        if address:
            check_scheduler(address)

    @property
    def sharded(self) -> bool:
        return bool(self._address) or self.workers > 1

    def address(self) -> str | None:
        """The scheduler to send chunks to (starting the local cluster if needed); None: score here."""
        if self._address or self.workers == 1:
            return self._address
        if self._cluster is None:
            from distributed import LocalCluster

            self._cluster = LocalCluster(**local_cluster_kwargs(self.workers))
        return self._cluster.scheduler_address

    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
