"""bench/precision_accuracy.py --tiny: the machinery of the GPU session's accuracy check (runs as
parallel processes, one JSON of per-problem correctness each, the paired bootstrap of bf16 - fp32) on
60 MAWPS problems in seconds; and its report on hand-made run files."""
import json
from pathlib import Path

import pytest

from bench import precision_accuracy

MAWPS = Path(__file__).resolve().parents[2].parent / "shared/data/mawps/MAWPS.json"


@pytest.fixture
def small(tmp_path):
    """The first 60 MAWPS problems as a file of their own (the test skips without the data)."""
    if not MAWPS.exists():
        pytest.skip(f"no MAWPS data at {MAWPS}")
    path = tmp_path / "mawps60.json"
    path.write_text(json.dumps(json.loads(MAWPS.read_text())[:60]))
    return path


def test_tiny_runs_write_per_problem_correctness_and_the_report_pairs_them(tmp_path, small, capsys):
    out = tmp_path / "runs"
    assert precision_accuracy.main(["--tiny", "--seeds", "0,1", "--precisions", "fp32,bf16", "--workers", "4",
                                    "--batch-size", "16", "--lr", "0.002", "--data", str(small), "--out-dir", str(out)]) == 0
    runs = {p.name: json.loads(p.read_text()) for p in out.glob("*.json")}
    assert sorted(runs) == ["bf16_seed0.json", "bf16_seed1.json", "fp32_seed0.json", "fp32_seed1.json"]
    for name, run in runs.items():
        assert run["epochs"] == 2 and run["config"]["hidden_size"] == 16 and run["precision_ran"] == name[:4]
        assert run["batch_size"] == 16 and run["lr"] == 0.002  # passed on to each run
        assert len(run["test_correct"]) == run["test"] > 0
    # each seed splits its own test side; both precisions of a seed saw the same problems
    assert runs["fp32_seed0.json"]["test_correct"].keys() == runs["bf16_seed0.json"]["test_correct"].keys()
    assert runs["fp32_seed0.json"]["test_correct"].keys() != runs["fp32_seed1.json"]["test_correct"].keys()
    printed = capsys.readouterr().out
    assert "bf16 - fp32: " in printed and "95% paired bootstrap over 2 seeds" in printed


def test_the_report_gives_the_paired_difference_of_hand_made_runs(tmp_path, capsys):
    """Seed 0: bf16 right on 3 of 4 problems where fp32 is right on 1 (+0.5); seed 1: both right on the
    same 2 of 2 (0): the mean of the per-seed differences is +0.25."""
    runs = {("fp32", 0): [True, False, False, False], ("bf16", 0): [True, True, True, False],
            ("fp32", 1): [True, True], ("bf16", 1): [True, True]}
    for (precision, seed), correct in runs.items():
        record = {"test_correct": {f"s{seed}p{i}": ok for i, ok in enumerate(correct)},
                  "test_answer_acc": sum(correct) / len(correct), "epoch_seconds": 1.0}
        (tmp_path / f"{precision}_seed{seed}.json").write_text(json.dumps(record))
    assert precision_accuracy.main(["--report-only", "--seeds", "0,1", "--out-dir", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "bf16 - fp32: +0.2500 [" in printed
    assert "| 0 | 0.2500 (1.0) | 0.7500 (1.0) | +0.5000 |" in printed



def test_other_code_trains_the_runs_with_code_on_its_own_path(tmp_path, small, capsys, monkeypatch):
    """--code DIR (the old step against the new): DIR's bench/solver_speed.py trains each run, importing
    DIR's solvers; the paper's lr, every solver_speed.py's default, is not passed (older code has no --lr)."""
    import shutil

    root = Path(precision_accuracy.__file__).resolve().parents[1]
    other = tmp_path / "other"
    for part in ("bench", "solvers", "mwp", "flows"):
        shutil.copytree(root / part, other / part, ignore=shutil.ignore_patterns("__pycache__"))
    # only the copy's solvers package leaves a mark when imported: the runs must import it, not the checkout's
    marker = tmp_path / "copy_imported"
    monkeypatch.setenv("COPY_MARKER_FILE", str(marker))
    init = other / "solvers" / "__init__.py"
    init.write_text(init.read_text() + "\nimport os as _os\nopen(_os.environ['COPY_MARKER_FILE'], 'a').close()\n")
    out = tmp_path / "runs"
    assert precision_accuracy.main(["--tiny", "--seeds", "0", "--precisions", "fp32", "--code", str(other),
                                    "--data", str(small), "--out-dir", str(out), "--baseline-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"{other / 'bench' / 'solver_speed.py'} --epochs 2" in printed and "--lr" not in printed
    assert marker.exists()
    run = json.loads((out / "fp32_seed0.json").read_text())
    assert len(run["test_correct"]) == run["test"] > 0 and run["lr"] == 1e-3


def test_the_runs_train_with_the_fusion_asked_for(tmp_path, small, capsys):
    """--graph-fusion inductor reaches each run's training (TrainConfig.graph_fusion), with a shape-fixed step: the
    GPU session's fused-accuracy check (FUSION=inductor in bench/gpu_session.sh), here with the dense step on the
    CPU; each run's JSON says what it trained with."""
    out = tmp_path / "runs"
    assert precision_accuracy.main(["--tiny", "--seeds", "0", "--precisions", "fp32", "--step", "dense",
                                    "--graph-fusion", "inductor", "--data", str(small), "--out-dir", str(out),
                                    "--baseline-dir", str(out)]) == 0
    assert "--step dense --graph-fusion inductor" in capsys.readouterr().out
    run = json.loads((out / "fp32_seed0.json").read_text())
    assert run["step"] == "dense" and run["graph_fusion"] == "inductor" and len(run["test_correct"]) == run["test"] > 0
