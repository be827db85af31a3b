"""Coherence audit of SD sets (``compaug sd``): draws a seeded sample of training parts and lexical test
items per set for a person to judge by reading them, and scores judged files.

What is sampled (tasks/dbca/synthetic.py):

* ``train``: the decomposition parts, the synthetic problems of the train side (provenance operator
  ``sd_decomposition``): some seed clauses and one placeholder clause taken from the most similar
  indexed problem of the part's template. The train side also holds the reformulation seeds, original
  problems unchanged; they are counted in the sample record but not sampled.
* ``lexical``: the test items labelled ``lexical``, a reformulation seed's statements with the question
  of the most similar problem of the other template.

The ``structural`` test items are the decomposition seeds themselves, original problems; they are
counted (and checked to be originals) but not sampled.

Writes per set ``<out>/sd-<name>.sample.jsonl`` (id, kind, text, expression, answer, parents, verdict,
reason; verdict and reason empty). A judge copies it to ``sd-<name>.judged.jsonl`` and fills every
``verdict`` with ``coherent`` (the sentences fit together: the same entities and units, the question asks
about what the statements count, the expression answers it) or ``incoherent``, and ``reason`` with one
line. ``--score DIR`` prints the coherent share per set and kind with its Wilson 95% interval.

  python bench/sd_audit.py --sd builtin=runs/sd/builtin --sd mawps=runs/sd/mawps --out docs/audits/sd
  python bench/sd_audit.py --score docs/audits/sd
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.audit_files import JudgedFileError, read_judged, wilson_interval, write_sample  # noqa: E402

VERDICTS = ("coherent", "incoherent")
KINDS = ("train", "lexical")


def load_sd(directory: Path) -> tuple[dict, list, list]:
    """(split.json document, train problems, test problems) of a folder written by ``compaug sd``."""
    from mwp.problem import read_problems_jsonl

    document = json.loads((directory / "split.json").read_text(encoding="utf-8"))
    if document.get("method") != "sd" or "labels" not in document:
        raise ValueError(f"{directory / 'split.json'}: not an SD split file (method 'sd' with labels)")
    return document, read_problems_jsonl(directory / "train.jsonl"), read_problems_jsonl(directory / "test.jsonl")


def infix_with_values(problem) -> str:
    """The expression with the problem's numbers in place of N0, N1, ...; a fraction is bracketed, so
    that 90/(2/3) does not read as 90/2/3."""
    from mwp.expr import format_number, to_infix

    def shown(match: re.Match) -> str:
        text = format_number(problem.values[int(match.group(1))])
        return f"({text})" if "/" in text else text

    return re.sub(r"N(\d+)", shown, to_infix(problem.expression))


def audit_rows(name: str, document: dict, train: list, test: list, per_kind: int, seed: int) -> tuple[list, dict]:
    """The sampled rows (``per_kind`` training parts and lexical items, or all when fewer, ordered by id)
    and the counts of what they were drawn from."""
    labels = document["labels"]
    parts = [p for p in train if p.provenance.operator == "sd_decomposition"]
    lexical = [p for p in test if labels.get(p.id) == "lexical"]
    structural = [p for p in test if labels.get(p.id) == "structural"]
    unlabelled = [p.id for p in test if p.id not in labels]
    if unlabelled:
        raise ValueError(f"{name}: test items without a structural/lexical label: {unlabelled[:5]}")
    rng = random.Random(seed)
    rows = []
    for kind, pool in (("train", parts), ("lexical", lexical)):
        for p in sorted(rng.sample(pool, min(per_kind, len(pool))), key=lambda p: p.id):
            rows.append({"set": name, "id": p.id, "kind": kind, "text": p.text, "expression": infix_with_values(p),
                         "answer": float(p.answer), "rule": p.provenance.detail,
                         "parents": list(p.provenance.parents), "verdict": "", "reason": ""})
    counts = {"set": name, "train": len(train), "train_parts": len(parts),
              "train_originals": len(train) - len(parts), "test": len(test), "lexical": len(lexical),
              "structural": len(structural),
              "structural_originals": sum(p.provenance.operator == "original" for p in structural),
              "sampled": dict(Counter(r["kind"] for r in rows))}
    return rows, counts


def score_table(directory: Path) -> list[dict]:
    """One record per (set, kind) of the ``sd-*.judged.jsonl`` files: n, coherent, share, Wilson 95%."""
    counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for path in sorted(directory.glob("sd-*.judged.jsonl")):
        for row in read_judged(path, VERDICTS):
            if row.get("kind") not in KINDS:
                raise JudgedFileError(f"{path}: row {row.get('id')!r}: kind must be one of {KINDS}")
            counts[(row["set"], row["kind"])][row["verdict"]] += 1
    table = []
    for (name, kind), c in sorted(counts.items(), key=lambda kv: (kv[0][0], KINDS.index(kv[0][1]))):
        n, coherent = sum(c.values()), c["coherent"]
        low, high = wilson_interval(coherent, n)
        table.append({"set": name, "kind": kind, "n": n, "coherent": coherent, "share": coherent / n,
                      "low": low, "high": high})
    return table


def print_table(table: list[dict]) -> None:
    print("| SD set | kind | judged | coherent | share | Wilson 95% |")
    print("|---|---|---|---|---|---|")
    for r in table:
        print(f"| {r['set']} | {r['kind']} | {r['n']} | {r['coherent']} | {r['share']:.2f} | "
              f"{r['low']:.2f}-{r['high']:.2f} |")


def named_folder(value: str) -> tuple[str, Path]:
    name, sep, folder = value.partition("=")
    if not sep or not name or not folder:
        raise argparse.ArgumentTypeError(f"expected NAME=DIR, got {value!r}")
    return name, Path(folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sd", type=named_folder, action="append", default=[], metavar="NAME=DIR",
                        help="an SD set: the folder compaug sd wrote (train.jsonl, test.jsonl, split.json)")
    parser.add_argument("--out", type=Path, default=Path("docs/audits/sd"))
    parser.add_argument("--per-kind", type=int, default=50, help="items sampled per kind and set (all when fewer)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--score", type=Path, metavar="DIR", help="print coherent shares from sd-*.judged.jsonl")
    args = parser.parse_args(argv)
    if args.score:
        try:
            print_table(score_table(args.score))
        except JudgedFileError as err:
            print(err, file=sys.stderr)
            return 2
        return 0
    if not args.sd:
        parser.error("--sd NAME=DIR is required to draw samples")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, folder in args.sd:
        rows, counts = audit_rows(name, *load_sd(folder), args.per_kind, args.seed)
        write_sample(args.out / f"sd-{name}.sample.jsonl", rows)
        print(json.dumps(counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
