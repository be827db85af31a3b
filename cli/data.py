"""``compaug data describe``: read a dataset (or generate the built-in corpus) and report what is
usable, what was skipped and why, the languages, expression depths and templates.

``--json`` prints one JSON object (at least ``usable`` and ``skipped``) that scripts rely on.
Only the data layer is imported: no torch, Prefect or MLflow.
"""
from __future__ import annotations

import argparse
import json

from mwp.readers import FORMATS, DataSpec


def register(subparsers) -> None:
    data = subparsers.add_parser("data", help="inspect datasets", description="Inspect datasets before a run.")
    commands = data.add_subparsers(dest="data_command", required=True)
    p = commands.add_parser("describe", help="usable count, skip reasons, depths and templates of a dataset",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--format", dest="fmt", choices=FORMATS, default="builtin",
                   help="data format (default %(default)s: the built-in corpus)")
    p.add_argument("path", nargs="?", help="data file (not for builtin)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--size", type=int, default=DataSpec.builtin_size,
                   help="problems in the built-in corpus (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the built-in corpus (default %(default)s)")
    p.add_argument("--examples", type=int, default=5,
                   help="skipped records shown per reason in text mode (default %(default)s)")
    p.set_defaults(handler=describe)


def describe(args: argparse.Namespace) -> int:
    """Errors are raised for cli/main.py to print in one line (exit status 2); a file that holds no
    usable problem is described, then reported as an error."""
    from mwp.readers import load_dataset, require_problems, summary

    if args.fmt != "builtin" and not args.path:
        raise ValueError(f"--format {args.fmt} needs a PATH")
    if args.fmt == "builtin" and args.path:
        raise ValueError(f"the builtin corpus takes no PATH (give --format for the data file {args.path})")
    if args.fmt == "builtin":
        if args.size < 1:
            raise ValueError(f"--size must be at least 1, got {args.size}")
        result = load_dataset("builtin", n=args.size, seed=args.seed)
    else:
        result = load_dataset(args.fmt, args.path)
    info = summary(result, examples=len(result.skipped_examples))
    info["path"] = args.path
    print(json.dumps(info, ensure_ascii=False) if args.json else _as_text(info, args.examples), flush=True)
    require_problems(result, args.path or "the builtin corpus")
    return 0


def _as_text(info: dict, examples_per_reason: int) -> str:
    where = info["path"] or "(generated)"
    lines = [f"{info['format']} {where}",
             f"usable: {info['usable']} of {info['total']} records",
             f"languages: {', '.join(f'{k} {v}' for k, v in info['languages'].items()) or '-'}"]
    if info["splits"]:
        lines.append("splits: " + ", ".join(f"{k} {v}" for k, v in info["splits"].items()))
    lines.append("expression depth: " + ", ".join(f"{d}: {n}" for d, n in info["depth_histogram"].items()))
    lines.append(f"distinct templates: {info['templates']}")
    skipped = sum(info["skipped"].values())
    lines.append(f"skipped: {skipped}")
    for reason, count in info["skipped"].items():
        lines.append(f"  {reason}: {count}")
        shown = [e for e in info["skipped_examples"] if e["reason"] == reason][:examples_per_reason]
        lines.extend(f"    {e['record_id']}: {e['message']}" for e in shown)
    return "\n".join(lines)
