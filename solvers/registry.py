"""Solvers by name: ``build_solver("gts", hidden_size=256)`` and ``load_solver(directory)``.

Each name maps to the module that defines it; the module is imported only when asked for (the
BERT and GPT-2 solvers pull in transformers). The class is the ``Solver`` subclass in that module
whose ``name`` attribute equals the registry name.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
from pathlib import Path
from typing import Any

from solvers.base import Solver

MODULES = {
    "gts": "solvers.gts",
    "lstm": "solvers.seq2seq",
    "transformer": "solvers.transformer",
    "bert-gts": "solvers.bert_gts",
    "gpt2": "solvers.gpt2",
    "convs2s": "solvers.convs2s",
    "mathen": "solvers.mathen",  # the lstm + convs2s + transformer ensemble on normalized targets
}
ALIASES = {"seq2seq": "lstm", "bert_gts": "bert-gts"}  # module-style spellings
SOLVERS = tuple(MODULES)  # the names the settings models and the CLI offer


def solver_class(name: str) -> type[Solver]:
    name = ALIASES.get(name, name)
    if name not in MODULES:
        raise KeyError(f"unknown solver {name!r}; known: {', '.join(sorted(MODULES))}")
    module = importlib.import_module(MODULES[name])
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if issubclass(cls, Solver) and not inspect.isabstract(cls) and getattr(cls, "name", None) == name:
            return cls
    raise KeyError(f"module {MODULES[name]} defines no Solver subclass with name {name!r}")


def solver_config(name: str, options: dict[str, Any]) -> Any:
    """The solver's frozen config dataclass built from ``options``; an unknown option or a value the
    config refuses is a ValueError naming it (and, for an unknown one, the options there are)."""
    config_class = solver_class(name).config_class
    known = {f.name for f in dataclasses.fields(config_class)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(f"solver {name!r} has no option {', '.join(unknown)}; its options: {', '.join(sorted(known))}")
    try:
        return config_class(**options)
    except (TypeError, ValueError) as err:
        raise ValueError(f"solver {name!r}: {err}") from err


def build_solver(name: str, config: Any = None, device: str = "auto", **options: Any) -> Solver:
    """A fresh, untrained solver from its config object, or from ``options`` (fields of the solver's
    config dataclass). An unknown field is an error."""
    if config is None:
        config = solver_config(name, options)
    elif options:
        raise TypeError("give the solver a config object or options, not both")
    return solver_class(name)(config, device=device)


def load_solver(directory: str | Path, device: str = "auto") -> Solver:
    """Load any saved solver; the checkpoint names its class."""
    from solvers.checkpoint import read_meta

    return solver_class(read_meta(directory)["solver"]).load(directory, device=device)
