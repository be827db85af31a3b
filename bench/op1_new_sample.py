"""A seeded sample of the operation-1 (or ``--operator``) candidates a change licenses, to be judged by reading: one op1 round
(bench/augment_speed.py --round: training side, verification, checks, held-out comparison) with the code
of ``--before`` (a commit, extracted with ``git archive``) and with this tree; the verified candidates of
the second round whose text the first did not make are the new ones.

    .venv/bin/python bench/op1_new_sample.py --before 825dc00 --out docs/audits/op1-en-widening.sample.jsonl \\
        sd:/work/compaug-runs/sd/mawps=20 mawps:../shared/data/mawps/MAWPS.json=45 sd:/work/compaug-runs/sd/builtin=50

``KIND`` is ``mawps`` (MAWPS.json, seeded split), ``mawps-split`` (a ``compaug split`` file over the
shared MAWPS), ``math23k`` (a ``compaug split`` file over the shared Math23K) or ``sd`` (a ``compaug sd``
directory). The candidates the first round made and the second does not (a change that refuses more) are
printed, each with its parents, for reading whether the refusal is right. Each ``KIND:PATH=N`` draws N new candidates (seed 0, a text drawn once across all sides) of the round
``--round KIND PATH``. The sample file has empty ``verdict`` and ``reason`` (bench/audit_files.py); a judge
copies it to ``*.judged.jsonl`` and ``bench/label_audit.py --score`` scores it.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dump_round(kind: str, where: str, out: str, operator: str = "geca_op1") -> None:
    """Run in the tree whose code is first on sys.path: one round of ``operator``, its verified candidates to ``out``."""
    from mwp.expr import Num, substitute, to_infix
    from mwp.readers import DataSpec, read_math23k, read_problems
    from tasks.augment.base import AugmentConfig
    from tasks.augment.generate import generate_candidates
    from tasks.augment.leakage import HeldOut
    from tasks.loop.datasets import load_split_file, split_problems

    if kind == "mawps":
        train, valid, tests = split_problems(DataSpec("mawps", Path(where)).load()[1], 0)
    elif kind == "mawps-split":  # a compaug split file over the shared MAWPS (e.g. --method comdiv)
        mawps = DataSpec("mawps", ROOT.parent / "shared" / "data" / "mawps" / "MAWPS.json").load()[1]
        train, valid, tests = split_problems(mawps, 0, split=load_split_file(Path(where)))
    elif kind == "math23k":  # a compaug split file over the shared Math23K (bench/augment_speed.py --round math23k)
        math23k = read_math23k(ROOT.parent / "shared" / "data" / "math23k" / "math23k.json").problems
        train, valid, tests = split_problems(math23k, 0, split=load_split_file(Path(where)))
    else:
        problems = read_problems(Path(where) / "train.jsonl").problems + read_problems(Path(where) / "test.jsonl").problems
        train, valid, tests = split_problems(problems, 0, split=load_split_file(Path(where) / "split.json"))
    batch = generate_candidates(train, AugmentConfig(operators=(operator,)), 1, HeldOut.build({"valid": valid, **tests}))
    by_id = {p.id: p for p in train}
    with open(out, "w", encoding="utf-8") as fh:
        for c in batch.candidates:
            equation = to_infix(substitute(c.expression, {i: Num(v) for i, v in enumerate(c.values)}))
            fh.write(json.dumps({"id": c.id, "text": c.text, "equation": equation, "answer": str(c.answer),
                                 "parents": [{"id": pid, "text": by_id[pid].text} for pid in c.provenance.parents],
                                 "detail": c.provenance.detail}, ensure_ascii=False) + "\n")


def diversity(rows: list[dict]) -> dict:
    """How many kinds a round's candidates are: texts distinct once names are masked (bench/rename_dups.py's
    reading), hosts (first parents), composed templates (the equation with its numbers masked) and pairs of
    host and template."""
    from rename_dups import OPENERS

    def masked(text: str) -> str:
        return " ".join("<name>" if t[:1].isupper() and t not in OPENERS else t for t in text.replace("'", " '").split())

    template = [re.sub(r"\d+(\.\d+)?", "N", r["equation"]) for r in rows]
    hosts = [r["parents"][0]["id"] for r in rows]
    return {"verified": len(rows), "distinct_up_to_names": len({(masked(r["text"]), r["equation"]) for r in rows}),
            "hosts": len(set(hosts)), "templates": len(set(template)), "host_x_template": len(set(zip(hosts, template)))}


def run_round(tree: Path, kind: str, where: str, out: Path, operator: str) -> list[dict]:
    code = (f"import sys; sys.path.insert(0, {str(tree)!r}); sys.path.insert(1, {str(ROOT / 'bench')!r}); "
            f"import op1_new_sample as s; s.dump_round({kind!r}, {where!r}, {str(out)!r}, {operator!r})")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tree)
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="commit whose op1 round is the baseline")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--operator", default="geca_op1", help="the operator whose round is compared (geca_op2 too)")
    parser.add_argument("sides", nargs="+", metavar="KIND:PATH=N")
    args = parser.parse_args()
    rng, rows, seen = random.Random(args.seed), [], set()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "before"
        base.mkdir()
        archive = subprocess.run(["git", "archive", args.before], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        for side in args.sides:
            spec, n = side.rsplit("=", 1)
            kind, where = spec.split(":", 1)
            where = str(Path(where).resolve())
            before = run_round(base, kind, where, Path(tmp) / "b.jsonl", args.operator)
            after = run_round(ROOT, kind, where, Path(tmp) / "a.jsonl", args.operator)
            made_before, made_after = {r["text"] for r in before}, {r["text"] for r in after}
            new = sorted((r for r in after if r["text"] not in made_before and r["text"] not in seen), key=lambda r: r["id"])
            gone = [r for r in before if r["text"] not in made_after]
            name = f"{args.operator.removeprefix('geca_')}-new-{kind}-{Path(where).name.lower().removesuffix('.json')}-verified"
            print(f"{side}: before {len(before)}, after {len(after)}, new {len(new)}, no longer made {len(gone)}", flush=True)
            print(f"  kinds before {diversity(before)}\n  kinds after  {diversity(after)}", flush=True)
            for r in gone:
                print(f"  no longer made: {r['text']}  [{r['equation']}]", flush=True)
                for parent in r["parents"]:
                    print(f"    parent {parent['id']}: {parent['text']}", flush=True)
            for r in sorted(rng.sample(new, min(int(n), len(new))), key=lambda r: r["id"]):
                seen.add(r["text"])
                rows.append({"dataset": name, "operator": args.operator, **r, "verdict": "", "reason": ""})
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    print(f"{len(rows)} rows -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
