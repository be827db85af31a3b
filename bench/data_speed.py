"""Throughput of the data layer, single process: parse + evaluate + number mapping on all of
Math23K and MAWPS, and the built-in generator.

Stages, each timed on the whole dataset (best of ``--repeat``; wall and CPU seconds, CPU being the
fairer figure on a shared machine):
  baseline   json.load + tokenize + sentence split + find quantities (what any reader must do)
  parse      equation_to_expression + evaluate alone (sympy solves the equations with x inside)
  full       build_problem: everything above + number mapping + answer check (what readers run)
Target: the whole of Math23K through ``full`` in under 10 s on one core.

    .venv/bin/python bench/data_speed.py [--mawps PATH] [--math23k PATH] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mwp.builtin import generate_corpus  # noqa: E402
from mwp.expr import ExpressionError, evaluate  # noqa: E402
from mwp.parse import equation_to_expression
from mwp.problem import ProblemError, build_problem, find_quantities, parse_answer  # noqa: E402
from mwp.text import split_sentences, tokenize  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def timed(fn: Callable[[], int], repeat: int) -> tuple[float, float, int]:
    """Best wall and CPU seconds over ``repeat`` runs, and what ``fn`` counted."""
    best_wall = best_cpu = float("inf")
    count = 0
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        count = fn()
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best_wall, best_cpu, count


def bench_dataset(name: str, path: Path, language: str, repeat: int) -> None:
    if not path.is_file():
        print(f"{name}: {path} not found, skipped")
        return
    records = json.loads(path.read_text(encoding="utf-8"))
    n = len(records)

    def baseline() -> int:
        data = json.loads(path.read_text(encoding="utf-8"))
        return sum(len(find_quantities(split_sentences(tokenize(r["original_text"], language)), language))
                   for r in data)

    def parse() -> int:
        ok = 0
        for r in records:
            try:
                evaluate(equation_to_expression(r["equation"], parse_answer(r["ans"])))
                ok += 1
            except (ExpressionError, ProblemError):
                pass
        return ok

    def full() -> int:
        ok = 0
        for r in records:
            try:
                build_problem(str(r["id"]), r["original_text"], r["equation"], r["ans"], name, language)
                ok += 1
            except ProblemError:
                pass
        return ok

    print(f"{name}: {n} records from {path}")
    for stage, fn in (("baseline", baseline), ("parse", parse), ("full", full)):
        wall, cpu, count = timed(fn, repeat)
        unit = "quantities found" if stage == "baseline" else "usable"
        print(f"  {stage:<9} {wall:7.2f} s wall {cpu:7.2f} s cpu  {n / cpu:9,.0f} problems/s (cpu)  {count} {unit}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mawps", type=Path, default=SHARED / "mawps" / "MAWPS.json")
    parser.add_argument("--math23k", type=Path, default=SHARED / "math23k" / "math23k.json")
    parser.add_argument("--repeat", type=int, default=3, help="runs per stage; the best is reported")
    parser.add_argument("--builtin-size", type=int, default=3000)
    args = parser.parse_args(argv)
    # Warm-up outside the timings: the first equation solved for x imports sympy (about 0.3 s).
    equation_to_expression("(7*x)+4=(3*x)-20")
    bench_dataset("math23k", args.math23k, "zh", args.repeat)
    bench_dataset("mawps", args.mawps, "en", args.repeat)
    wall, cpu, count = timed(lambda: len(generate_corpus(n=args.builtin_size, seed=0)), args.repeat)
    print(f"builtin: generate_corpus(n={args.builtin_size}) {wall:.2f} s wall {cpu:.2f} s cpu  "
          f"{count / cpu:,.0f} problems/s (cpu)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
