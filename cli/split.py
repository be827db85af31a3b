"""``compaug split`` (DBCA ComDiv or I.I.D. split file) and ``compaug sd`` (synthetic SD set)."""
from __future__ import annotations

import argparse

from cli.fields import add_field, given
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
    # Help texts and shown defaults are the settings models' own (flows/split.py); choices are the registries'.
    from flows.params import SDParams, SplitParams

    split = subparsers.add_parser(
        "split", help="write a compositional (comdiv) or random (iid) split file",
        description="Write a split file: comdiv moves problems between train and test until the compound "
                    "divergence (DBCA^c) is as high as the atom divergence bound allows; iid is the random split "
                    "at the same sizes. The split records its quantity labeler, so `compaug run --split` "
                    "measures with the same labels; an MLflow run is logged beside the file.")
    add_field(split, SplitParams, "format", choices=FORMATS)
    split.add_argument("path", nargs="?", help="dataset file (not for builtin)")
    add_field(split, SplitParams, "method", choices=SPLIT_METHODS)
    add_field(split, SplitParams, "out", metavar="FILE")
    add_field(split, SplitParams, "target_divergences", "--target-divergence", metavar="DIVERGENCE")
    add_field(split, SplitParams, "k", type=_k)
    add_field(split, SplitParams, "ks", metavar="K")
    add_field(split, SplitParams, "k_rule", choices=K_RULES)
    for name in ("min_compound_examples", "group_moves", "window", "max_compound_depth", "seed", "test_fraction",
                 "max_atom_divergence", "atom_alpha", "compound_alpha", "max_iterations", "candidates", "tries",
                 "progress"):
        add_field(split, SplitParams, name)
    split.set_defaults(handler=run_split)

    sd = subparsers.add_parser(
        "sd", help="build the synthetic SD data set from the rule table",
        description="Build the synthetic SD set from a dataset: train.jsonl, test.jsonl and split.json (with the "
                    "structural or lexical label of each test problem) in --out, for `compaug run --format "
                    "problems OUT --split OUT/split.json`.")
    add_field(sd, SDParams, "format", choices=FORMATS)
    sd.add_argument("path", nargs="?", help="dataset file (not for builtin)")
    add_field(sd, SDParams, "out", metavar="DIRECTORY")
    add_field(sd, SDParams, "k")
    add_field(sd, SDParams, "seed")
    sd.set_defaults(handler=run_sd)


def run_split(args) -> int:
    from flows.split import SplitParams, split_flow

    params = SplitParams.model_validate(given(args, SplitParams))
    from cli.preflight import check_output_file, check_split_size, usable_problems

    check_output_file(params.out)
    problems = usable_problems(params.format, params.path) if params.format != "builtin" else None
    if problems is not None:
        check_split_size(len(problems), params.test_fraction, params.path)
    result = split_flow(params)
    stats = result["stats"]
    print(f"{params.method} split (k={result['k']}): train {len(result['train'])}, test {len(result['test'])}, "
          f"DBCA^a {stats['atom_divergence']:.4f}, DBCA^c {stats['compound_divergence']:.4f}, "
          f"LR {stats['length_ratio']}; wrote {', '.join(result['files'])}")
    return 0


def run_sd(args) -> int:
    from flows.split import SDParams, sd_flow

    from cli.preflight import check_output_folder, check_sd_seeds, usable_problems

    params = SDParams.model_validate(given(args, SDParams))
    check_output_folder(params.out)
    if params.format != "builtin":
        check_sd_seeds(usable_problems(params.format, params.path), params.path)
    result = sd_flow(params)
    labels = list(result["labels"].values())
    print(f"SD: train {len(result['train'])}, test {len(result['test'])} "
          f"(structural {labels.count('structural')}, lexical {labels.count('lexical')}); stats {result['stats']}")
    return 0
