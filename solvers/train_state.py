"""A training's state after each epoch, so that an interrupted training continues where it stopped.

A paper-size GTS training is 80 epochs of half a minute or more on a CPU, and a study or a loop
round that dies (a session ends, a machine reboots) used to start that training over. With
``TrainConfig.resume_dir`` set, :func:`solvers.trainer.train_model` writes ``train_state.pt`` there
after every epoch: the weights, Adam's moments, the learning-rate schedule, every random generator
the training draws from (batch order, dropout), the epoch history and the best epoch's weights.
Started again with the same data, configuration and initial weights, it loads the file and goes on
from the next epoch, and ends with the weights an uninterrupted run would have (on CPU, bit for bit).

The file is written durably (:func:`mwp.durable.write_durable`: a temporary file, fsynced, renamed,
the folder fsynced), so a kill or a power cut during the write leaves the previous epoch's state. It records what it belongs to (:func:`identity`): a state written for
other data, another configuration or other initial weights is refused with an error naming the file
and what differs, never silently continued. Loading uses ``torch.load(weights_only=True)``: tensors,
numbers and containers only, no arbitrary objects.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import random
from pathlib import Path
from typing import Any, Sequence

import torch

from mwp.durable import write_durable
from mwp.problem import Problem
from solvers.checkpoint import data_hash

STATE_FILE = "train_state.pt"
FORMAT = 1
# TrainConfig fields that do not change what is trained: where it runs, whether a bar shows, where
# the state goes.
NOT_IDENTITY = ("device", "progress", "resume_dir")
# Settings added after saved states existed, left out at the default they were added with: such a state
# (saved before the setting was) still continues.
ADDED_AT_DEFAULT = (("step", "rowwise"), ("graph_rounding", "coarse"), ("graph_fusion", "none"),
                    ("bucketing", "length"))


class ForeignTrainingState(ValueError):
    """A saved state that belongs to another training (other data, configuration or initial weights)."""

    def __init__(self, path: Path, differs: list[str]):
        self.path, self.differs = path, differs
        super().__init__(f"{path}: this training state belongs to another training (differs in: "
                         f"{', '.join(differs) or 'format'}); delete it or choose another resume directory")


def state_path(resume_dir: str | os.PathLike) -> Path:
    return Path(resume_dir) / STATE_FILE


def weights_digest(model: torch.nn.Module) -> str:
    """SHA-1 over the parameters' names, shapes and values: the same initial weights, the same digest."""
    h = hashlib.sha1()
    for name, tensor in model.state_dict().items():
        h.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
        h.update(tensor.detach().to("cpu").contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def identity(config: Any, train: Sequence[Problem], valid: Sequence[Problem], model: torch.nn.Module) -> dict[str, Any]:
    """What a saved state must match to be continued: the training configuration, the training and
    validation problems, and the weights the training started from."""
    fields = {k: v for k, v in dataclasses.asdict(config).items()
              if k not in NOT_IDENTITY and (k, v) not in ADDED_AT_DEFAULT}
    return {"format": FORMAT, "config": fields, "train": data_hash(train), "valid": data_hash(valid),
            "initial_weights": weights_digest(model)}


def random_states() -> dict[str, Any]:
    """The global generators the training draws from (Python's ``random``, torch's CPU and CUDA)."""
    states: dict[str, Any] = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_random_states(states: dict[str, Any]) -> None:
    random.setstate(as_random_state(states["python"]))
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


def as_random_state(state: Any) -> tuple:
    """``random.setstate`` wants tuples; a round trip through the file may give lists."""
    version, internal, gauss = state
    return version, tuple(internal), gauss


def save(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` to ``path``: the previous state or this one after any crash (:mod:`mwp.durable`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_durable(path, lambda fh: torch.save(state, fh))


def load(path: Path, expected: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """The state saved at ``path``; a ValueError naming the file when it is unreadable or was written
    for another training than ``expected`` (:func:`identity`)."""
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception as exc:  # a truncated or foreign file: say which, do not continue from it
        raise ValueError(f"{path}: not a readable training state ({exc.__class__.__name__}: {exc}); "
                         f"delete it to train from the start") from exc
    saved = state.get("identity") if isinstance(state, dict) else None
    if saved != expected:
        raise ForeignTrainingState(path, _differences(saved or {}, expected))
    return state


def _differences(saved: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    out = []
    for key in sorted(set(saved) | set(expected)):
        a, b = saved.get(key), expected.get(key)
        if key == "config" and isinstance(a, dict) and isinstance(b, dict):
            out += [f"config.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        elif a != b:
            out.append({"train": "training problems", "valid": "validation problems",
                        "initial_weights": "initial weights"}.get(key, key))
    return out


def clear(resume_dir: str | os.PathLike | None) -> None:
    """Remove a finished training's state (it is only needed until its result is saved elsewhere)."""
    if resume_dir is not None:
        state_path(resume_dir).unlink(missing_ok=True)
