"""Label audit of what a loop or study *kept*: draws a seeded sample of one operator's kept problems from
finished run directories, across their rounds, in the to-judge format of bench/label_audit.py.

Every augmenting round of a run writes ``round_NN/kept.jsonl``: every problem its retention policy kept
(not a sample), each with its provenance (operator, parent ids, detail) and the score that ranked it. The
parents are problems of the pool the round drew from, ``round_{NN-1}/pool.jsonl`` (the original training
side and every earlier round's kept problems), where their texts are read. Only complete rounds count
(``metrics.json`` written, as the loop and study readers count them); a round whose ``kept.jsonl`` is
there without its marker (a run still going) is reported and left out. The files are only read.

``--from-run-dir`` takes run directories, or folders above them (a study's folder, a cell's): every run
directory below (a folder holding ``round_00``) is read. A problem kept in several runs or rounds is one
item, and so is one text with one expression made from other parents (drawn once, the other places
counted). The sample is drawn as label_audit draws it
(``label_audit.draw``: seeded, sorted by id, leaving out every problem of the judged files ``--exclude``
names), and written to ``<out>/<name>.sample.jsonl``; ``<out>/<name>.round.json`` holds what was found
per run and round (kept, kept of the operator, the round's own ``kept_by_operator`` beside it). A judge
copies the sample to ``<name>.judged.jsonl`` and fills ``verdict``/``reason``; ``bench/label_audit.py
--score <out>`` scores it (a name ending in ``-kept`` pools with the other kept audits).

  python bench/kept_audit.py --from-run-dir ../compaug-runs/studies/STUDY/cells/*least-confident* \\
      --operator geca_op1 --sample 100 --draw-seed 0 --out docs/audits/STUDY --name math23k-comdiv-op1-kept
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.audit_files import write_sample  # noqa: E402
from bench.label_audit import draw, judged_problems  # noqa: E402


@dataclass(frozen=True)
class KeptItem:
    """One kept problem where it was first found (``run``, ``round``), its score and its parents' texts."""

    id: str
    text: str
    problem: object  # mwp.problem.Problem
    score: float
    run: str
    round: int
    parents: tuple[dict, ...]


def run_directories(paths: list[Path]) -> list[Path]:
    """The run directories at or below ``paths`` (a folder holding ``round_00``), sorted, each once; a path
    with none below it raises ``ValueError`` naming it."""
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise ValueError(f"{path}: not a folder")
        here = [path] if (path / "round_00").is_dir() else sorted(p.parent for p in path.rglob("round_00") if p.is_dir())
        if not here:
            raise ValueError(f"{path}: no run directory (a folder holding round_00) at or below it")
        found.extend(p for p in here if p not in found)
    return sorted(found)


def kept_of_run(run_dir: Path, label: str) -> tuple[list[KeptItem], list[dict]]:
    """Every kept problem of the run's complete augmenting rounds with its parents' texts, and one line per
    round found: kept in all, per operator, the round record's own count, parents not found in the pool."""
    from mwp.problem import read_problems_jsonl
    from tasks.loop import rundir

    complete = rundir.completed_rounds(run_dir)
    items, rounds = [], []
    for rd in sorted(run_dir.glob("round_[0-9][0-9]")):
        r = int(rd.name.removeprefix("round_"))
        kept_path = rd / "kept.jsonl"
        if r == 0 or not kept_path.exists():
            continue
        if r not in complete:
            rounds.append({"run": label, "round": r, "complete": False})
            continue
        pool_path = rundir.round_dir(run_dir, r - 1) / "pool.jsonl"
        # the pool file as the round read it; else the same pool made again (training side + earlier kept)
        pool = {p.id: p for p in (read_problems_jsonl(pool_path) if pool_path.exists() else
                                  rundir.current_pool(run_dir / "data" / "train.jsonl", run_dir, r - 1))}
        record = rundir.read_record(run_dir, r)
        kept = rundir.read_scored(kept_path)
        missing = 0
        for problem, score in kept:
            parents = []
            for pid in problem.provenance.parents:
                parent = pool.get(pid)
                missing += parent is None
                parents.append({"id": pid, "text": parent.text if parent else None})
            items.append(KeptItem(problem.id, problem.text, problem, score, label, r, tuple(parents)))
        rounds.append({"run": label, "round": r, "complete": True, "kept": len(kept),
                       "kept_by_operator": dict(sorted(Counter(p.provenance.operator for p, _ in kept).items())),
                       "record_kept_by_operator": dict(sorted(record.generation.kept_by_operator.items()))
                       if record.generation else {},
                       "parents_not_in_pool": missing})
    return items, rounds


