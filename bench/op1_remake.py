"""Which judged operation-1 texts the current code still makes: each run directory's augmenting rounds are
remade from the pool they drew from (round r from ``round_{r-1}/pool.jsonl``, with the run's seed and its
``params.json`` augment config, operation 1 only, no held-out check) and the candidates' texts are matched
against a judged file (``docs/audits/...judged.jsonl``). A change to operation 1 that should refuse the
judged incoherent texts is checked by running this before and after it (``PYTHONPATH`` picks the tree
whose code runs, so another checkout can be measured with this script).
The run directories are only read.

  PYTHONPATH=. python bench/op1_remake.py --judged docs/audits/zh-op1-kept-study/sd-math23k-op1-kept.judged.jsonl \\
      --rounds 1,2 ../compaug-runs/studies/sd-math23k-gts/cells/gts-sd-least-confident-s*/*/
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from mwp.problem import read_problems_jsonl
from tasks.augment.base import AugmentConfig
from tasks.augment.generate import generate_candidates


def remake(run_dir: Path, rounds: list[int]) -> dict[int, set[str]]:
    """Texts of the operation-1 candidates of ``rounds`` of one run, remade from its pools."""
    params = json.loads((run_dir / "params.json").read_text())
    cfg = AugmentConfig(**{**params["augment"], "operators": ("geca_op1",)}, seed=params["seed"])
    out = {}
    for r in rounds:
        pool = run_dir / f"round_{r - 1:02d}" / "pool.jsonl"
        if not pool.exists():
            print(f"{run_dir}: no {pool.name} for round {r}, skipped", file=sys.stderr)
            continue
        out[r] = {p.text for p in generate_candidates(read_problems_jsonl(pool), cfg, r).candidates}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dirs", nargs="+", type=Path)
    ap.add_argument("--judged", type=Path, required=True)
    ap.add_argument("--rounds", default="1", help="comma-separated rounds to remake (default 1)")
    args = ap.parse_args()
    judged = {}
    for line in args.judged.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            judged[rec["text"]] = rec["verdict"]
    made: set[str] = set()
    for run_dir in args.run_dirs:
        for r, texts in remake(run_dir, [int(r) for r in args.rounds.split(",")]).items():
            made |= texts
            print(f"{run_dir} round {r}: {len(texts)} op1 texts, {len(texts & judged.keys())} of them judged")
    hit = judged.keys() & made
    print(f"judged texts still made: {len(hit)} of {len(judged)}", dict(sorted(Counter(judged[t] for t in hit).items())))
    for text in sorted(hit):
        print(f"  {judged[text]}\t{text}")


if __name__ == "__main__":
    main()
