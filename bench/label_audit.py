"""Label audit of the augmentation operators: draws a seeded sample of the problems a round *keeps*, per
operator, for a person to judge by reading them, and scores judged files.

Two rounds, as the loop runs them (default score ``confidence``, keep 20%): one on the train side of a
MAWPS ComDiv split, one on the built-in corpus. The sample is drawn from what the per-operator policy
keeps (the top 20% of each operator), because the global top 20% keeps no operation-1 problem on MAWPS;
the round file reports what each policy keeps. For each, a small GTS is trained on the
train side (epochs chosen on validation), round-1 candidates are generated from the train side (held-out
problems excluded), scored with the trained solver, and kept. Writes per dataset:

  <out>/<dataset>.sample.jsonl   the sampled kept problems, ``verdict`` empty, to be judged
  <out>/<dataset>.round.json     the round's counts: every automatic check's rejections, verified and
                                 kept per operator

A judge copies a sample file to ``<dataset>.judged.jsonl`` and fills every ``verdict`` with ``correct``,
``wrong_label`` (the text is sound, the expression or answer is not what it asks) or
``incoherent_text`` (the text contradicts itself, names things that do not fit, cannot be answered), and
``reason`` with one line. ``--score DIR`` prints precision per operator from the judged files.

  python bench/label_audit.py --split runs/splits/mawps-comdiv-c0.77.json --out docs/audits
  python bench/label_audit.py --score docs/audits

``--verified`` draws from the round's *verified* candidates instead (every automatic check passed, no
solver trained, nothing ranked or kept): Chinese on the train side of a Math23K split file, English on
the train side of MAWPS's seeded random split. Its files are named ``<dataset>-verified.*``; the precision
they give is that of verified candidates, not of kept ones.

  python bench/label_audit.py --verified --math23k-split runs/splits/m23k.json --out docs/audits

With ``--only OPERATOR`` as well: a Math23K round of that operator alone (MAWPS skipped), its verified candidates
sampled into ``math23k-comdiv-<operator>-verified.*``.

  python bench/label_audit.py --verified --math23k-split runs/splits/m23k.json --only problem_reordering \
      --per-operator 60 --out docs/audits

With ``--math23k-split`` alone (no ``--verified``): *kept* Chinese problems, from a small GTS trained on the
Math23K train side (hidden 128, ``--epochs``, validated once on 300 problems) and the per-operator policy.

  python bench/label_audit.py --math23k-split runs/splits/m23k.json --epochs 8 --out docs/audits

A second sample of the same round: the round is made with ``--seed`` as before, the sample drawn with
``--draw-seed``, leaving out every problem of the judged files given to ``--exclude``. ``--score`` takes
several folders and pools rows of one dataset name, so both draws count together and each alone:

  python bench/label_audit.py --math23k-split runs/splits/m23k.json --epochs 8 --out runs/audit --reuse \
      --only geca_op2 --draw-seed 1 --exclude docs/audits/math23k-comdiv-kept.judged.jsonl
  python bench/label_audit.py --score docs/audits docs/audits/zh-op2-draw2
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.audit_files import JudgedFileError, read_judged, write_sample  # noqa: E402
from flows.environment import apply_defaults  # noqa: E402

apply_defaults()

VERDICTS = ("correct", "wrong_label", "incoherent_text")


def audit_round(name: str, train, valid, held_out: dict, solver_options: dict, epochs: int, seed: int,
                per_operator: int, out: Path, only: tuple[str, ...] = (), eval_every: int = 2, beam_size: int = 5,
                reuse: bool = False, draw_seed: int | None = None, exclude: frozenset = frozenset()) -> dict:
    from mwp.expr import Num, substitute, to_infix
    from ranking.retention import Scored, retain
    from solvers.base import TrainConfig
    from solvers.registry import solver_config
    from tasks.augment.base import AugmentConfig
    from tasks.augment.generate import generate_candidates
    from tasks.augment.leakage import HeldOut
    from tasks.loop.training import score_with_checkpoint, train_solver

    t0 = time.perf_counter()
    checkpoint = out / f".{name}-checkpoint"
    config = TrainConfig(epochs=epochs, eval_every=eval_every, beam_size=beam_size, seed=seed, device="cpu",
                         progress=False)
    summary = None
    if not (reuse and (checkpoint / "checkpoint.json").exists()):  # --reuse: the checkpoint this command trained
        summary = train_solver(train, valid, "gts", solver_config("gts", solver_options), config, checkpoint)
    config = AugmentConfig(seed=seed)
    if not set(only) <= set(config.operators):
        config = AugmentConfig(seed=seed, operators=only)
    batch = generate_candidates(train, config, 1, HeldOut.build(held_out))
    by_id = {p.id: p for p in train}
    scores, unscorable = score_with_checkpoint(checkpoint, batch.candidates, "confidence", by_id, seed, "cpu")
    scored = [Scored(c.id, s, c.provenance.operator) for c, s in zip(batch.candidates, scores)]
    kept_globally = Counter(s.group for s in retain("top-fraction", scored, 0.2)[0])
    # Sampled from what the per-operator policy keeps: the global top 20% keeps no operation-1 problem
    # at all on MAWPS (their scores are lower), so there would be nothing of it to judge.
    kept_ids = {s.id: s.score for s in retain("per-operator", scored, 0.2)[0]}
    kept = [c for c in batch.candidates if c.id in kept_ids]
    rows = []
    for c in draw(kept, lambda c: c.provenance.operator, per_operator, seed if draw_seed is None else draw_seed,
                  only, exclude):
        equation = to_infix(substitute(c.expression, {i: Num(v) for i, v in enumerate(c.values)}))
        rows.append({"dataset": name, "operator": c.provenance.operator, "id": c.id, "text": c.text,
                     "equation": equation, "answer": float(c.answer), "confidence": round(kept_ids[c.id], 4),
                     "parents": [{"id": pid, "text": by_id[pid].text} for pid in c.provenance.parents],
                     "detail": c.provenance.detail, "verdict": "", "reason": ""})
    write_sample(out / f"{name}.sample.jsonl", rows)
    record = {"dataset": name, "train": len(train), "solver": solver_options, "epochs": epochs,
              "best_epoch": summary and summary.best_epoch,
              "valid_answer_acc": summary and summary.best_valid_answer_acc, "validated_on": len(valid),
              "verified": dict(Counter(c.provenance.operator for c in batch.candidates)),
              "kept_per_operator_policy": dict(Counter(c.provenance.operator for c in kept)),
              "kept_top_fraction_policy": dict(kept_globally), "unscorable": unscorable,
              "rejected": dict(sorted(batch.rejected.items())), "sampled": dict(Counter(r["operator"] for r in rows)),
              "draw_seed": seed if draw_seed is None else draw_seed, "kept_already_judged": sum(c.id in exclude or c.text in exclude for c in kept),
              "seconds": round(time.perf_counter() - t0, 1)}
    (out / f"{name}.round.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    return record


def draw(items: list, operator_of, per_operator: int, seed: int, only: tuple[str, ...] = (),
         exclude: frozenset = frozenset()) -> list:
    """A seeded sample of up to ``per_operator`` items of each operator (operators in sorted order, each
    sample sorted by id), leaving out items whose id or text is in ``exclude``: a second draw of the same
    round with another seed never repeats a problem an earlier draw already had judged."""
    rng = random.Random(seed)
    chosen = []
    for operator in sorted({operator_of(c) for c in items}):
        if only and operator not in only:
            continue
        mine = [c for c in items if operator_of(c) == operator and c.id not in exclude and c.text not in exclude]
        chosen.extend(sorted(rng.sample(mine, min(per_operator, len(mine))), key=lambda c: c.id))
    return chosen


def judged_problems(paths: list[Path]) -> frozenset:
    """The ids and texts of every row of the judged files ``paths`` (for ``draw``'s ``exclude``)."""
    seen = set()
    for path in paths:
        for row in read_judged(path, VERDICTS):
            seen.update((row["id"], row["text"]))
    return frozenset(seen)


def verified_round(name: str, train, held_out: dict, seed: int, per_operator: int, out: Path,
                   operators: tuple[str, ...], draw_seed: int | None = None,
                   exclude: frozenset = frozenset()) -> dict:
    """One round's verified candidates (no solver), a seeded sample of each operator to judge. The round runs
    operations 1 and 2 (the default config) unless another operator is asked for: then only those. The round
    is made with ``seed``; the sample is drawn with ``draw_seed`` (default ``seed``), leaving out ``exclude``
    (``draw``), so a second draw of the same round repeats no judged problem."""
    from mwp.expr import Num, substitute, to_infix
    from tasks.augment.base import AugmentConfig
    from tasks.augment.generate import generate_candidates
    from tasks.augment.leakage import HeldOut

    t0 = time.perf_counter()
    config = AugmentConfig(seed=seed)
    if not set(operators) <= set(config.operators):
        config = AugmentConfig(seed=seed, operators=operators)
    batch = generate_candidates(train, config, 1, HeldOut.build(held_out))
    by_id = {p.id: p for p in train}
    draw_seed = seed if draw_seed is None else draw_seed
    rows = []
    for c in draw(batch.candidates, lambda c: c.provenance.operator, per_operator, draw_seed, operators, exclude):
        equation = to_infix(substitute(c.expression, {i: Num(v) for i, v in enumerate(c.values)}))
        rows.append({"dataset": name, "operator": c.provenance.operator, "id": c.id, "text": c.text,
                     "equation": equation, "answer": str(c.answer),
                     "parents": [{"id": pid, "text": by_id[pid].text} for pid in c.provenance.parents],
                     "detail": c.provenance.detail, "verdict": "", "reason": ""})
    write_sample(out / f"{name}.sample.jsonl", rows)
    record = {"dataset": name, "train": len(train), "what": "verified candidates (not scored, not kept)",
              "verified": dict(Counter(c.provenance.operator for c in batch.candidates)),
              "rejected": dict(sorted(batch.rejected.items())), "sampled": dict(Counter(r["operator"] for r in rows)),
              "draw_seed": draw_seed,
              "verified_already_judged": sum(c.id in exclude or c.text in exclude for c in batch.candidates),
              "seconds": round(time.perf_counter() - t0, 1)}
    (out / f"{name}.round.json").write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
    return record


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def score(*directories: Path) -> int:
    """Print precision per dataset and operator over the judged files of ``directories`` (pooled: rows of
    one dataset name in several folders, e.g. two draws of one round, count together)."""
    counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for path in [p for d in directories for p in sorted(Path(d).glob("*.judged.jsonl"))]:
        try:
            rows = read_judged(path, VERDICTS)
        except JudgedFileError as err:
            print(err, file=sys.stderr)
            return 2
        for row in rows:
            # op1-division.judged.jsonl names its rows' data "set" and has op1 rows only
            dataset = row.get("dataset") or f"{path.name.removesuffix('.judged.jsonl')} ({row.get('set', '?')})"
            operator = row.get("operator") or row["id"].split("-")[1]
            counts[(dataset, operator)][row["verdict"]] += 1
            # kept problems and verified candidates are pooled apart: they answer different questions
            pool = "all verified" if dataset.endswith("-verified") or "dataset" not in row else "all kept"
            counts[(pool, operator)][row["verdict"]] += 1
    print("| data | operator | judged | correct | wrong_label | incoherent_text | precision | Wilson 95% |")
    print("|---|---|---|---|---|---|---|---|")
    for (data, operator), c in sorted(counts.items(), key=lambda kv: (kv[0][0].startswith("all"), kv[0])):
        n = sum(c.values())
        low, high = wilson(c["correct"], n)
        print(f"| {data} | {operator} | {n} | {c['correct']} | {c['wrong_label']} | {c['incoherent_text']} | "
              f"{c['correct'] / n:.2f} | [{low:.2f}, {high:.2f}] |")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", type=Path, help="MAWPS ComDiv split file (compaug split --target-divergence 0.77)")
    parser.add_argument("--mawps", type=Path, default=Path("../shared/data/mawps/MAWPS.json"))
    parser.add_argument("--out", type=Path, default=Path("docs/audits"))
    parser.add_argument("--per-operator", type=int, default=100, help="kept problems sampled per operator and dataset")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0, help="solver, split and augmentation seed; files are named "
                        "<dataset>-seedN unless N is 0")
    parser.add_argument("--only", nargs="+", default=(), metavar="OPERATOR", help="sample only these operators")
    parser.add_argument("--verified", action="store_true", help="sample verified candidates (no solver): Math23K "
                        "(Chinese) and MAWPS (English)")
    parser.add_argument("--math23k-split", type=Path, help="Math23K split file (compaug split --format math23k)")
    parser.add_argument("--math23k", type=Path, default=Path("../shared/data/math23k/math23k.json"))
    parser.add_argument("--reuse", action="store_true", help="score with the checkpoint an earlier run of this "
                        "command left in OUT (Math23K kept audit) instead of training again")
    parser.add_argument("--draw-seed", type=int, help="seed of the sample drawn from what is kept (default: "
                        "--seed); the round itself is still made with --seed")
    parser.add_argument("--exclude", type=Path, nargs="+", default=(), metavar="JUDGED",
                        help="judged files whose problems (by id or text) are not drawn again")
    parser.add_argument("--score", type=Path, nargs="+", metavar="DIR",
                        help="print precision per operator from the judged files of these folders, pooled")
    args = parser.parse_args(argv)
    if args.score:
        return score(*args.score)
    exclude = judged_problems(list(args.exclude))
    if args.math23k_split and not args.verified:
        # Kept Chinese problems: a small GTS (hidden 128, 8 epochs, validated once on 300 problems with
        # greedy decoding, to fit a shared 2-core CPU) scores the round, the per-operator policy keeps 20%.
        from mwp.readers import read_math23k
        from tasks.loop.datasets import load_split_file, split_problems

        args.out.mkdir(parents=True, exist_ok=True)
        train, valid, tests = split_problems(read_math23k(args.math23k).problems, args.seed,
                                             split=load_split_file(args.math23k_split))
        print(json.dumps(audit_round("math23k-comdiv-kept", train, valid[:300], {"valid": valid, **tests},
                                     {"hidden_size": 128, "embedding_size": 64}, args.epochs, args.seed,
                                     args.per_operator, args.out, tuple(args.only), eval_every=args.epochs,
                                     beam_size=1, reuse=args.reuse, draw_seed=args.draw_seed, exclude=exclude),
                                     ensure_ascii=False), flush=True)
        return 0
    if args.verified:
        from mwp.readers import DataSpec, read_math23k
        from tasks.loop.datasets import load_split_file, split_problems

        args.out.mkdir(parents=True, exist_ok=True)
        if args.math23k_split:
            problems = read_math23k(args.math23k).problems
            train, valid, tests = split_problems(problems, args.seed, split=load_split_file(args.math23k_split))
            only = tuple(args.only)
            name = "math23k-comdiv" + "".join(f"-{op}" for op in only) + "-verified"
            print(json.dumps(verified_round(name, train, {"valid": valid, **tests}, args.seed,
                                            args.per_operator, args.out, only or ("geca_op1", "geca_op2"),
                                            args.draw_seed, exclude),
                             ensure_ascii=False), flush=True)
            if only:
                return 0  # the operators asked for, on Math23K only
        _, mawps = DataSpec("mawps", args.mawps).load()
        train, valid, tests = split_problems(mawps, args.seed)
        print(json.dumps(verified_round("mawps-iid-verified", train, {"valid": valid, **tests}, args.seed,
                                        args.per_operator, args.out, ("geca_op1",), args.draw_seed, exclude)),
              flush=True)
        return 0
    if not args.split:
        parser.error("--split is required to draw samples")
    from mwp.readers import DataSpec
    from tasks.loop.datasets import load_split_file, split_problems

    args.out.mkdir(parents=True, exist_ok=True)
    _, mawps = DataSpec("mawps", args.mawps).load()
    train, valid, tests = split_problems(mawps, args.seed, split=load_split_file(args.split))
    suffix = f"-seed{args.seed}" if args.seed else ""
    print(json.dumps(audit_round("mawps-comdiv" + suffix, train, valid, {"valid": valid, **tests},
                                 {"hidden_size": 128, "embedding_size": 128}, args.epochs, args.seed,
                                 args.per_operator, args.out, tuple(args.only), draw_seed=args.draw_seed,
                                 exclude=exclude)), flush=True)
    _, builtin = DataSpec("builtin", builtin_size=600).load()
    train, valid, tests = split_problems(builtin, args.seed)
    print(json.dumps(audit_round("builtin" + suffix, train, valid, {"valid": valid, **tests},
                                 {"hidden_size": 128, "embedding_size": 64}, 12, args.seed, args.per_operator,
                                 args.out, tuple(args.only), draw_seed=args.draw_seed, exclude=exclude)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
