"""Quality of the DBCA splits on the shared data (paper 003 Table 3), checked against the targets:
MAWPS ComDiv DBCA^c >= 0.70 with DBCA^a <= 0.02, MAWPS I.I.D. DBCA^c <= 0.15, Math23K ComDiv
DBCA^c >= 0.65. Also the SD rows built from MAWPS and Math23K.

    .venv/bin/python bench/split_quality.py [--data ../shared/data] [--candidates 500]
"""
from __future__ import annotations

import argparse
import time
from functools import partial
from pathlib import Path

from mwp.readers import load_dataset
from tasks.dbca import SplitConfig, iid_split, measure_divergences
from tasks.mwp_atoms import (DEFAULT_KS, atoms_of, choose_k, cluster_quantities, compounds_of, format_table,
                             split_statistics)
from tasks.synthetic import build_sd


def dataset_rows(name: str, problems, config: SplitConfig) -> dict:
    start = time.perf_counter()
    choice = choose_k(problems, config, DEFAULT_KS)
    atoms, compounds = partial(atoms_of, clusters=choice.clusters), partial(compounds_of, clusters=choice.clusters)
    iid = iid_split(problems, atoms, compounds, config)
    print(f"{name}: k tried {', '.join(f'{k}: {v:.3f}' for k, v in choice.tried.items())} -> k={choice.k} "
          f"({time.perf_counter() - start:.1f} s)")
    return {
        f"{name} I.I.D.": split_statistics(problems, iid.train, iid.test, iid.atom_divergence, iid.compound_divergence),
        f"{name} ComDiv": split_statistics(problems, choice.result.train, choice.result.test,
                                           choice.result.atom_divergence, choice.result.compound_divergence),
    }


def sd_row(name: str, problems, k: int = 10) -> dict:
    sd = build_sd(problems)
    both = sd.train + sd.test
    train, test = list(range(len(sd.train))), list(range(len(sd.train), len(both)))
    clusters = cluster_quantities(both, k)
    a, c = measure_divergences(both, train, test, partial(atoms_of, clusters=clusters), partial(compounds_of, clusters=clusters))
    labels = list(sd.labels.values())
    print(f"SD {name}: structural {labels.count('structural')}, lexical {labels.count('lexical')}, rules {dict(sd.rules)}")
    return {f"SD {name}": split_statistics(both, train, test, a, c)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--candidates", type=int, default=500)
    args = parser.parse_args()
    data = Path(args.data)
    config = SplitConfig(candidates=args.candidates, progress=False)
    mawps = load_dataset("mawps", data / "mawps" / "MAWPS.json").problems
    math23k = load_dataset("math23k", data / "math23k" / "math23k.json").problems
    rows = {**dataset_rows("MAWPS", mawps, config), **dataset_rows("Math23K", math23k, config)}
    rows.update(sd_row("MAWPS", mawps))
    rows.update(sd_row("Math23K", math23k))
    print(format_table(rows))
    checks = [
        ("MAWPS ComDiv DBCA^c >= 0.70", rows["MAWPS ComDiv"]["compound_divergence"] >= 0.70),
        ("MAWPS ComDiv DBCA^a <= 0.02", rows["MAWPS ComDiv"]["atom_divergence"] <= 0.02),
        ("MAWPS I.I.D. DBCA^c <= 0.15", rows["MAWPS I.I.D."]["compound_divergence"] <= 0.15),
        ("Math23K ComDiv DBCA^c >= 0.65", rows["Math23K ComDiv"]["compound_divergence"] >= 0.65),
    ]
    for label, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {label}")


if __name__ == "__main__":
    main()
