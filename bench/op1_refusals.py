"""Samples of what operation 1 refuses, per reason, with the composition it would have made: for reading
whether a refusal is right or over-strict.

    .venv/bin/python bench/op1_refusals.py --math23k-split SPLIT.json [--reasons R ...] [--show 12] [--out FILE.json]
    .venv/bin/python bench/op1_refusals.py --mawps-split SPLIT.json [--mawps MAWPS.json] ...
    .venv/bin/python bench/op1_refusals.py --sd DIR ...
    .venv/bin/python bench/op1_refusals.py --mawps-seeded ...
    .venv/bin/python bench/op1_refusals.py --builtin ...

One op1 pass (round 1's seed, no round cap) over the train side of a Math23K or MAWPS split file (a
``compaug split`` file) or of a ``compaug sd`` directory. Each refusal is
booked with the host, the statement clause being replaced and, where a donor was drawn, the donor and the
text operation1 would have produced. The operator counts its refusals in ``CandidateBatch.rejected``; this
script swaps that counter for one that reads the operator's current host, clause and donor from the
calling frame (``geca_op1``'s or ``zh_numbers.compose``'s locals ``host``, ``u``, ``c``, ``d``, ``made``), so the
operator itself is run unchanged. Up to 400 refusals per reason are kept, and ``--show`` of them (seeded) are printed.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class Booked(Counter):
    """A Counter that also keeps, per key, what the calling operator was trying when it counted."""

    def __init__(self, book: dict[str, list[dict]]):
        super().__init__()
        self.book = book

    def __setitem__(self, key, value):
        from tasks.augment.geca import operation1

        frame = sys._getframe(1).f_locals
        host, c, d = frame.get("host"), frame.get("c"), frame.get("d")
        if host is not None and len(self.book[key]) < 400:
            u, problems = frame.get("u"), frame.get("problems")
            row = {"host": host.text}
            if c is not None and u is not None and c < len(u.spans):
                row["clause"] = "".join(host.tokens[slice(*u.spans[c])])
            if d is not None and (c, d) in frame.get("made", ()):  # a drawn donor, not a stale loop variable
                # geca_op1's frame has the pool's donors and units; zh_numbers.compose's has the donor drawn and its units
                donors, donor_units = frame.get("donor_problems", problems), frame.get("donor_units", frame.get("units"))
                donor = frame["donor"] if "donor" in frame else donors[d]  # a swapped donor
                donor_u = frame["donor_u"] if "donor_u" in frame else donor_units[d]
                row["donor"] = donor.text
                out = operation1(host, u, c, donor, donor_u, "", 1)
                row["would_be"] = out if isinstance(out, str) else out.text
            self.book[key].append(row)
        super().__setitem__(key, value)


def main() -> int:
    from mwp.readers import DataSpec, load_dataset, read_math23k, read_mawps, read_problems
    from tasks.augment import geca
    from tasks.augment.base import AugmentConfig, CandidateBatch
    from tasks.loop.datasets import load_split_file, split_problems

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--math23k-split", type=Path)
    which.add_argument("--mawps-split", type=Path)
    which.add_argument("--mawps-seeded", action="store_true",
                       help="the shared MAWPS's seeded split (seed 0, bench/augment_speed.py --round mawps)")
    which.add_argument("--sd", type=Path, help="a compaug sd directory (train.jsonl, test.jsonl, split.json)")
    which.add_argument("--builtin", action="store_true", help="the built-in corpus (default size), all of it as train")
    ap.add_argument("--math23k", type=Path, default=ROOT.parent / "shared" / "data" / "math23k" / "math23k.json")
    ap.add_argument("--mawps", type=Path, default=ROOT.parent / "shared" / "data" / "mawps" / "MAWPS.json")
    ap.add_argument("--reasons", nargs="*", default=(), help="only these reasons (default: every one)")
    ap.add_argument("--show", type=int, default=12)
    ap.add_argument("--out", type=Path, help="write every booked refusal here (JSON)")
    args = ap.parse_args()
    if args.math23k_split:
        problems, split = read_math23k(args.math23k).problems, load_split_file(args.math23k_split)
    elif args.mawps_split:
        problems, split = read_mawps(args.mawps).problems, load_split_file(args.mawps_split)
    elif args.builtin:
        problems, split = load_dataset("builtin").problems, None
    elif args.mawps_seeded:
        problems, split = DataSpec("mawps", args.mawps).load()[1], None  # as bench/augment_speed.py reads it
    else:
        problems = read_problems(args.sd / "train.jsonl").problems + read_problems(args.sd / "test.jsonl").problems
        split = load_split_file(args.sd / "split.json")
    if args.mawps_seeded:
        train = split_problems(problems, 0)[0]
    else:
        train = list(problems) if split is None else split_problems(problems, 0, split=split)[0]
    print(f"train side: {len(train)} problems")
    book: dict[str, list[dict]] = defaultdict(list)

    def batch() -> CandidateBatch:
        b = CandidateBatch()
        b.rejected = Booked(book)
        return b

    geca.CandidateBatch = batch  # the operator module's own name for it; nothing else is changed
    result = geca.geca_op1(train, AugmentConfig(per_round_cap=None), AugmentConfig().round_seed(1), 1)
    print(f"op1 candidates before verification: {len(result.candidates)}")
    rng = random.Random(0)
    for reason, count in result.rejected.most_common():
        if args.reasons and reason not in args.reasons:
            continue
        print(f"\n== {reason}: {count}")
        for row in rng.sample(book[reason], min(args.show, len(book[reason]))):
            print(" *", row.get("clause", ""), "|", row.get("would_be") or row["host"])
    if args.out:
        args.out.write_text(json.dumps(book, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
