"""What a Chinese host statement and the nearest donor question say differently, where no donor asks exactly
what the statement states: the limit of operation 1's entity route on Math23K, read from the pool.

    .venv/bin/python bench/op1_zh_predicate_gaps.py --math23k-split SPLIT.json [--top 30] [--show 20] [--out FILE.json]

The entity route (tasks/augment/geca.py) pairs a statement with donors whose question asks the same counted
entity with the same predicate words (``predicate``, less the neutral words). Over the training side of a
``compaug split`` file this reads every statement the route would consider (one used quantity of a known
entity, not a rate, passing the statement checks of ``zh_clause_refusal``) and counts those with a donor of
the same entity and predicate ("exact") and those with donors of the same entity only. For the second, the
nearest donor (fewest words in the symmetric difference) gives the difference: the words only the statement
says and the words only the question says, counted over statements; ``--show`` seeded examples are printed.
Nothing is composed: a difference is where a widening would have to license a pair, not a pair it would make.
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


def gaps(train, top: int, show: int) -> dict:
    from tasks.augment.base import clause_units
    from tasks.augment.compose import donor_ok, is_rate, used_quantity_in_clause
    from tasks.augment.entities import neutral, predicate, question_span, read
    from tasks.augment.zh_refusal import zh_clause_refusal

    question_neutral, statement_neutral = neutral("zh")
    donors: dict[str, list[tuple[frozenset[str], int]]] = defaultdict(list)
    for d, problem in enumerate(train):
        u, reading = clause_units(problem), read(problem, elided=True)
        if not donor_ok(problem, u) or reading.question_entity is None or question_span(problem) != u.spans[-1] \
                or is_rate(problem, *u.spans[-1]):
            continue
        asked = predicate(problem.tokens, *u.spans[-1], reading.question_entity, "zh") - question_neutral
        donors[reading.question_entity].append((asked, d))
    exact, entity_only, no_entity = 0, 0, 0
    differences: Counter = Counter()
    examples = []
    for h, problem in enumerate(train):
        u, reading = clause_units(problem), read(problem, elided=True)
        for c in range(len(u.spans) - 1):
            slot = used_quantity_in_clause(problem, u, c)
            start, end = u.spans[c]
            entity = reading.quantity_entities[slot] if slot is not None else None
            if entity is None or is_rate(problem, start, end) or sum(start <= q < end for q in u.qty_pos) != 1:
                continue
            states = predicate(problem.tokens, start, end, entity, "zh")
            if zh_clause_refusal(problem, u, c, entity, states):
                continue
            key = states - statement_neutral
            candidates = [(asked, d) for asked, d in donors.get(entity, ()) if d != h]
            if not candidates:
                no_entity += 1
            elif any(asked == key for asked, _ in candidates):
                exact += 1
            else:
                entity_only += 1
                asked, d = min(candidates, key=lambda ad: (len(ad[0] ^ key), ad[1]))
                diff = (" ".join(sorted(key - asked)), " ".join(sorted(asked - key)))
                differences[diff] += 1
                examples.append({"statement": "".join(problem.tokens[start:end]), "host": "".join(problem.tokens),
                                 "only_statement": diff[0], "only_question": diff[1],
                                 "nearest_donor": "".join(train[d].tokens)})
    random.Random(0).shuffle(examples)
    return {"train": len(train), "statements_with_an_exact_donor": exact,
            "statements_with_donors_of_the_entity_only": entity_only, "statements_with_no_donor_of_the_entity": no_entity,
            "top_differences": [{"only_statement": a, "only_question": b, "statements": n}
                                for (a, b), n in differences.most_common(top)],
            "examples": examples[:show]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--math23k-split", type=Path, required=True)
    ap.add_argument("--math23k", type=Path, default=ROOT.parent / "shared" / "data" / "math23k" / "math23k.json")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--show", type=int, default=20)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from mwp.readers import read_math23k
    from tasks.loop.datasets import load_split_file, split_problems

    problems = read_math23k(args.math23k).problems
    train, _, _ = split_problems(problems, 0, split=load_split_file(args.math23k_split))
    result = {"split": str(args.math23k_split), **gaps(train, args.top, args.show)}
    print(f"train side {result['train']}: statements with an exact donor {result['statements_with_an_exact_donor']}, "
          f"with donors of the entity only {result['statements_with_donors_of_the_entity_only']}, "
          f"with no donor of the entity {result['statements_with_no_donor_of_the_entity']}")
    print("nearest donor's difference (only the statement says | only the question says): statements")
    for row in result["top_differences"]:
        print(f"  {row['only_statement'] or '-'} | {row['only_question'] or '-'}: {row['statements']}")
    for ex in result["examples"]:
        print(f"  * {ex['statement']} [{ex['only_statement'] or '-'} | {ex['only_question'] or '-'}] <- {ex['nearest_donor']}")
    if args.out:
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
