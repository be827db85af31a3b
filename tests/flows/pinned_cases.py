"""The parameter sets whose run directories are pinned in test_run_dirs.py (run_dirs_pinned.json): the quick run, every
prefect.yaml deployment, every cell of every study in docs/studies/, and loop settings off their
defaults. ``python tests/config/pinned_cases.py`` prints each case's run directory as the code of the
checkout computes it (how the pinned values were made)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# LoopParams values, each with the loop settings given at the top level as parameter files written
# before the `loop` section existed do (read into `loop` since).
LOOP_CASES = {
    "defaults": {},
    "keep-0.3-per-origin": {"keep_fraction": 0.3, "retention": "per-origin", "rounds": 2},
    "score-random": {"score": "random"},
    "score-uncertainty-per-operator": {"score": "uncertainty", "retention": "per-operator"},
    "warm-start": {"warm_start": True},
    "warm-start-epochs": {"warm_start": True, "warm_start_epochs": 15, "train": {"epochs": 60}},
    "warm-control": {"warm_start": True, "augment_rounds": False, "warm_start_epochs": 15},
    "no-augment-rounds": {"augment_rounds": False},
    "seed-3-gts-small": {"seed": 3, "solver": {"model": {"hidden_size": 64}}, "train": {"epochs": 5}},
    "train-step-graphed": {"train": {"step": "graphed", "precision": "fp32"}},
    "train-graph-rounding-fine": {"train": {"step": "graphed", "precision": "fp32", "graph_rounding": "fine"}},
    "train-graph-fusion-inductor": {"train": {"step": "graphed-whole", "precision": "fp32",
                                              "graph_fusion": "inductor"}},
    "train-bucketing-steps": {"train": {"bucketing": "steps"}},
}


def sandbox(base: Path) -> Path:
    """A working directory where the study files' relative paths resolve: ../shared/data (a link to the
    real data), stand-in split files under ../compaug-runs/splits and runs/splits, and stand-in SD sets
    under ../compaug-runs/sd."""
    cwd = base / "checkout"
    cwd.mkdir(parents=True, exist_ok=True)
    shared = base / "shared"
    if not shared.exists():
        shared.symlink_to(ROOT.parent / "shared" if (ROOT.parent / "shared").exists() else Path("/work/shared"))
    stand_in = json.dumps({"train": ["a"], "test": ["b"]})
    for name in ("mawps", "builtin", "math23k"):  # the SD studies' sets (`compaug sd ... --out ../compaug-runs/sd/NAME`)
        folder = base / "compaug-runs" / "sd" / name
        folder.mkdir(parents=True, exist_ok=True)
        for file in ("train.jsonl", "test.jsonl"):
            (folder / file).write_text("")
        (folder / "split.json").write_text(stand_in)
    for folder in (base / "compaug-runs" / "splits", cwd / "runs" / "splits"):
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("mawps-comdiv-c0.77.json", "mawps-iid.json", "m23k-comdiv.json"):
            (folder / name).write_text(stand_in)
    return cwd


def run_dirs() -> dict[str, str]:
    """Case name -> run directory (relative), computed by the checkout's code; run inside ``sandbox``."""
    import yaml

    from flows.params import QUICK_RUN, LoopParams
    from flows.study import StudyParams

    out = {"quick-run": str(LoopParams.model_validate(first_tie(QUICK_RUN)).run_dir())}
    for name, values in LOOP_CASES.items():
        out[f"loop/{name}"] = str(LoopParams.model_validate(first_tie(values)).run_dir())
    for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]:
        if d["entrypoint"].endswith(":augment_loop"):
            out[f"deployment/{d['name']}"] = str(LoopParams.model_validate(first_tie(d["parameters"]["params"])).run_dir())
        else:
            out.update(_study_cells(StudyParams.model_validate(first_tie(d["parameters"]["params"])),
                                    f"deployment/{d['name']}"))
    for path in sorted((ROOT / "docs" / "studies").glob("*.json")):
        values = json.loads(path.read_text())
        values["arms"] = ["loop", "control", "random-ranker", "no-op1", "no-op2", "per-operator", "per-origin",
                          "warm-start", "warm-control"]
        out.update(_study_cells(StudyParams.model_validate(values), f"study/{path.stem}"))
    return out


def first_tie(values: dict) -> dict:
    """``values`` with the tie-break every pinned run had (``train.tie_break`` first, the only rule before
    the setting existed; the docs/studies/ files name it themselves)."""
    return {**values, "train": {**values.get("train", {}), "tie_break": "first"}}


def _study_cells(study, label: str) -> dict[str, str]:
    out = {}
    for cell in study.cells():
        if cell.seed != study.seeds[0]:
            continue
        out[f"{label}/{cell.key}"] = str(study.loop_params(cell).run_dir())
        if cell.arm == "control":  # the control's budget: the loop cell's final-round updates
            out[f"{label}/{cell.key}/epochs-75"] = str(study.loop_params(cell, 75).run_dir())
    return out


if __name__ == "__main__":
    import tempfile

    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(sandbox(Path(tmp)))
        json.dump(run_dirs(), sys.stdout, indent=1, sort_keys=True)
        print()
