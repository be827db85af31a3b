"""The environment defaults (flows/environment.py) are in place when torch loads, on the real entry points.

OpenMP (libgomp) reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, when torch is imported; a default set
after that changes nothing. Each check runs a fresh interpreter without those variables, records their
values at the moment torch is first imported, and requires that torch was imported at all (otherwise the
check would say nothing)."""
import json
import os
import subprocess
import sys
from pathlib import Path

from flows.environment import DEFAULTS

ROOT = Path(__file__).resolve().parents[2]
OPENMP = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")

PROBE = """
import builtins, json, os, sys
seen = {}
_import = builtins.__import__
def _recording_import(name, *args, **kwargs):
    if name.split(".")[0] == "torch" and "torch" not in sys.modules and not seen:
        seen.update({key: os.environ.get(key) for key in %(keys)r})
    return _import(name, *args, **kwargs)
builtins.__import__ = _recording_import
%(body)s
print("PROBE " + json.dumps(seen))
"""


def _env_at_torch_import(body: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in OPENMP}
    code = PROBE % {"keys": OPENMP, "body": body}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("PROBE ")]
    assert lines, f"probe printed nothing (rc {done.returncode}): {done.stderr[-2000:]}"
    seen = json.loads(lines[-1].removeprefix("PROBE "))
    assert seen, "torch was never imported, so the order was not checked"
    return seen


def test_the_run_command_sets_openmp_defaults_before_its_parameters_load_torch(tmp_path):
    # Building the run's parameters resolves the solver, which imports torch; the data file is missing,
    # so the command stops with exit status 2 right after.
    body = ("from cli.main import main\n"
            f"rc = main(['run', '--solver', 'gts', '--format', 'mawps', {str(tmp_path / 'missing.json')!r}])\n"
            "assert rc == 2, rc\n")
    assert _env_at_torch_import(body) == {key: DEFAULTS[key] for key in OPENMP}


def test_the_flow_module_imported_first_sets_openmp_defaults_before_torch():
    # A deployment's worker (or a user's script) imports the flow module before anything else.
    assert _env_at_torch_import("import flows.augment_loop\n") == {key: DEFAULTS[key] for key in OPENMP}


def test_a_value_the_user_set_wins():
    body = "import os\nos.environ['GOMP_SPINCOUNT'] = '0'\nimport flows.augment_loop\n"
    assert _env_at_torch_import(body)["GOMP_SPINCOUNT"] == "0"
