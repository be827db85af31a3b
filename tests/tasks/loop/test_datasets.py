"""tasks/loop/datasets.py: sets from a random split or a split file."""
import pytest

from mwp.builtin import generate_corpus
from mwp.readers import DataSpec
from tasks.loop.datasets import load_split_file, source_fingerprint, split_problems


def test_random_split_sizes_and_determinism():
    problems = generate_corpus(100, seed=0)
    train, valid, tests = split_problems(problems, seed=5, test_fraction=0.2, valid_fraction=0.25)
    assert (len(train), len(valid), len(tests["iid"])) == (60, 20, 20)
    assert {p.id for p in train} | {p.id for p in valid} | {p.id for p in tests["iid"]} == {p.id for p in problems}
    again = split_problems(problems, seed=5, test_fraction=0.2, valid_fraction=0.25)
    assert [p.id for p in again[0]] == [p.id for p in train]


def test_split_file_gives_its_test_side_by_method_and_an_iid_holdout(tmp_path):
    import json

    problems = generate_corpus(100, seed=0)
    ids = [p.id for p in problems]
    path = tmp_path / "split.json"
    path.write_text(json.dumps({"method": "sd", "train": ids[:80], "test": ids[80:] + ["not-loaded"]}))
    split = load_split_file(path)
    train, valid, tests = split_problems(problems, seed=0, valid_fraction=0.25, split=split, iid_holdout_fraction=0.1)
    assert [p.id for p in tests["sd"]] == ids[80:]
    assert len(tests["iid_holdout"]) == 8 and len(valid) == 18 and len(train) == 54
    assert not ({p.id for p in tests["iid_holdout"]} | {p.id for p in valid} | {p.id for p in train}) & set(ids[80:])
    _, _, no_holdout = split_problems(problems, seed=0, valid_fraction=0.25, split=split)
    assert set(no_holdout) == {"sd"}  # the train-side holdout only when asked


def test_an_iid_split_file_is_evaluated_on_its_own_test_side(tmp_path):
    import json

    problems = generate_corpus(100, seed=0)
    ids = [p.id for p in problems]
    path = tmp_path / "iid.json"
    path.write_text(json.dumps({"method": "iid", "train": ids[:70], "test": ids[70:]}))
    train, valid, tests = split_problems(problems, seed=0, split=load_split_file(path))
    assert set(tests) == {"iid"} and [p.id for p in tests["iid"]] == ids[70:]  # never overwritten by a holdout
    assert len(train) + len(valid) == 70


def test_a_split_file_with_twins_on_both_sides_is_reported(tmp_path):
    from tasks.loop.datasets import duplicates_across_sides

    split = {"train": ["a", "b", "c"], "test": ["d", "e"]}
    # d was dropped as a copy of a (train) -> across sides; c of b -> same side; x is not in the file.
    assert duplicates_across_sides({"d": "a", "c": "b", "x": "a"}, split) == 1


def test_bad_split_files_are_clear_errors(tmp_path):
    (tmp_path / "a.json").write_text('{"train": ["1"], "test": ["1"]}')
    with pytest.raises(ValueError, match="both sides"):
        load_split_file(tmp_path / "a.json")
    (tmp_path / "b.json").write_text('{"train": ["1"]}')
    with pytest.raises(ValueError, match="missing the list 'test'"):
        load_split_file(tmp_path / "b.json")
    (tmp_path / "c.json").write_text("not json")
    with pytest.raises(ValueError, match="cannot read it as JSON"):
        load_split_file(tmp_path / "c.json")


def test_source_fingerprint_follows_the_data_and_the_split_file(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "1", "text": "a 1 b 2 ?", "equation": "x=1+2", "answer": 3}\n')
    split = tmp_path / "s.json"
    split.write_text('{"train": ["1"], "test": []}')
    spec = DataSpec("jsonl", data)
    first = source_fingerprint(spec, split)
    assert first == source_fingerprint(spec, split)
    split.write_text('{"train": [], "test": ["1"]}')
    assert source_fingerprint(spec, split) != first
    second = source_fingerprint(spec, split)
    data.write_text(data.read_text() + '{"id": "2", "text": "c 3 ?", "equation": "x=3", "answer": 3}\n')
    assert source_fingerprint(spec, split) != second
    builtin = DataSpec("builtin", builtin_size=30)
    assert source_fingerprint(builtin, None) == source_fingerprint(DataSpec("builtin", builtin_size=30), None)
    assert source_fingerprint(builtin, None) != source_fingerprint(DataSpec("builtin", builtin_size=31), None)


def test_a_half_written_data_directory_is_prepared_again(tmp_path):
    from tasks.loop.datasets import prepare_sets

    data = DataSpec("builtin", builtin_size=40)
    directory = tmp_path / "data"
    sets, _ = prepare_sets(data, directory, 0, 0.2, 0.2, None, 0.0)
    (directory / "report.json").unlink()  # died after writing the sets, before the report
    again, report = prepare_sets(data, directory, 0, 0.2, 0.2, None, 0.0)
    assert report["used"] == 40 and (directory / "report.json").exists()
    assert again.train.read_text() == sets.train.read_text()


def test_a_split_files_method_must_be_a_plain_name(tmp_path):
    import json

    (tmp_path / "s.json").write_text(json.dumps({"method": "../x", "train": ["1"], "test": ["2"]}))
    with pytest.raises(ValueError, match="not a plain name"):
        load_split_file(tmp_path / "s.json")


def test_a_run_directory_is_locked_against_a_second_run(tmp_path):
    from tasks.loop.rundir import lock

    held = lock(tmp_path)
    import subprocess
    import sys

    other = subprocess.run([sys.executable, "-c", f"from tasks.loop.rundir import lock; lock(__import__('pathlib').Path({str(tmp_path)!r}))"],
                           capture_output=True, text=True)
    assert other.returncode != 0 and "is in use by another run (pid" in other.stderr
    held.close()
    assert subprocess.run([sys.executable, "-c", f"from tasks.loop.rundir import lock; lock(__import__('pathlib').Path({str(tmp_path)!r}))"],
                          capture_output=True, text=True).returncode == 0
