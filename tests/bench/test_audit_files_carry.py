"""bench/audit_files.py carry: a new sample takes the verdicts of texts an earlier audit judged (same text and
equation, the file named in the reason) and leaves every other row empty for a reader."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_carry_fills_identical_texts_only(tmp_path):
    judged = tmp_path / "old" / "a.judged.jsonl"
    judged.parent.mkdir()
    judged.write_text("\n".join(json.dumps({"operator": "geca_op1", **r}) for r in [
        {"text": "Ann has 3 pens. She buys 2. How many pens?", "equation": "3+2", "verdict": "correct", "reason": "5"},
        {"text": "Tom has 4 cats. How many cats?", "equation": "4", "verdict": "incoherent_text", "reason": "no story"},
    ]) + "\n", encoding="utf-8")
    # an SD audit's file (no operator, its own verdicts) is not a source
    (tmp_path / "old" / "sd.judged.jsonl").write_text(json.dumps(
        {"text": "Sue has 9 cups. How many cups?", "expression": "9", "verdict": "incoherent", "reason": "-"}) + "\n")
    sample = tmp_path / "new.sample.jsonl"
    sample.write_text("\n".join(json.dumps(r) for r in [
        {"text": "Ann has 3 pens. She buys 2. How many pens?", "equation": "3+2", "verdict": "", "reason": ""},
        {"text": "Tom has 4 cats. How many cats?", "equation": "4+0", "verdict": "", "reason": ""},  # other equation
        {"text": "Sue has 9 cups. How many cups?", "equation": "9", "verdict": "", "reason": ""},
    ]) + "\n", encoding="utf-8")
    out = tmp_path / "new.carried.jsonl"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "audit_files.py"), "carry", str(sample), str(out),
                           str(tmp_path / "old")], capture_output=True, text=True, check=True)
    assert "1 verdicts carried over, 2 to read" in done.stdout
    first, second, third = _rows(out)
    assert first["verdict"] == "correct" and "a.judged.jsonl" in first["reason"] and first["reason"].startswith("5")
    assert second["verdict"] == third["verdict"] == ""


def test_carry_refuses_a_half_judged_source(tmp_path):
    (tmp_path / "b.judged.jsonl").write_text(json.dumps({"operator": "geca_op1", "text": "x", "equation": "1", "verdict": ""}) + "\n")
    sample = tmp_path / "s.jsonl"
    sample.write_text(json.dumps({"text": "x", "equation": "1", "verdict": ""}) + "\n")
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "audit_files.py"), "carry", str(sample),
                           str(tmp_path / "o.jsonl"), str(tmp_path)], capture_output=True, text=True)
    assert done.returncode != 0 and "b.judged.jsonl:1" in done.stderr
