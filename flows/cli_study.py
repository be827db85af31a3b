"""``compaug study``: a controlled, multi-seed study of the loop (flows/study.py), from a JSON file of
StudyParams; options given on the command line override it. ``--dry-run`` prints the grid and an
estimated wall time from a measured epoch of each solver, so a laptop runs a reduced study and a GPU box
the full one. Running the same study again skips its finished cells."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers) -> None:
    from tasks.study.grid import ARMS

    p = subparsers.add_parser("study", help="controlled multi-seed study of the loop (paper 003 Tables 1, 4, 5)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", type=Path, help="JSON file of StudyParams (splits, solvers, train, augment, ...)")
    p.add_argument("--name", help="study name: its directory under --out and its MLflow experiment")
    p.add_argument("--arms", nargs="+", choices=tuple(ARMS), help="arms (default control loop)")
    p.add_argument("--seeds", nargs="+", type=int, help="seeds (default 0 1 2)")
    p.add_argument("--rounds", type=int, help="T of the loop arms (default 3)")
    p.add_argument("--epochs", type=int, help="epochs of every training (default 80)")
    p.add_argument("--out", type=Path, help="studies directory (default runs/studies)")
    p.add_argument("--workers", type=int, help="cells in parallel on a local Dask cluster (default 1: one after another)")
    p.add_argument("--dask-address", help="run the cells on an existing Dask scheduler, tcp://HOST:PORT")
    p.add_argument("--torch-threads", type=int, help="torch threads of each cell (default: cores / workers)")
    p.add_argument("--dry-run", action="store_true", help="print the grid and an estimated wall time, run nothing")
    p.add_argument("--report-only", action="store_true",
                   help="write the report of the cells finished so far (no training), e.g. between sittings")
    p.set_defaults(handler=run_study)


def run_study(args: argparse.Namespace) -> int:
    from flows.study import StudyParams, estimate, report_finished_cells, study_flow

    from flows.preflight import read_params_file

    values = read_params_file(args.params) if args.params else {}
    for key, value in (("name", args.name), ("arms", args.arms), ("seeds", args.seeds), ("rounds", args.rounds),
                       ("out_dir", args.out), ("workers", args.workers), ("dask_address", args.dask_address),
                       ("torch_threads", args.torch_threads)):
        if value is not None:
            values[key] = str(value) if isinstance(value, Path) else value
    if args.epochs is not None:
        values["train"] = {**values.get("train", {}), "epochs": args.epochs}
    params = StudyParams.model_validate(values)  # errors: one line from flows/cli.py
    if not args.report_only:
        _check_cells(params)
    if params.dask_address:
        from tasks.loop.sharding import check_scheduler

        check_scheduler(params.dask_address)  # before any training: one clear line when it is not there
    if args.dry_run:
        print("\n".join(estimate(params)))
        return 0
    if args.report_only:
        summary = report_finished_cells(params)
        print(f"report: {summary['report']}\ncells pending: {len(summary['pending'])} of {summary['cells']}, "
              f"failed: {summary['failed'] or 'none'}")
        return 0
    from flows.tracking import check_tracking

    check_tracking(params.tracking())
    from flows.signals import run_stoppable

    result = run_stoppable("study", f"study directory {params.directory()}: running the same command again skips "
                           "its finished cells", lambda: study_flow(params))
    print(f"report: {result['report']}\nfailed cells: {result['failed'] or 'none'}\n"
          f"MLflow: study run {result['mlflow_run_id']} at {result['tracking_uri']}")
    return 0


def _check_cells(params) -> None:
    """Before any training: every cell's loop parameters validate, and each split's data and split
    file make every set (each data file read once)."""
    from flows.preflight import check_loop_data

    cells = params.cells()
    loops = {cell.key: params.loop_params(cell) for cell in cells}
    cache: dict = {}
    for split in params.splits:
        first = next(cell for cell in cells if cell.split == split.name)
        try:
            check_loop_data(loops[first.key], cache)
        except ValueError as err:
            raise ValueError(f"split {split.name!r}: {err}") from err
