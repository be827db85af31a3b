"""Self-describing checkpoints: one directory per trained solver.

    <dir>/weights.safetensors   the model's state dict (safetensors: no pickle, nothing executed)
    <dir>/checkpoint.json       {"solver": name, "format": 1, "config": {...}, "encoding": {...},
                                 "train_data_hash": "...", "extra": {...}}

``load_checkpoint`` returns the parts; the solver class rebuilds its model from the config and the
encoding and loads the weights. :func:`solvers.registry.load_solver` dispatches on ``"solver"``.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import torch
from safetensors.torch import load_file, save_file

from mwp.problem import Problem
from solvers.vocab import Encoding

FORMAT = 1
WEIGHTS = "weights.safetensors"
META = "checkpoint.json"


class CheckpointError(ValueError):
    """A directory that is not a checkpoint this code can read."""


@dataclass(frozen=True)
class Checkpoint:
    solver: str  # registry name of the solver ("gts", ...)
    config: dict[str, Any]  # the model config as a JSON dict (the solver's config dataclass)
    encoding: Encoding
    state_dict: dict[str, torch.Tensor]
    train_data_hash: str
    extra: dict[str, Any] = field(default_factory=dict)  # anything else JSON (training summary, ...)


def data_hash(problems: Sequence[Problem]) -> str:
    """SHA-256 over the problems' dedupe keys in order: identical training data, identical hash."""
    h = hashlib.sha256()
    for p in problems:
        h.update(p.key().encode("ascii"))
        h.update(b"\n")
    return h.hexdigest()


def save_checkpoint(directory: str | Path, solver: str, config: dict[str, Any], encoding: Encoding,
                    state_dict: dict[str, torch.Tensor], train_data_hash: str,
                    extra: dict[str, Any] | None = None) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # Clones break weight sharing (tied embeddings), which safetensors refuses to store.
    tensors = {k: v.detach().to("cpu").contiguous().clone() for k, v in state_dict.items()}
    save_file(tensors, str(directory / WEIGHTS))
    meta = {"solver": solver, "format": FORMAT, "config": config, "encoding": encoding.to_dict(),
            "train_data_hash": train_data_hash, "extra": extra or {}}
    (directory / META).write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
    return directory


def read_meta(directory: str | Path) -> dict[str, Any]:
    path = Path(directory) / META
    if not path.is_file():
        raise CheckpointError(f"{directory}: no {META}, not a solver checkpoint")
    meta = json.loads(path.read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{directory}: checkpoint format {meta.get('format')!r}, expected {FORMAT}")
    return meta


def load_checkpoint(directory: str | Path, device: str | torch.device = "cpu") -> Checkpoint:
    meta = read_meta(directory)
    weights = Path(directory) / WEIGHTS
    if not weights.is_file():
        raise CheckpointError(f"{directory}: {WEIGHTS} is missing")
    state = load_file(str(weights), device=str(device))
    return Checkpoint(solver=meta["solver"], config=meta["config"], encoding=Encoding.from_dict(meta["encoding"]),
                      state_dict=state, train_data_hash=meta["train_data_hash"], extra=meta.get("extra", {}))
