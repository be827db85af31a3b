"""mwp/durable.py: a process killed at any step of a durable write leaves the old file or the new one,
never a partial one, and the write fsyncs the file before the rename and the folder after it."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mwp import durable

ROOT = Path(__file__).resolve().parents[2]

# A child process that writes NEW over the file with write_durable and SIGKILLs itself at one step:
# "mid-write" after half the data, "before-fsync", "before-replace", "before-dir-fsync".
_CHILD = r"""
import os, signal, sys
from mwp import durable
path, step = sys.argv[1], sys.argv[2]
new = b'{"round": 1, "answer_acc": 0.5, "padding": "' + b"x" * 100000 + b'"}'
kill = lambda: os.kill(os.getpid(), signal.SIGKILL)
real_fsync, real_replace, real_dir = os.fsync, os.replace, durable.fsync_directory
def fsync(fd):
    if step == "before-fsync":
        kill()
    real_fsync(fd)
def replace(a, b):
    if step == "before-replace":
        kill()
    real_replace(a, b)
def fsync_directory(d):
    if step == "before-dir-fsync":
        kill()
    real_dir(d)
os.fsync, os.replace, durable.fsync_directory = fsync, replace, fsync_directory
def write(fh):
    fh.write(new[: len(new) // 2])
    fh.flush()
    if step == "mid-write":
        kill()
    fh.write(new[len(new) // 2:])
durable.write_durable(path, write)
"""
OLD = {"round": 1, "answer_acc": 0.25}


@pytest.mark.parametrize("step,expected", [("mid-write", "old"), ("before-fsync", "old"), ("before-replace", "old"),
                                           ("before-dir-fsync", "new"), ("none", "new")])
def test_a_kill_at_any_step_leaves_the_old_file_or_the_new_one(tmp_path, step, expected):
    target = tmp_path / "metrics.json"
    target.write_text(json.dumps(OLD))
    run = subprocess.run([sys.executable, "-c", _CHILD, str(target), step], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == (0 if step == "none" else -signal.SIGKILL), run.stderr
    data = json.loads(target.read_text())  # whole JSON either way
    if expected == "old":
        assert data == OLD
    else:
        assert data["answer_acc"] == 0.5 and len(data["padding"]) == 100000
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "metrics.json"]
    assert len(leftovers) == (1 if expected == "old" else 0)  # a killed write leaves only its own temp file


def test_the_file_is_fsynced_before_the_rename_and_the_folder_after(tmp_path, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(("fsync", os.path.isdir(f"/proc/self/fd/{fd}"))),
                                                 real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append(("replace", Path(b).name)), real_replace(a, b))[1])
    durable.write_json_durable(tmp_path / "a.json", {"x": 1})
    assert calls == [("fsync", False), ("replace", "a.json"), ("fsync", True)]
    assert json.loads((tmp_path / "a.json").read_text()) == {"x": 1}


def test_a_failing_writer_leaves_the_old_file_and_no_temp_file(tmp_path):
    target = tmp_path / "state.pt"
    target.write_bytes(b"old")

    def write(fh):
        fh.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        durable.write_durable(target, write)
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["state.pt"]


def test_sync_tree_fsyncs_every_file_and_folder(tmp_path, monkeypatch):
    (tmp_path / "checkpoint").mkdir()
    (tmp_path / "checkpoint" / "weights").write_bytes(b"w")
    (tmp_path / "pool.jsonl").write_text("{}\n")
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real_fsync(fd))[1])
    durable.sync_tree(tmp_path)
    assert sorted(synced) == sorted([str(tmp_path), str(tmp_path / "checkpoint"), str(tmp_path / "pool.jsonl"),
                                     str(tmp_path / "checkpoint" / "weights")])


def test_the_new_file_gets_the_permissions_an_ordinary_write_would(tmp_path):
    ordinary = tmp_path / "ordinary.json"
    ordinary.write_text("{}")
    durable.write_json_durable(tmp_path / "durable.json", {})
    assert (tmp_path / "durable.json").stat().st_mode == ordinary.stat().st_mode
