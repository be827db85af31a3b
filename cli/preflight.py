"""What a command checks before any work starts: the data file reads and holds usable
problems, a split file matches the data it splits and leaves no set empty, the output can be written.

Each failure is a ValueError (a DataFormatError for the data) naming the file and what is wrong, which
cli/main.py prints in one line; no Prefect flow run, MLflow run or run directory exists yet. The data
are read here and again by the flow: seconds against the minutes or hours of work a late error
would waste.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from mwp.problem import Problem
from mwp.readers import DataSpec, json_kind, load_dataset, require_problems


def usable_problems(fmt: str, path: Optional[str]) -> list[Problem]:
    """The usable problems of a data file (``split``, ``sd``); DataFormatError when there are none."""
    return require_problems(load_dataset(fmt, path), path).problems


def check_split_size(n: int, test_fraction: float, where: Any) -> None:
    """``compaug split`` can put ``round(n * test_fraction)`` problems on the test side and the rest on train."""
    n_test = round(n * test_fraction)
    if n_test < 1 or n_test >= n:
        raise ValueError(f"{where}: {n} usable problems cannot be split {1 - test_fraction:.0%}/{test_fraction:.0%} "
                         f"(--test-fraction {test_fraction})")


def check_loop_data(params, cache: dict | None = None) -> None:
    """The sets a loop run (``LoopParams``) would make from its data and split file: none empty, the
    split file's ids among the problems. Generated data without a split file always split; a run
    directory whose sets are made already is checked by the flow (against the data's fingerprint).
    ``cache`` (spec -> problems) reads data shared by several runs once (a study's splits)."""
    from tasks.loop.datasets import load_split_file, split_problems

    spec: DataSpec = params.data.spec()
    if (spec.format == "builtin" and params.split_file is None) or (params.run_dir() / "data" / "report.json").exists():
        return
    where = spec.path or "the builtin corpus"
    if cache is not None and spec in cache:
        problems = cache[spec]
    else:
        result, problems = spec.load()
        require_problems(result, where)
        if cache is not None:
            cache[spec] = problems
    split = load_split_file(params.split_file) if params.split_file else None
    try:
        split_problems(problems, params.seed, params.test_fraction, params.valid_fraction, split,
                       params.iid_holdout_fraction)
    except ValueError as err:
        prefix = f"split file {params.split_file} with data {where}" if split else str(where)
        raise ValueError(f"{prefix}: {err}") from err


def check_output_file(path: str | Path, option: str = "--out") -> None:
    """A file can be written at ``path``: not a folder, and its nearest existing folder writable (no
    folder is made here)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{option} {path}: a folder, not a file name")
    _check_can_create(path, option)


def check_output_folder(path: str | Path, option: str = "--out") -> None:
    """A folder can be made (or written) at ``path``."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path}: cannot write there (a file, not a folder)")
    _check_can_create(path, option)


def _check_can_create(path: Path, option: str) -> None:
    ancestor = path if path.is_dir() else path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ValueError(f"{option} {path}: cannot write there ({ancestor} is a file, not a folder)")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {path}: cannot write there ({ancestor} is not writable)")


def check_sd_seeds(problems: list[Problem], where: Any) -> None:
    """At least one problem is a seed of the SD rule table; else SD would be empty."""
    from tasks.dbca.synthetic import rule_for

    if not any(rule_for(p) is not None for p in problems):
        raise ValueError(f"{where}: none of its {len(problems)} usable problems is a seed of the SD rule table "
                         "(a Table 2 template, one quantity a clause in order): the SD set would be empty")


def read_params_file(path: str | Path, option: str = "--params") -> dict[str, Any]:
    """The JSON object of a parameter file; a ValueError naming the file otherwise."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{option} {path}: not UTF-8 text: {err}") from err
    except OSError as err:
        raise ValueError(f"{option} {path}: cannot read it: {err.strerror or err}") from err
    try:
        values = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{option} {path}: not JSON: {err}") from err
    except RecursionError as err:
        raise ValueError(f"{option} {path}: JSON nested too deeply") from err
    if not isinstance(values, dict):
        raise ValueError(f"{option} {path}: expected a JSON object of parameters, got {json_kind(values)}")
    return values
