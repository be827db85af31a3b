"""``compaug run``: the augmentation loop on the built-in corpus or a data file, locally.

Prefect runs in its ephemeral mode (no server needed) unless PREFECT_API_URL points at one.
With no data option the built-in corpus and settings sized to finish in a few minutes on 2 CPU
cores are used (``QUICK``); any option given explicitly overrides them.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

# Settings of the no-argument run: a small corpus and a small GTS, 3 rounds. Paper-scale settings
# (hidden 512, 80 epochs, 7 rounds) are the defaults as soon as a data file is given.
QUICK: dict[str, Any] = {"builtin_size": 600, "rounds": 3, "epochs": 12, "hidden_size": 128, "embedding_size": 64,
                         "eval_every": 3, "max_per_round": 1500}


def register(subparsers) -> None:
    p = subparsers.add_parser("run", help="run the augmentation loop (Algorithm 1 of paper 003)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--format", dest="fmt", choices=["builtin", "mawps", "math23k", "svamp", "asdiv", "csv", "jsonl", "problems"],
                   help="data format (default: the built-in corpus); 'problems' reads compaug's own records, "
                        "e.g. the folder `compaug sd` wrote, with --split FOLDER/split.json")
    p.add_argument("path", nargs="?", help="data file for --format")
    p.add_argument("--split", help="split file written by `compaug split`")
    p.add_argument("--solver", default=None, choices=["gts", "lstm", "transformer", "bert-gts", "gpt2"])
    p.add_argument("--pretrained", help="local folder of pretrained weights (bert-gts, gpt2)")
    p.add_argument("--rounds", type=int, help="T, augmentation rounds (default 7; 3 for the quick built-in run)")
    p.add_argument("--keep", type=float, help="fraction of verified candidates kept per round (default 0.2)")
    p.add_argument("--score", choices=["confidence", "confidence-sum", "agreement", "loss-similarity", "random"])
    p.add_argument("--operators", help="comma-separated operators (default geca_op1,geca_op2; also entity_substitution, problem_reordering, reverse_operation)")
    p.add_argument("--epochs", type=int)
    p.add_argument("--hidden", type=int, help="hidden size (default 512, the paper's GTS)")
    p.add_argument("--embedding", type=int, help="embedding size (default 128)")
    p.add_argument("--batch-size", type=int)
    p.add_argument("--eval-every", type=int, help="validate every N epochs")
    p.add_argument("--patience", type=int, help="early stopping patience in validations (0 = off)")
    p.add_argument("--builtin-size", type=int, help="problems in the built-in corpus")
    p.add_argument("--limit", type=int, help="use only the first N usable problems")
    p.add_argument("--max-per-round", type=int, help="cap on candidates generated per round")
    p.add_argument("--warm-start", action="store_true", help="retrain from the previous round's weights")
    p.add_argument("--seed", type=int)
    p.add_argument("--device", help="auto (default), cpu or cuda")
    p.add_argument("--out", help="output directory (default ./runs)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite in the output directory)")
    p.add_argument("--params", help="JSON file of LoopParams (options given on the command line override it)")
    p.add_argument("--json", action="store_true", help="print the final summary as JSON")
    p.set_defaults(handler=run_command)


def params_from_args(args: argparse.Namespace):
    from flows.params import LoopParams

    base: dict[str, Any] = json.loads(open(args.params).read()) if args.params else {}
    quick = args.fmt in (None, "builtin") and not args.path and not args.params
    data = dict(base.get("data", {}))
    solver = dict(base.get("solver", {}))
    augment = dict(base.get("augment", {}))
    top = {k: v for k, v in base.items() if k not in ("data", "solver", "augment")}
    if quick:
        data.setdefault("builtin_size", QUICK["builtin_size"])
        top.setdefault("rounds", QUICK["rounds"])
        solver.update({k: QUICK[q] for k, q in (("epochs", "epochs"), ("hidden_size", "hidden_size"),
                                                  ("embedding_size", "embedding_size"), ("eval_every", "eval_every"))})
        augment.setdefault("max_per_round", QUICK["max_per_round"])
    if args.fmt:
        data["format"] = args.fmt
    if args.path:
        data["path"] = args.path
        data.setdefault("format", "jsonl")
    for key, value in (("builtin_size", args.builtin_size), ("limit", args.limit)):
        if value is not None:
            data[key] = value
    for key, value in (("name", args.solver), ("pretrained_path", args.pretrained), ("epochs", args.epochs),
                       ("hidden_size", args.hidden), ("embedding_size", args.embedding),
                       ("batch_size", args.batch_size), ("eval_every", args.eval_every),
                       ("patience", args.patience), ("device", args.device)):
        if value is not None:
            solver[key] = value
    if args.operators:
        augment["operators"] = [o.strip() for o in args.operators.split(",") if o.strip()]
    if args.max_per_round is not None:
        augment["max_per_round"] = args.max_per_round
    for key, value in (("split_file", args.split), ("rounds", args.rounds), ("keep_fraction", args.keep),
                       ("score", args.score), ("seed", args.seed), ("out_dir", args.out),
                       ("tracking_uri", args.tracking_uri)):
        if value is not None:
            top[key] = value
    if args.warm_start:
        top["warm_start"] = True
    return LoopParams(data=data, solver=solver, augment=augment, **top)


def format_summary(result: dict[str, Any]) -> str:
    rows = result["rounds"]
    acc_keys = sorted({k for r in rows for k in r if k.endswith("_answer_acc") and not k.startswith("valid")})
    header = ["round", "pool", "cands", "kept", "cut"] + [k.removesuffix("_answer_acc") for k in acc_keys] + ["train s"]
    lines = ["  ".join(f"{h:>8}" for h in header)]
    for r in rows:
        cut = r.get("confidence_cut")
        cells = [r["round"], r["pool_size"], r.get("candidates", "-"), r.get("kept", "-"),
                 f"{cut:.3f}" if isinstance(cut, float) else "-"]
        cells += [f"{r[k]:.3f}" if r.get(k) is not None else "-" for k in acc_keys]
        cells.append(f"{r.get('train_seconds', 0):.0f}")
        lines.append("  ".join(f"{c:>8}" for c in cells))
    tracking = result["tracking_uri"]
    ui_uri = tracking if tracking.startswith("sqlite:") else None
    lines += [
        "",
        f"run directory : {result['run_dir']}",
        f"final solver  : {result['final_checkpoint']}",
        f"MLflow        : experiment {result['experiment']!r}, parent run {result['mlflow_run_id']} at {tracking}",
    ]
    if ui_uri:
        lines.append(f"  open the UI : mlflow server --backend-store-uri {ui_uri} --host 127.0.0.1 --port 5000")
    lines.append(f"Prefect       : flow run {result.get('flow_run_id')} (artifacts 'compaug-...-rounds'; "
                 "`prefect server start` to browse a server's records)")
    return "\n".join(lines)


def run_command(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    try:
        params = params_from_args(args)
    except ValidationError as err:
        print(f"compaug run: invalid parameters:\n{err}", file=sys.stderr)
        return 2
    from flows.environment import apply_defaults

    apply_defaults()
    from flows.augment_loop import augment_loop

    print(f"compaug run: {params.data.format} data, solver {params.solver.name}, {params.rounds} rounds, "
          f"keep {params.keep_fraction:.0%}; run directory {params.run_dir()}", flush=True)
    result = augment_loop(params)
    print(json.dumps(result, indent=2, default=str) if args.json else format_summary(result))
    return 0
