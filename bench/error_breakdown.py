"""Where a trained solver's test answers go wrong: answer accuracy on subsets of the MAWPS test side.

Loads a checkpoint (bench/solver_speed.py --save), decodes the test side of the same seeded 80/20
split with beam 5, and prints answer accuracy overall and on subsets of the test problems: the gold
expression uses a value that occurs more than once in the text; the text has a word the model's
input vocabulary lacks (it reads ``<unk>``); the gold expression uses a constant; gold prefix length;
number of quantities. Each subset line gives its size, so small subsets read as what they are.

    .venv/bin/python bench/error_breakdown.py --checkpoint /tmp/gts80
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from flows.environment import apply_defaults  # noqa: E402

apply_defaults()  # the CLI's OpenMP waiting (flows/environment.py), set before torch loads OpenMP

sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402

from mwp.expr import Num, iter_nodes, quantity_slots  # noqa: E402
from mwp.problem import Problem  # noqa: E402
from mwp.readers import load_dataset  # noqa: E402
from solver_speed import checkpoint_split  # noqa: E402
from solvers.evaluate import score_one  # noqa: E402
from solvers.registry import load_solver  # noqa: E402
from solvers.vocab import UNK  # noqa: E402


def subsets(problem: Problem, known_words: set[str]) -> list[str]:
    """The subset labels one test problem belongs to."""
    nodes = list(iter_nodes(problem.expression))
    counts = Counter(problem.values)
    used = quantity_slots(problem.expression)
    qty_at = set(problem.quantity_positions())
    words = [t.lower() for i, t in enumerate(problem.tokens) if i not in qty_at]
    length = len(problem.prefix())
    n_qty = len(problem.quantities)
    return [
        "repeated value in gold" if any(counts[problem.values[i]] > 1 for i in used) else "no repeated value in gold",
        "word unseen in training" if any(w not in known_words for w in words) else "all words known",
        "constant in gold" if any(isinstance(n, Num) for n in nodes) else "no constant in gold",
        f"gold length {length}" if length <= 5 else "gold length 7+",
        f"{n_qty} quantities" if n_qty <= 3 else "4+ quantities",
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", required=True, help="a trained solver's directory (bench/solver_speed.py --save)")
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--seed", type=int, default=None, help="the split's seed (default: the one the checkpoint records)")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", help="write per-subset counts as JSON here")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)

    data = load_dataset("mawps", args.data)
    solver = load_solver(args.checkpoint, device="cpu")
    _, test = checkpoint_split(solver, data.problems, args.seed)
    known = {w for w in solver.encoding.input.words if w != UNK}
    predictions = solver.predict(test, beam_size=args.beam)
    table: dict[str, list[int]] = {}
    for problem, pred in zip(test, predictions):
        correct = score_one(problem, pred.tokens)[0]
        for label in ["all"] + subsets(problem, known):
            table.setdefault(label, [0, 0])
            table[label][0] += 1
            table[label][1] += correct
    print(f"{args.checkpoint}: {len(test)} test problems of its split, beam {args.beam}")
    print(f"{'subset':28s} {'n':>4s} {'answer acc':>10s}")
    for label in sorted(table, key=lambda k: (k != "all", k)):
        n, right = table[label]
        print(f"{label:28s} {n:4d} {right / n:10.3f}")
    if args.out:
        Path(args.out).write_text(json.dumps({k: {"n": n, "correct": c} for k, (n, c) in table.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
