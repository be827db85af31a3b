"""``compaug run``: the augmentation loop on the built-in corpus or a data file, locally.

Prefect records the run on a temporary local server that the command starts and stops (no server needed)
unless PREFECT_API_URL points at one. Ctrl-C or SIGTERM stops the run within seconds (exit status 130 or
143); the same command resumes it after its last completed round.
With no data option the built-in corpus and settings sized to finish in a few minutes on 2 CPU
cores are used (``flows.params.QUICK_RUN``); any option given explicitly overrides them.
Every loop parameter has an option: the training and augmentation options are made from the
settings models' own fields, and ``--model KEY=VALUE`` sets any field of the solver's config.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cli.fields import add_section, given_sections

TOP = "top"  # the section of LoopParams' own fields


def _key_value(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key.strip(), json.loads(value)  # numbers, true/false, null
    except json.JSONDecodeError:
        return key.strip(), value  # a plain string (a path)


def register(subparsers) -> None:
    from flows.params import QUICK_RUN, WHERE_SCORED, AugmentSettings, DataSource, LoopParams, LoopSettings, SolverSettings, \
        TrainSettings
    from tasks.augment.registry import OPERATORS

    p = subparsers.add_parser("run", help="run the augmentation loop (Algorithm 1 of paper 003)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    data = p.add_argument_group("data")
    add_section(data, DataSource, "data", only=("format", "builtin_size", "limit"), format={
        "help": "data format (default: the built-in corpus); 'problems' reads compaug's own records, e.g. the "
                "folder `compaug sd` wrote, with --split FOLDER/split.json"},
        builtin_size={"help": "problems in the built-in corpus (default 3000; 600 for the quick run)"})
    data.add_argument("path", nargs="?", help="data file for --format")
    add_section(data, LoopParams, TOP, only=("split_file", "test_fraction", "valid_fraction", "iid_holdout_fraction"),
                flags={"split_file": ("--split",)},
                split_file={"help": "split file written by `compaug split` or `compaug sd`"})

    solver = p.add_argument_group("solver")
    add_section(solver, SolverSettings, "solver", skip=("model",), flags={"name": ("--solver",)})
    solver.add_argument("--model", dest="model_options", type=_key_value, action="append", default=[],
                        metavar="KEY=VALUE", help="a field of the solver's config, e.g. --model dropout=0.3 "
                        "--model n_layers=1 --model min_count=1 (repeatable; unknown fields are refused)")
    solver.add_argument("--hidden", type=int, help="the solver's hidden_size (512 for GTS; 128 for the quick run)")
    solver.add_argument("--embedding", type=int, help="the solver's embedding_size (128; 64 for the quick run)")
    solver.add_argument("--pretrained", help="the solver's pretrained_path: a local folder of weights (bert-gts, gpt2)")

    add_section(p.add_argument_group("training (each round)"), TrainSettings, "train")
    augment = p.add_argument_group("augmentation")
    augment.add_argument("--operators", help=f"comma-separated operators (default geca_op1,geca_op2); known: "
                                             f"{', '.join(OPERATORS)}")
    add_section(augment, AugmentSettings, "augment", skip=("operators",),
                flags={"per_round_cap": ("--per-round-cap", "--max-per-round")})

    loop = p.add_argument_group("loop")
    add_section(loop, LoopSettings, "loop", flags={"keep_fraction": ("--keep", "--keep-fraction")},
                rounds={"help": f"{LoopSettings.model_fields['rounds'].description} (default "
                                f"{LoopSettings.model_fields['rounds'].default}; {QUICK_RUN['loop']['rounds']} for the "
                                "quick run)"})
    loop.add_argument("--keep-per-operator", dest="loop__retention", action="store_const", const="per-operator",
                      help="keep the top --keep of each operator's candidates (--retention per-operator)")
    add_section(loop, LoopParams, TOP, only=("seed", "out_dir", "experiment", "tracking_uri"),
                flags={"out_dir": ("--out",)})
    add_section(p.add_argument_group("scoring on Dask workers (the same scores)"), LoopParams, TOP, only=WHERE_SCORED)
    p.add_argument("--params", help="JSON file of LoopParams (options given on the command line override it)")
    p.add_argument("--json", action="store_true", help="print the final summary as JSON")
    p.set_defaults(handler=run_command)


def _merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in overlay.items():
        out[key] = _merge(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


def params_from_args(args: argparse.Namespace):
    from flows.params import QUICK_RUN, LoopParams, lift_legacy_loop_keys

    from cli.preflight import read_params_file

    base: dict[str, Any] = lift_legacy_loop_keys(read_params_file(args.params)) if args.params else {}
    quick = args.data__format in (None, "builtin") and not args.path and not args.params
    values = _merge(QUICK_RUN, base) if quick else base
    sections = given_sections(args)
    given: dict[str, Any] = {**sections.pop(TOP, {}), **sections}
    given.setdefault("data", {})
    given.setdefault("solver", {}).setdefault("model", {})
    if args.path:
        given["data"]["path"] = args.path
        if not args.data__format and "format" not in values.get("data", {}):
            given["data"]["format"] = "jsonl"
    model = given["solver"]["model"]
    model.update(dict(args.model_options))
    for key, value in (("hidden_size", args.hidden), ("embedding_size", args.embedding),
                       ("pretrained_path", args.pretrained)):
        if value is not None:
            model[key] = value
    if args.operators:
        given.setdefault("augment", {})["operators"] = [o.strip() for o in args.operators.split(",") if o.strip()]
    return LoopParams.model_validate(_merge(values, given))


def mlflow_ui_command(tracking_uri: str) -> str:
    """The README's MLflow UI command for this store, with the ``mlflow`` installed beside this Python
    (job execution off, one worker: the command README.md documents), so the hint and the README agree."""
    program = Path(sys.executable).parent / "mlflow"
    return (f"MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false {program if program.exists() else 'mlflow'} server "
            f"--backend-store-uri {tracking_uri} --host 127.0.0.1 --port 5000 --workers 1")


def format_summary(result: dict[str, Any]) -> str:
    from tasks.loop.record import table_row

    records = result["rounds"]
    test_sets = sorted({name for r in records for name in r.tests})
    operators = sorted({op for r in records if r.generation for op in r.generation.verified_by_operator})
    header = ["round", "pool", "cands", "kept", "cut"] + [f"k:{op}" for op in operators] + ["leaked"] + test_sets \
        + ["train s"]
    lines = ["  ".join(f"{h:>8}" for h in header)]
    for record in records:
        row = table_row(record, test_sets, operators)
        g = record.generation
        leaked = sum(v for k, v in g.rejected.items() if k.startswith("matches_")) if g else None
        cells = [row["round"], row["pool_size"], row["candidates"] if row["candidates"] is not None else "-",
                 row["kept"] if row["kept"] is not None else "-",
                 f"{row['confidence_cut']:.3f}" if row["confidence_cut"] is not None else "-"]
        cells += [row[f"kept_{op}"] if row[f"kept_{op}"] is not None else "-" for op in operators]
        cells.append(leaked if leaked is not None else "-")
        cells += [f"{row[f'{name}_answer_acc']:.3f}" if row[f"{name}_answer_acc"] is not None else "-"
                  for name in test_sets]
        cells.append(f"{row['train_seconds']:.0f}")
        lines.append("  ".join(f"{c:>8}" for c in cells))
    tracking = result["tracking_uri"]
    lines += ["", *control_lines(result)]
    lines += [
        "",
        f"run directory : {result['run_dir']}",
        f"final solver  : {result['final_checkpoint']}",
        f"trained in    : {', '.join(sorted({r.precision for r in records if r.precision})) or '-'}",
        f"MLflow        : experiment {result['experiment']!r}, parent run {result['mlflow_run_id']} at {tracking}",
    ]
    if tracking.startswith("sqlite:"):
        lines.append(f"  open the UI : {mlflow_ui_command(tracking)}")
    server = "http://127.0.0.1:5000" if tracking.startswith("sqlite:") else tracking
    if tracking.startswith(("sqlite:", "http://", "https://")) and result.get("mlflow_experiment_id"):
        from tasks.loop.tracking_names import ui_urls

        runs, parent = ui_urls(server, result["mlflow_experiment_id"], result["mlflow_run_id"])
        lines += [f"  runs table  : {runs}", f"  parent run  : {parent}"]
    lines.append(f"Prefect       : flow run {result.get('flow_run_id')} (artifacts 'compaug-...-rounds'; "
                 "`prefect server start` to browse a server's records)")
    return "\n".join(lines)


def result_json(result: dict[str, Any]) -> str:
    control = result.get("control")
    return json.dumps({**result, "rounds": [r.to_dict() for r in result["rounds"]],
                       "control": control.to_dict() if control else None}, indent=2, default=str)


def control_lines(result: dict[str, Any]) -> list[str]:
    """The final round beside the equal-update control, set by set, or the plain word that there is none."""
    records, control = result["rounds"], result.get("control")
    final = records[-1]
    if control is None:
        if final.generation is None:
            return []
        return ["no control: this run trained no equal-update control (--no-control), so a rise over rounds "
                "cannot be told from the effect of more optimizer updates"]
    lines = [f"final round {final.round} against the equal-update control (the original {control.pool_size} "
             f"problems, as many optimizer updates as round {final.round}, best epoch {control.best_epoch} on "
             "validation):"]
    for name in sorted(final.tests):
        if name in control.tests:
            a, b = final.tests[name].answer_acc, control.tests[name].answer_acc
            lines.append(f"  {name:<12} loop {a:.3f}   control {b:.3f}   loop - control {a - b:+.3f}")
    lines.append("  one seed: see `compaug study` for seeds, spread and paired intervals")
    return lines


def _writable(directory: Path) -> None:
    """Checked before any run directory or MLflow run exists: the output directory can be written."""
    from cli.preflight import check_output_folder

    check_output_folder(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / ".compaug-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise ValueError(f"--out {directory}: cannot write there ({err.strerror or err})") from err


def run_command(args: argparse.Namespace) -> int:
    params = params_from_args(args)
    if args.params is None and args.data__format not in (None, "builtin") and not args.path:
        raise ValueError(f"--format {args.data__format} needs a data file")
    if params.score_dask_address:
        from tasks.loop.sharding import check_scheduler

        check_scheduler(params.score_dask_address)  # before any training: one clear line when it is not there
    from cli.preflight import check_loop_data
    from solvers.trainer import check_step_runs_here

    check_step_runs_here(params.train.step, params.train.graph_fusion, params.solver.device)
    check_loop_data(params)  # the data and split file make every set, before any run directory exists
    from tasks.loop.tracking import check_tracking

    check_tracking(params.tracking())  # seconds, not minutes of MLflow's retries after round 0 has trained
    _writable(params.out_dir)
    from tasks.loop.startup import claim_run

    held = claim_run(params)  # run directory in use, data changed: one line before any flow run or MLflow change
    try:
        from flows.augment_loop import augment_loop

        print(f"compaug run: {params.data.format} data, solver {params.solver.name}, {params.loop.rounds} rounds, "
              f"keep {params.loop.keep_fraction:.0%}; run directory {params.run_dir()}", flush=True)
        from flows.signals import run_stoppable

        result = run_stoppable("run", f"run directory {params.run_dir()} can be resumed by running the same command",
                               lambda: augment_loop(params))
    finally:
        held.close()
    print(result_json(result) if args.json else format_summary(result))
    return 0
