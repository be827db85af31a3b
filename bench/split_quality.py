"""Quality of the DBCA splits on the shared data (paper 003 Table 3), checked against the targets:
MAWPS ComDiv DBCA^c >= 0.70 with DBCA^a <= 0.02, MAWPS I.I.D. DBCA^c <= 0.15, Math23K ComDiv
DBCA^c >= 0.65 with DBCA^a <= 0.02. Also the SD rows built from MAWPS and Math23K.

    .venv/bin/python bench/split_quality.py [--data ../shared/data] [--candidates 500] [--k-rule gain]

DBCA^c is over the compounds held by at least ``--min-compound-examples`` pool examples (the
splitter's objective); the ``all compounds`` line gives the same splits measured over every compound.
"""
from __future__ import annotations

import argparse
import time
from functools import partial
from pathlib import Path

from mwp.readers import load_dataset
from tasks.dbca.atoms import (DEFAULT_KS, DEFAULT_MAX_DEPTH, atoms_of, choose_k, cluster_quantities, compounds_of,
                              format_table, split_statistics)
from tasks.dbca.splitter import SplitConfig, iid_split, measure_divergences
from tasks.dbca.synthetic import build_sd


def dataset_rows(name: str, problems, config: SplitConfig, ks, rule: str, max_depth) -> dict:
    start = time.perf_counter()
    choice = choose_k(problems, config, ks, max_depth=max_depth, rule=rule)
    atoms = partial(atoms_of, clusters=choice.clusters)
    compounds = partial(compounds_of, clusters=choice.clusters, max_depth=max_depth)
    iid = iid_split(problems, atoms, compounds, config)
    result = choice.result
    print(f"{name}: k -> ComDiv / I.I.D. / gain: "
          + ", ".join(f"{k}: {choice.tried[k]:.3f} / {choice.iid[k]:.3f} / {choice.tried[k] - choice.iid[k]:.3f}"
                      for k in choice.tried)
          + f"; rule {rule} -> k={choice.k} ({time.perf_counter() - start:.1f} s)")
    print(f"  ComDiv k={choice.k}: {result.swaps} swaps ({result.group_moves} group moves, {result.repairs} repairs), "
          f"stop {result.stop_reason}")
    for label, split in (("I.I.D.", iid), ("ComDiv", result)):
        a, c = measure_divergences(problems, split.train, split.test, atoms, compounds)
        print(f"  {label} over all compounds (min examples 1): DBCA^a {a:.3f}, DBCA^c {c:.3f}")
    return {
        f"{name} I.I.D. (k={choice.k})": split_statistics(problems, iid.train, iid.test, iid.atom_divergence,
                                                          iid.compound_divergence),
        f"{name} ComDiv (k={choice.k})": split_statistics(problems, result.train, result.test,
                                                          result.atom_divergence, result.compound_divergence),
    }


def sd_row(name: str, problems, config: SplitConfig, k: int = 10) -> dict:
    sd = build_sd(problems)
    both = sd.train + sd.test
    train, test = list(range(len(sd.train))), list(range(len(sd.train), len(both)))
    clusters = cluster_quantities(both, k)
    a, c = measure_divergences(both, train, test, partial(atoms_of, clusters=clusters),
                               partial(compounds_of, clusters=clusters), min_compound_examples=config.min_compound_examples)
    labels = list(sd.labels.values())
    print(f"SD {name}: structural {labels.count('structural')}, lexical {labels.count('lexical')}, rules {dict(sd.rules)}")
    return {f"SD {name} (k={k})": split_statistics(both, train, test, a, c)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--candidates", type=int, default=500)
    parser.add_argument("--k-rule", choices=("gain", "highest"), default="gain")
    parser.add_argument("--ks", type=int, nargs="+", default=list(DEFAULT_KS))
    parser.add_argument("--max-depth", type=int, default=DEFAULT_MAX_DEPTH, help="compound depth (0 = all)")
    parser.add_argument("--min-compound-examples", type=int, default=2)
    parser.add_argument("--no-group-moves", dest="group_moves", action="store_false")
    parser.add_argument("--no-sd", dest="sd", action="store_false")
    args = parser.parse_args()
    data = Path(args.data)
    max_depth = args.max_depth or None
    config = SplitConfig(candidates=args.candidates, progress=False, min_compound_examples=args.min_compound_examples,
                         group_moves=args.group_moves)
    mawps = load_dataset("mawps", data / "mawps" / "MAWPS.json").problems
    math23k = load_dataset("math23k", data / "math23k" / "math23k.json").problems
    rows = {**dataset_rows("MAWPS", mawps, config, args.ks, args.k_rule, max_depth),
            **dataset_rows("Math23K", math23k, config, args.ks, args.k_rule, max_depth)}
    if args.sd:
        rows.update(sd_row("MAWPS", mawps, config))
        rows.update(sd_row("Math23K", math23k, config))
    print(format_table(rows))
    row = {name.split(" (")[0]: value for name, value in rows.items()}
    checks = [
        ("MAWPS ComDiv DBCA^c >= 0.70", row["MAWPS ComDiv"]["compound_divergence"] >= 0.70),
        ("MAWPS ComDiv DBCA^a <= 0.02", row["MAWPS ComDiv"]["atom_divergence"] <= 0.02),
        ("MAWPS I.I.D. DBCA^c <= 0.15", row["MAWPS I.I.D."]["compound_divergence"] <= 0.15),
        ("Math23K ComDiv DBCA^c >= 0.65", row["Math23K ComDiv"]["compound_divergence"] >= 0.65),
        ("Math23K ComDiv DBCA^a <= 0.02", row["Math23K ComDiv"]["atom_divergence"] <= 0.02),
    ]
    for label, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {label}")


if __name__ == "__main__":
    main()
