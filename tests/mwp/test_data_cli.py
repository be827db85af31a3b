"""``compaug data describe`` through cli.main.main."""
import json
import subprocess
import sys

from cli.main import main


def test_describe_builtin_json(capsys):
    assert main(["data", "describe", "--size", "40", "--seed", "2", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["usable"] == 40 and info["skipped"] == {} and info["languages"] == {"en": 40}
    assert sum(info["depth_histogram"].values()) == 40 and info["templates"] >= 4


def _jsonl(tmp_path):
    path = tmp_path / "d.jsonl"
    rows = [{"id": "a", "text": "Tom has 3 apples. Ann gives him 4. How many apples?", "equation": "x=3+4", "answer": 7},
            {"id": "b", "text": "Tom has 3 apples. How many?", "equation": "x=3*9", "answer": 27},
            {"id": "c", "text": "Tom has 6 apples. How many?", "equation": "x=(6+1", "answer": 7}]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


def test_describe_file_text_and_json(tmp_path, capsys):
    path = _jsonl(tmp_path)
    assert main(["data", "describe", "--format", "jsonl", str(path)]) == 0
    out = capsys.readouterr().out
    assert "usable: 1 of 3 records" in out
    assert "number_missing_from_text: 1" in out and "unbalanced_brackets: 1" in out
    assert "b: number 9 is not in the text" in out
    assert "expression depth: 1: 1" in out and "distinct templates: 1" in out
    assert main(["data", "describe", "--format", "jsonl", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["usable"] == 1 and info["skipped"] == {"number_missing_from_text": 1, "unbalanced_brackets": 1}


def test_describe_errors_name_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", encoding="utf-8")
    assert main(["data", "describe", "--format", "mawps", str(bad)]) == 2
    assert "bad.json" in capsys.readouterr().err
    assert main(["data", "describe", "--format", "svamp"]) == 2
    assert "needs a PATH" in capsys.readouterr().err


def test_data_command_imports_no_heavy_library():
    code = ("import sys; from cli.main import main; main(['data', 'describe', '--size', '5', '--json']); "
            "print(sorted(m for m in ('torch', 'prefect', 'mlflow', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
