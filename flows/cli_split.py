"""``compaug split`` (DBCA ComDiv or I.I.D. split file) and ``compaug sd`` (synthetic SD set)."""
from __future__ import annotations

import argparse

from mwp.readers import FORMATS
from tasks.dbca.atoms import K_RULES
from tasks.dbca.splitter import SPLIT_METHODS


def _k(text: str):
    if text == "auto":
        return text
    try:
        k = int(text)
    except ValueError:
        k = 0
    if k < 1:
        raise argparse.ArgumentTypeError(f"--k must be auto or a positive integer, got {text!r}")
    return k


def register(subparsers) -> None:
    split = subparsers.add_parser("split", help="write a compositional (comdiv) or random (iid) split file")
    split.add_argument("--format", required=True, choices=FORMATS, help="dataset format")
    split.add_argument("path", nargs="?", help="dataset file (none for builtin)")
    split.add_argument("--method", choices=SPLIT_METHODS, default="comdiv",
                       help="comdiv: maximum compound divergence (DBCA); iid: random, for comparison")
    split.add_argument("--out", required=True, help="split file (JSON)")
    split.add_argument("--target-divergence", type=float, nargs="+", default=[],
                       help="compound divergence(s) to stop at; one extra file <out>-cX.XX.json per value")
    split.add_argument("--k", type=_k, default="auto", help="quantity clusters: auto (best of 5, 10, 20) or a number")
    split.add_argument("--k-rule", choices=K_RULES, default="gain",
                       help="auto k: highest DBCA^c gain over the I.I.D. split at that k (default), or highest DBCA^c")
    split.add_argument("--min-compound-examples", type=int, default=2,
                       help="leave out compounds held by fewer pool examples (1 = keep all)")
    split.add_argument("--no-group-moves", dest="group_moves", action="store_false",
                       help="single-example swaps only (no moves of all train holders of a compound)")
    split.add_argument("--seed", type=int, default=0)
    split.add_argument("--test-fraction", type=float, default=0.2)
    split.add_argument("--max-atom-divergence", type=float, default=0.02)
    split.add_argument("--atom-alpha", type=float, default=0.5)
    split.add_argument("--compound-alpha", type=float, default=0.1)
    split.add_argument("--max-iterations", type=int, default=100_000)
    split.add_argument("--candidates", type=int, default=0, help="candidates per side and swap (0 = all)")
    split.set_defaults(handler=run_split)

    sd = subparsers.add_parser("sd", help="build the synthetic SD data set from the rule table")
    sd.add_argument("--format", required=True, choices=FORMATS, help="dataset format")
    sd.add_argument("path", nargs="?")
    sd.add_argument("--out", required=True, help="output directory")
    sd.add_argument("--k", type=int, default=10, help="quantity clusters used to measure the divergences")
    sd.set_defaults(handler=run_sd)


def run_split(args) -> int:
    from flows.split import SplitParams, split_flow

    params = SplitParams(format=args.format, path=args.path, method=args.method, out=args.out, k=args.k,
                         seed=args.seed, test_fraction=args.test_fraction, max_atom_divergence=args.max_atom_divergence,
                         atom_alpha=args.atom_alpha, compound_alpha=args.compound_alpha,
                         target_divergences=args.target_divergence, max_iterations=args.max_iterations,
                         candidates=args.candidates, k_rule=args.k_rule,
                         min_compound_examples=args.min_compound_examples, group_moves=args.group_moves)
    from flows.preflight import check_output_file, check_split_size, usable_problems

    check_output_file(params.out)
    problems = usable_problems(params.format, params.path) if params.format != "builtin" else None
    if problems is not None:
        check_split_size(len(problems), params.test_fraction, params.path)
    result = split_flow(params)
    stats = result["stats"]
    print(f"{args.method} split (k={result['k']}): train {len(result['train'])}, test {len(result['test'])}, "
          f"DBCA^a {stats['atom_divergence']:.4f}, DBCA^c {stats['compound_divergence']:.4f}, "
          f"LR {stats['length_ratio']}; wrote {', '.join(result['files'])}")
    return 0


def run_sd(args) -> int:
    from flows.split import SDParams, sd_flow

    from flows.preflight import check_output_folder, check_sd_seeds, usable_problems

    params = SDParams(format=args.format, path=args.path, out=args.out, k=args.k)
    check_output_folder(params.out)
    if params.format != "builtin":
        check_sd_seeds(usable_problems(params.format, params.path), params.path)
    result = sd_flow(params)
    labels = list(result["labels"].values())
    print(f"SD: train {len(result['train'])}, test {len(result['test'])} "
          f"(structural {labels.count('structural')}, lexical {labels.count('lexical')}); stats {result['stats']}")
    return 0
