"""How many of one operator's verified candidates per round are new compositions rather than renamings:
per run directory and round, the candidates (``round_NN/candidates.jsonl``, every verified candidate of
the round), how many distinct texts they are once names are masked, and how many of those the run had not
made (names masked) in an earlier round. Rounds that keep renamings (operation 2) hand operation 1 the same
hosts and donors under new names, so a round's verified count alone overstates what it composes.

A name is any capitalized word other than a sentence opener of word problems (``OPENERS``), which is an
approximation for English (a capitalized place or brand is masked too) and reads nothing in Chinese, whose
names are not capitalized: for Chinese the count is of exact duplicates only.

    python bench/rename_dups.py --from-run-dir ../compaug-runs/studies/mawps-comdiv-gts-arms/cells/*loop* \\
        --operator geca_op1
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.kept_audit import run_directories  # noqa: E402
from mwp.problem import Problem, read_problems_jsonl  # noqa: E402
from tasks.loop import rundir  # noqa: E402

OPENERS = frozenset("How He She If They It The A An At In On What Each Every There This That Then Later After "
                    "Before When Now His Her Their Its For By Of And But So Some All I We You My Our".split())


def masked(problem: Problem) -> tuple[str, tuple[str, ...]]:
    """The problem's text with every name masked, and its expression: equal for two renamings of one problem."""
    words = ["<name>" if t[:1].isupper() and t not in OPENERS else t for t in problem.tokens]
    return " ".join(words), tuple(problem.prefix())


def per_round(run_dir: Path, operator: str) -> list[dict]:
    """For each complete augmenting round: verified candidates of ``operator``, distinct up to names, new up
    to names (not made in an earlier round of this run)."""
    seen: set = set()
    rows = []
    for r in rundir.completed_rounds(run_dir):
        path = rundir.round_dir(run_dir, r) / "candidates.jsonl"
        if r == 0 or not path.exists():
            continue
        made = [p for p in read_problems_jsonl(path) if p.provenance.operator == operator]
        keys = {masked(p) for p in made}
        rows.append({"round": r, "verified": len(made), "distinct": len(keys), "new": len(keys - seen)})
        seen |= keys
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from-run-dir", type=Path, nargs="+", required=True, metavar="DIR")
    ap.add_argument("--operator", default="geca_op1")
    args = ap.parse_args(argv)
    for run_dir in run_directories(args.from_run_dir):
        cells = ", ".join(f"round {x['round']}: {x['verified']} verified, {x['distinct']} distinct up to names, "
                          f"{x['new']} new" for x in per_round(run_dir, args.operator))
        print(f"{run_dir}: {cells or 'no augmenting round'}")


if __name__ == "__main__":
    main()
