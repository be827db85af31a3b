"""A run's directory is the hash of its parameters, and an interrupted run or a study cell resumes
only in its own directory: the run directories of the quick run, the prefect.yaml deployments and every
cell of the studies in docs/studies/ are pinned (run_dirs_pinned.json, computed by the code before the
loop's settings moved into their `loop` section)."""
import json
from pathlib import Path

import pinned_cases

PINNED = json.loads((Path(__file__).parent / "run_dirs_pinned.json").read_text())


def test_every_pinned_parameter_set_keeps_its_run_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(pinned_cases.sandbox(tmp_path))
    now = pinned_cases.run_dirs()
    assert sorted(now) == sorted(PINNED)
    changed = {name: (PINNED[name], now[name]) for name in PINNED if now[name] != PINNED[name]}
    assert changed == {}


def test_the_pinned_cases_differ_where_their_settings_differ():
    """Distinct loop settings give distinct directories (the pins would not notice a hash that ignores them)."""
    loop = {name: path for name, path in PINNED.items() if name.startswith("loop/")}
    assert len(set(loop.values())) == len(loop)
