"""MathEN's rows of paper 003's Table 1 on MAWPS: each member's and the ensemble's test answer
accuracy on the I.I.D. and ComDiv split files over seeds (mean, standard deviation, min-max), and
training / inference problems/s beside GTS measured in the same run.

Each (solver, split, seed) is one bench/baselines_mawps.py process writing its figures to
``OUT/<solver>-<split>-s<seed>.json``; a figure file already there is kept (the table resumes), so
the runs can be stopped and restarted. ``--report`` only prints the tables from what is there.

    .venv/bin/python bench/mathen_table.py --iid runs/splits/mawps-iid.json \\
        --comdiv runs/splits/mawps-comdiv-c0.77.json --out runs/mathen_table
    .venv/bin/python bench/mathen_table.py --out runs/mathen_table --report
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMBERS = ("lstm", "convs2s", "transformer")


def member_options() -> dict:
    """The small members the CPU allows: one layer each way for the LSTM, two for the others."""
    return {"lstm": {"encoder_layers": 1, "decoder_layers": 1},
            "convs2s": {"encoder_layers": 2, "decoder_layers": 2},
            "transformer": {"encoder_layers": 2, "decoder_layers": 2}}


def run_one(solver: str, split_name: str, split_file: str, seed: int, args, sets: list[str], epochs: int) -> None:
    out = Path(args.out) / f"{solver}-{split_name}-s{seed}.json"
    if out.exists():
        return
    command = [sys.executable, str(ROOT / "bench/baselines_mawps.py"), "--solver", solver, "--split-file", split_file,
               "--seed", str(seed), "--epochs", str(epochs), "--eval-every", str(args.eval_every),
               "--lr", str(args.lr), "--threads", str(args.threads), "--valid-fraction", "0.2", "--out", str(out),
               "--set", *sets]
    print(" ".join(command), flush=True)
    subprocess.run(command, check=True)


def table(out: Path) -> str:
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(out.glob("*.json"))]
    rows = {}
    for run in runs:
        split = "comdiv" if "comdiv" in run["split"] else "iid"
        if run["solver"] == "mathen":
            for name, member in run["members"].items():
                rows.setdefault(f"{name} (member)", {}).setdefault(split, []).append(member["test_answer_acc"])
            rows.setdefault("mathen (ensemble)", {}).setdefault(split, []).append(run["test_answer_acc"])
    lines = ["| model | MAWPS I.I.D. answer acc | MAWPS ComDiv answer acc |", "|---|---|---|"]
    for name, by_split in rows.items():
        lines.append(f"| {name} | {_cell(by_split.get('iid', []))} | {_cell(by_split.get('comdiv', []))} |")
    lines += ["", "| solver | split | seed | epochs | train problems/s | inference problems/s (beam 5) | "
                  "parameters | load average |", "|---|---|---|---|---|---|---|---|"]
    for run in runs:
        split = "comdiv" if "comdiv" in run["split"] else "iid"
        lines.append(f"| {run['solver']} | {split} | {run['seed']} | {run['epochs']} | {run['train_problems_per_s']:.1f} | "
                     f"{run['inference_problems_per_s']:.1f} | {run['parameters']:,} | {run['load_average_1m']:.1f} |")
    return "\n".join(lines)


def _cell(values: list[float]) -> str:
    if not values:
        return "not run"
    spread = f" ± {statistics.stdev(values):.3f}" if len(values) > 1 else ""
    return (f"{statistics.mean(values):.3f}{spread} ({len(values)} seeds: "
            + ", ".join(f"{v:.3f}" for v in values) + ")")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iid", help="the I.I.D. split file")
    ap.add_argument("--comdiv", help="the ComDiv split file")
    ap.add_argument("--out", required=True, help="a folder for the per-run figure files")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--epochs", type=int, default=15, help="each member's epochs")
    ap.add_argument("--gts-epochs", type=int, default=3, help="GTS's epochs (speed beside MathEN: seed 0, I.I.D.)")
    ap.add_argument("--eval-every", type=int, default=5)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--embedding", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", choices=["iid", "comdiv"], help="run one split's cells (two processes can share the work)")
    ap.add_argument("--report", action="store_true", help="only print the tables from the figure files there")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if not args.report:
        if not (args.iid and args.comdiv):
            ap.error("--iid and --comdiv are needed to run")
        out.mkdir(parents=True, exist_ok=True)
        sizes = [f"embedding_size={args.embedding}", f"hidden_size={args.hidden}"]
        mathen = sizes + ["member_options=" + json.dumps(member_options())]
        splits = [(name, path) for name, path in (("iid", args.iid), ("comdiv", args.comdiv))
                  if args.only in (None, name)]
        if args.only in (None, "iid"):
            run_one("gts", "iid", args.iid, args.seeds[0], args, sizes, args.gts_epochs)
        for seed in args.seeds:
            for name, path in splits:
                run_one("mathen", name, path, seed, args, mathen, args.epochs)
    print(table(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
