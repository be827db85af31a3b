"""What operation 1 can rebuild of an SD set's structural test problems from its own training parts.

Each structural SD test problem (a seed problem with two operators) was decomposed into two training
parts (``<seed id>/sd<rule>a`` and ``.../sd<rule>b``, tasks/dbca/synthetic.py): the inner computation
and the outer one with the inner result as a quantity. Operation 1 rebuilds the seed's composition when
it inserts one part's narrative into the other's statement. For every seed whose two parts are on the
training side, this runs operation 1 on that pair alone (each part as host and as donor), verifies and
checks the candidates as a round does, and reports per test shape: the seeds, the pairs on the training
side, the pairs that gave a verified candidate of the seed's shape, and the refusals of the rest.

    .venv/bin/python bench/sd_op1_reach.py /work/compaug-runs/sd/builtin [--show 5]

The shapes are tasks/study/sd_report.py's (quantities as N, operands of + and * ordered).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class Reach:
    """Per test shape: structural test problems, their part pairs on the training side, the pairs op1
    rebuilt (a verified, checked candidate of the seed's shape), those where it made only another shape,
    the refusals of the pairs not rebuilt, and up to ``show`` of those pairs as text."""

    def __init__(self) -> None:
        self.seeds, self.pairs, self.rebuilt, self.other = Counter(), Counter(), Counter(), Counter()
        self.refusals: dict[str, Counter] = defaultdict(Counter)
        self.shown: dict[str, list[str]] = defaultdict(list)


def reach(sd: Path, show: int = 0) -> Reach:
    from mwp.problem import read_problems_jsonl
    from tasks.augment.base import AugmentConfig
    from tasks.augment.consistency import check_candidates
    from tasks.augment.geca import geca_op1
    from tasks.augment.verify import verify
    from tasks.study.sd_report import shape

    labels = json.loads((sd / "split.json").read_text(encoding="utf-8"))["labels"]
    parts: dict[str, list] = defaultdict(list)
    for p in read_problems_jsonl(sd / "train.jsonl"):
        if "/sd" in p.id:
            parts[p.id.rsplit("/sd", 1)[0]].append(p)
    cfg = AugmentConfig(per_round_cap=None, seed=0)
    out = Reach()
    for test in read_problems_jsonl(sd / "test.jsonl"):
        if labels.get(test.id) != "structural":
            continue
        want = shape(test.expression)
        out.seeds[want] += 1
        pair = parts.get(test.id, [])
        if len(pair) != 2:
            continue
        out.pairs[want] += 1
        batch = geca_op1(pair, cfg, cfg.round_seed(1), 1)
        verified, dropped = verify(batch.candidates, cfg.allow_unused_quantities, cfg.reject_negative_answers)
        checked, check_drops = check_candidates(verified, {p.id: p for p in pair})
        shapes = {shape(c.expression) for c in checked}
        if want in shapes:
            out.rebuilt[want] += 1
            continue
        if shapes:
            out.other[want] += 1
        reasons = batch.rejected + dropped + check_drops
        out.refusals[want].update(reasons or {"(no attempt)": 1})
        if len(out.shown[want]) < show:
            out.shown[want].append(" || ".join(f"{p.id}: {p.text} = {' '.join(p.prefix())}" for p in pair)
                                   + f"\n      refused: {dict(reasons)}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sd", type=Path, help="an SD folder made by `compaug sd` (train.jsonl, test.jsonl, split.json)")
    ap.add_argument("--show", type=int, default=0, help="print this many refused pairs per shape")
    args = ap.parse_args()
    r = reach(args.sd, args.show)
    print(f"{args.sd}: {sum(r.seeds.values())} structural test problems")
    print("| test shape | test problems | part pairs on the training side | rebuilt by op1 (verified, same shape) "
          "| op1 made another shape | refusals of the others (counts over pairs) |")
    print("|---|---|---|---|---|---|")
    for key, n in r.seeds.most_common():
        top = ", ".join(f"{reason} {c}" for reason, c in r.refusals[key].most_common(5)) or "-"
        print(f"| `{key}` | {n} | {r.pairs[key]} | {r.rebuilt[key]} | {r.other[key]} | {top} |")
    for key, lines in ((k, v) for k, v in r.shown.items() if v):
        print(f"\n{key}:")
        for line in lines:
            print("  " + line)


if __name__ == "__main__":
    main()
