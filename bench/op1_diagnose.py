"""Why operation 1 does (not) compose with each host: per host template (the host's prefix expression),
its hosts, its verified op1 candidates and the refusals of its attempts; and the root templates
(first two tokens) of all verified op1 candidates.

    .venv/bin/python bench/op1_diagnose.py TRAIN.jsonl [--template "/ N0 N1"] [--show N] [--dump FILE]

One op1 pass over the pool (round 1's seed, default per-problem cap, no round cap), then verification
and the consistency checks as a round runs them (tasks/augment/generate.py; the held-out comparison is
bench/augment_speed.py --round). Refusals are attributed to the host being tried: the operator's host
loop starts each host with ``has_abbreviation(host.tokens)``, which the script watches. Refusals counted
while the donor index is built (before any host) are listed as ``(donor index)``. ``--show`` prints the
first N hosts of ``--template`` with each clause's entity, holder and predicate.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class Attributed(Counter):
    """A Counter that also books every increment under the current host's key."""

    def __init__(self, owner):
        super().__init__()
        self.owner = owner

    def __setitem__(self, key, value):
        self.owner.per[self.owner.current][key] += value - self.get(key, 0)
        super().__setitem__(key, value)


def main() -> None:
    from mwp.expr import to_prefix
    from mwp.readers import read_problems
    from tasks.augment import geca
    from tasks.augment.base import AugmentConfig, CandidateBatch, clause_units
    from tasks.augment.consistency import check_candidates
    from tasks.augment.entities import predicate
    from tasks.augment.verify import verify

    ap = argparse.ArgumentParser()
    ap.add_argument("train", type=Path)
    ap.add_argument("--template", default="/ N0 N1")
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--dump", type=Path, help="write the verified op1 candidates here (JSONL: text, prefix, answer, detail)")
    args = ap.parse_args()
    pool = read_problems(args.train).problems
    ids = {tuple(p.tokens): p.id for p in pool}

    class Watch:
        current = "(donor index)"
        per: dict = defaultdict(Counter)
    watch = Watch()
    real_abbrev = geca.has_abbreviation

    def watched(tokens):
        if watch.seen_index and tuple(tokens) in ids:
            watch.current = ids[tuple(tokens)]
        return real_abbrev(tokens)
    watch.seen_index = False
    real_read = geca.read

    class Batch(CandidateBatch):
        def __init__(self):
            super().__init__()
            self.rejected = Attributed(watch)

    real_shuffle_owner = geca.rng_for

    def rng_for(*a, **k):  # the host loop starts right after the shuffle
        rng = real_shuffle_owner(*a, **k)
        real = rng.shuffle

        def shuffle(x):
            real(x)
            watch.seen_index = True
        rng.shuffle = shuffle
        return rng
    geca.has_abbreviation, geca.CandidateBatch, geca.rng_for = watched, Batch, rng_for
    cfg = AugmentConfig(per_round_cap=None, seed=0)
    batch = geca.geca_op1(pool, cfg, cfg.round_seed(1), 1)
    made = Counter(c.provenance.parents[0] for c in batch.candidates)
    kept, rejected = verify(batch.candidates, cfg.allow_unused_quantities, cfg.reject_negative_answers)
    kept, checked = check_candidates(kept, {p.id: p for p in pool})
    verified = Counter(c.provenance.parents[0] for c in kept)
    by_tpl: dict[str, Counter] = defaultdict(Counter)
    hosts, made_t, ver_t = Counter(), Counter(), Counter()
    for p in pool:
        t = " ".join(to_prefix(p.expression))
        hosts[t] += 1
        made_t[t] += made[p.id]
        ver_t[t] += verified[p.id]
        by_tpl[t].update(watch.per.get(p.id, {}))
    print(f"pool {len(pool)}; op1 made {len(batch.candidates)}, verified+checked {len(kept)}; "
          f"verify drops {dict(rejected)}; check drops {dict(checked)}")
    print("donor index refusals:", dict(watch.per["(donor index)"]))
    for t, n in hosts.most_common(10):
        print(f"{t:22s} hosts={n:4d} made={made_t[t]:4d} verified={ver_t[t]:4d} {dict(by_tpl[t].most_common(6))}")
    roots = Counter(" ".join(to_prefix(c.expression)[:2]) for c in kept)
    print("verified op1 roots:", dict(roots.most_common()))
    print("verified op1 templates with '/' root:", Counter(" ".join(to_prefix(c.expression)) for c in kept
                                                          if to_prefix(c.expression)[0] == "/").most_common(8))
    if args.dump:
        with args.dump.open("w", encoding="utf-8") as f:
            for c in kept:
                f.write(json.dumps({"id": c.id, "text": " ".join(c.tokens), "prefix": " ".join(to_prefix(c.expression)),
                                    "answer": str(c.answer), "parents": list(c.provenance.parents),
                                    "detail": c.provenance.detail}, ensure_ascii=False) + "\n")
    shown = 0
    for p in pool:
        if shown >= args.show or " ".join(to_prefix(p.expression)) != args.template:
            continue
        shown += 1
        u, r = clause_units(p), real_read(p)
        print("HOST", p.id, " ".join(p.tokens), "|", " ".join(to_prefix(p.expression)), "=", p.answer)
        for c, (a, b) in enumerate(u.spans):
            slot = geca.used_quantity_in_clause(p, u, c)
            ent = r.quantity_entities[slot] if slot is not None else None
            pred = sorted(predicate(p.tokens, a, b, ent, p.language)) if ent else "-"
            print(f"  clause {c}: {' '.join(p.tokens[a:b])!r} slot={slot} entity={ent} "
                  f"holder={r.clause_holders[c]} pred={pred}")
        print("  question entity", r.question_entity, "holder", r.question_holder,
              "| refusals", dict(watch.per.get(p.id, {})), "| verified", verified[p.id])


if __name__ == "__main__":
    main()
