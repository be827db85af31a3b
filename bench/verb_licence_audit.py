"""Reading draws for the verb-noun licence of noun swaps (tasks/augment/licence.py): which operation-2
swaps it refuses, and which swaps under a selective verb it keeps, for a person to judge.

Two steps, so that the swaps refused are the very candidates the code without the licence verified:

  1. ``--dump FILE``: one round of operation 2 alone (default config, round 1, leakage check as the loop
     runs it) on the training side of a compaug split over MAWPS; every verified candidate, with its
     parent and detail, one JSON line each. It uses nothing of the licence, so it runs under the code
     before it as well (``PYTHONPATH=<that tree>``).
  2. ``--draw FILE --out DIR``: each dumped noun swap whose replaced noun is the object of a selective
     verb in its parent is made again by this tree's ``swap_entity`` with the licence (built from the same
     training side): refused by the licence, refused for another reason (counted), or kept. ``--sample``
     of the refused and of the kept are drawn with ``--draw-seed`` into ``<out>/op2-verb-refused.sample.jsonl``
     and ``<out>/op2-verb-kept.sample.jsonl`` (bench/label_audit.py's format; copy to ``.judged.jsonl``,
     judge, and score with ``bench/label_audit.py --score DIR``), leaving out every problem of the judged
     files given to ``--exclude``; the counts go to ``<out>/draw.json``.

  PYTHONPATH=../main python bench/verb_licence_audit.py --split SPLIT.json --data DATA --dump before.jsonl
  python bench/verb_licence_audit.py --split SPLIT.json --data DATA --draw before.jsonl --out docs/audits/x
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def training_side(split: Path, data: Path):
    from mwp.readers import DataSpec
    from tasks.loop.datasets import load_split_file, split_problems

    problems = DataSpec("mawps", data / "mawps" / "MAWPS.json").load()[1]
    train, valid, tests = split_problems(problems, 0, split=load_split_file(split))
    return train, valid, tests


def dump(split: Path, data: Path, out: Path) -> int:
    from mwp.expr import Num, substitute, to_infix
    from tasks.augment.base import AugmentConfig
    from tasks.augment.generate import generate_candidates
    from tasks.augment.leakage import HeldOut

    train, valid, tests = training_side(split, data)
    batch = generate_candidates(train, AugmentConfig(operators=("geca_op2",)), 1, HeldOut.build({"valid": valid, **tests}))
    by_id = {p.id: p for p in train}
    with open(out, "w", encoding="utf-8") as fh:
        for c in batch.candidates:
            equation = to_infix(substitute(c.expression, {i: Num(v) for i, v in enumerate(c.values)}))
            fh.write(json.dumps({"operator": c.provenance.operator, "id": c.id, "text": c.text, "equation": equation,
                                 "answer": str(c.answer),
                                 "parents": [{"id": pid, "text": by_id[pid].text} for pid in c.provenance.parents],
                                 "detail": c.provenance.detail}, ensure_ascii=False) + "\n")
    print(json.dumps({"verified_op2": len(batch.candidates), "rejected": dict(sorted(batch.rejected.items()))}, indent=1))
    return 0


def draw(split: Path, data: Path, before: Path, out: Path, sample: int, seed: int, exclude: list[Path]) -> int:
    from bench.audit_files import read_judged, write_sample
    from bench.label_audit import VERDICTS
    from tasks.augment.licence import REASON, verb_objects
    from tasks.augment.swap import pool_entities, swap_entity

    train, _, _ = training_side(split, data)
    by_id = {p.id: p for p in train}
    entities = pool_entities(train)
    judged = {row["text"] for path in exclude for row in read_judged(path, VERDICTS)}
    rows = [json.loads(line) for line in before.read_text(encoding="utf-8").splitlines() if line.strip()]
    refused, kept, verbs_of, other = [], [], Counter(), Counter()
    for row in rows:
        if not row["detail"].startswith("noun: "):
            continue
        old, new = row["detail"].removeprefix("noun: ").split(" -> ")
        parent = by_id[row["parents"][0]["id"]]
        verbs = sorted(v for v, n in verb_objects(parent) if n == old)
        if not verbs:
            continue
        made = swap_entity(parent, entities.entity("noun", old), entities.entity("noun", new), "geca_op2", "", 1,
                           entities.gender, entities.takes)
        row = dict(row, verbs=verbs, verdict="", reason="")
        if made == REASON:
            refused.append(dict(row, dataset="op2-verb-refused"))
            verbs_of.update(f"refused {v}" for v in verbs)
        elif isinstance(made, str):
            other[made] += 1
        else:
            kept.append(dict(row, dataset="op2-verb-kept"))
            verbs_of.update(f"kept {v}" for v in verbs)
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    for name, items in (("op2-verb-refused", refused), ("op2-verb-kept", kept)):
        items = [r for r in items if r["text"] not in judged]
        write_sample(out / f"{name}.sample.jsonl", sorted(rng.sample(items, min(sample, len(items))), key=lambda r: r["id"]))
    record = {"dumped": len(rows), "noun_swaps": sum(r["detail"].startswith("noun: ") for r in rows),
              "refused": len(refused), "kept_under_selective_verb": len(kept), "refused_otherwise": dict(other),
              "by_verb": dict(sorted(verbs_of.items())), "already_judged": len(judged),
              "takes": {v: sorted(n) for v, n in sorted(entities.takes.items())}, "sample": sample, "draw_seed": seed}
    (out / "draw.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in record.items() if k != "takes"}, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", type=Path, required=True, help="compaug split file over MAWPS")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--dump", type=Path, help="write the verified op2 candidates here (JSON lines)")
    parser.add_argument("--draw", type=Path, help="a --dump file to classify and draw from")
    parser.add_argument("--out", type=Path, help="folder for the drawn samples (with --draw)")
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--draw-seed", type=int, default=0)
    parser.add_argument("--exclude", type=Path, nargs="*", default=[], help="judged files whose problems are not drawn")
    args = parser.parse_args(argv)
    if args.dump:
        return dump(args.split, args.data, args.dump)
    if args.draw and args.out:
        return draw(args.split, args.data, args.draw, args.out, args.sample, args.draw_seed, args.exclude)
    parser.error("give --dump FILE, or --draw FILE with --out DIR")
    return 2


if __name__ == "__main__":
    sys.exit(main())