def collect(paths: list[Path]) -> tuple[list[KeptItem], list[dict], Counter, list[str]]:
    """Kept problems of every run directory at or below ``paths``, each problem once (by id, and by text and
    expression: the first place found, runs and rounds in order), the per-round lines, and how many more
    times each was kept elsewhere (in another run, or made again from other parents), and the runs read."""
    runs = run_directories(paths)
    common = Path(os.path.commonpath([p.resolve() for p in runs])) if len(runs) > 1 else runs[0].resolve().parent
    items, rounds, seen, again, labels = [], [], {}, Counter(), []
    for run_dir in runs:
        label = str(run_dir.resolve().relative_to(common))  # e.g. <cell>/<run directory>
        labels.append(label)
        found, lines = kept_of_run(run_dir, label)
        rounds.extend(lines)
        for item in found:
            same = (item.text, tuple(item.problem.prefix()))  # one problem made from other parents: one item
            first = seen.get(item.id) or seen.get(same)
            if first is not None:
                again[first.id] += 1
                continue
            seen[item.id] = seen[same] = item
            items.append(item)
    return items, rounds, again, labels


def sample_rows(items: list[KeptItem], again: Counter, operator: str, sample: int, draw_seed: int, name: str,
                exclude: frozenset = frozenset()) -> list[dict]:
    """``sample`` kept problems of ``operator`` drawn with ``draw_seed`` (``label_audit.draw``) as to-judge
    rows: the fields of label_audit's samples, plus where each was kept (run, round, kept again elsewhere)."""
    from mwp.expr import Num, format_number, substitute, to_infix

    rows = []
    for item in draw(items, lambda i: i.problem.provenance.operator, sample, draw_seed, (operator,), exclude):
        p = item.problem
        equation = to_infix(substitute(p.expression, {i: Num(v) for i, v in enumerate(p.values)}))
        rows.append({"dataset": name, "operator": operator, "id": item.id, "text": item.text, "equation": equation,
                     "answer": format_number(p.answer), "confidence": round(item.score, 4),
                     "parents": list(item.parents), "detail": p.provenance.detail, "run": item.run,
                     "round": item.round, "kept_again": again[item.id], "verdict": "", "reason": ""})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from-run-dir", type=Path, nargs="+", required=True, metavar="DIR",
                        help="run directories, or folders above them (a study, a cell)")
    parser.add_argument("--operator", required=True, help="the operator whose kept problems are drawn")
    parser.add_argument("--sample", type=int, default=100, help="kept problems to draw (all if fewer)")
    parser.add_argument("--draw-seed", type=int, default=0)
    parser.add_argument("--exclude", type=Path, nargs="+", default=(), metavar="JUDGED",
                        help="judged files whose problems (by id or text) are not drawn")
    parser.add_argument("--out", type=Path, required=True, help="folder for <name>.sample.jsonl and .round.json")
    parser.add_argument("--name", help="the sample's dataset name (default: <experiment of the first run>-kept)")
    args = parser.parse_args(argv)
    if args.sample < 1:
        parser.error("--sample must be at least 1")
    try:
        items, rounds, again, runs = collect(list(args.from_run_dir))
    except ValueError as err:
        print(f"kept_audit: {err}", file=sys.stderr)
        return 2
    name = args.name or _default_name(run_directories(list(args.from_run_dir))[0])
    exclude = judged_problems(list(args.exclude))
    rows = sample_rows(items, again, args.operator, args.sample, args.draw_seed, name, exclude)
    args.out.mkdir(parents=True, exist_ok=True)
    write_sample(args.out / f"{name}.sample.jsonl", rows)
    of_operator = [i for i in items if i.problem.provenance.operator == args.operator]
    summary = {"dataset": name, "operator": args.operator, "draw_seed": args.draw_seed,
               "runs": runs, "rounds": rounds,
               "kept_distinct": len(items), "kept_distinct_of_operator": len(of_operator),
               "kept_again_elsewhere": sum(again.values()),
               "already_judged": sum(i.id in exclude or i.text in exclude for i in of_operator),
               "sampled": len(rows)}
    (args.out / f"{name}.round.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
    print(json.dumps(summary, ensure_ascii=False))
    return 0


def _default_name(run_dir: Path) -> str:
    params = run_dir / "params.json"
    experiment = json.loads(params.read_text(encoding="utf-8")).get("experiment") if params.exists() else None
    return f"{(experiment or run_dir.name).removeprefix('compaug-study-')}-kept"


if __name__ == "__main__":
    sys.exit(main())
