"""tasks/loop/rundir.py: round markers are written durably, and an unreadable one is never taken for a
completed round: that round and the later ones are redone, their markers set aside."""
import json

from tasks.loop import rundir
from tasks.loop.record import RoundRecord, SetMetrics


def _record(r: int) -> RoundRecord:
    return RoundRecord(round=r, pool_size=10 + r, train_seconds=1.0, best_epoch=1, valid_answer_acc=0.5,
                       tests={"iid": SetMetrics(n=4, answer_acc=0.25, equation_acc=0.25, invalid_rate=0.0)},
                       relative_gap=None, round_seconds=2.0)


def _three_rounds(tmp_path):
    for r in range(3):
        rundir.round_dir(tmp_path, r).mkdir()
        (rundir.round_dir(tmp_path, r) / "pool.jsonl").write_text("{}\n")
        rundir.write_record(tmp_path, _record(r))


def test_written_records_read_back_and_leave_no_temporary_files(tmp_path):
    _three_rounds(tmp_path)
    assert rundir.completed_rounds(tmp_path) == [0, 1, 2]
    assert rundir.read_record(tmp_path, 1) == _record(1)
    assert sorted(p.name for p in rundir.round_dir(tmp_path, 1).iterdir()) == ["metrics.json", "pool.jsonl"]


def test_an_empty_marker_ends_the_completed_rounds_and_names_its_file(tmp_path):
    _three_rounds(tmp_path)
    rundir.record_path(tmp_path, 1).write_text("")
    assert rundir.completed_rounds(tmp_path) == [0]
    bad = rundir.unreadable_records(tmp_path)
    assert [p for p, _ in bad] == [rundir.record_path(tmp_path, 1)]
    assert bad[0][1].startswith(f"{rundir.record_path(tmp_path, 1)}: not a round record (JSONDecodeError")


def test_a_marker_that_is_json_but_not_a_record_is_unreadable_too(tmp_path):
    _three_rounds(tmp_path)
    rundir.record_path(tmp_path, 2).write_text(json.dumps({"round": 2}))  # cut to its first field
    assert rundir.completed_rounds(tmp_path) == [0, 1]
    rundir.record_path(tmp_path, 2).write_text("[1, 2]")
    assert rundir.completed_rounds(tmp_path) == [0, 1]


def test_redo_unreadable_sets_aside_the_bad_marker_and_every_later_one(tmp_path):
    _three_rounds(tmp_path)
    rundir.record_path(tmp_path, 1).write_text('{"round": 1, "pool')
    lines = rundir.redo_unreadable(tmp_path)
    assert len(lines) == 2
    assert lines[0].startswith(str(rundir.record_path(tmp_path, 1))) and lines[0].endswith("round 1 is redone")
    assert lines[1] == (f"{rundir.round_dir(tmp_path, 2) / 'metrics.json.redone'}: set aside, its round follows "
                        f"round 1 and is redone")
    assert rundir.completed_rounds(tmp_path) == [0]
    assert not rundir.record_path(tmp_path, 2).exists()
    assert (rundir.round_dir(tmp_path, 1) / "metrics.json.redone").read_text() == '{"round": 1, "pool'
    assert rundir.redo_unreadable(tmp_path) == []  # nothing left to redo: a second call changes nothing
    assert rundir.read_record(tmp_path, 0) == _record(0)


def test_nothing_is_set_aside_when_every_marker_reads(tmp_path):
    _three_rounds(tmp_path)
    assert rundir.redo_unreadable(tmp_path) == [] and rundir.completed_rounds(tmp_path) == [0, 1, 2]


def test_the_run_lock_is_shared_within_a_process_and_released_with_its_last_holder(tmp_path):
    import subprocess
    import sys

    def other_process_can_lock() -> bool:
        code = "import sys; from pathlib import Path; from tasks.loop.rundir import lock; lock(Path(sys.argv[1]))"
        return subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True).returncode == 0

    first = rundir.lock(tmp_path)
    second = rundir.lock(tmp_path)  # the flow started by the command that took it
    second.close()
    assert not other_process_can_lock()  # the command still holds it
    first.close()
    first.close()  # closing twice releases nothing twice
    assert other_process_can_lock()
