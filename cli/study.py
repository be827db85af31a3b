"""``compaug study``: a controlled, multi-seed study of the loop (flows/study.py), from a JSON file of
StudyParams; options given on the command line override it. ``--dry-run`` prints the grid and an
estimated wall time from a measured epoch of each solver, so a laptop runs a reduced study and a GPU box
the full one. Running the same study again skips its finished cells."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers) -> None:
    from cli.fields import add_section
    from flows.params import LoopSettings, TrainSettings
    from flows.study_params import StudyParams

    p = subparsers.add_parser("study", help="controlled multi-seed study of the loop (paper 003 Tables 1, 4, 5)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", type=Path, help="JSON file of StudyParams (splits, solvers, train, augment, ...)")
    add_section(p, StudyParams, TOP, only=("name", "arms", "seeds", "out_dir", "workers", "dask_address",
                                           "torch_threads", "share_round_zero"), flags={"out_dir": ("--out",)},
                arms={"help": "arms, each a record of tasks/study/arms.py (default control loop)", "metavar": "ARM"})
    add_section(p.add_argument_group("loop (every arm; each arm's record changes some)"), LoopSettings, "loop",
                flags={"keep_fraction": ("--keep", "--keep-fraction")})
    add_section(p.add_argument_group("training (every training of every cell)"), TrainSettings, "train")
    p.add_argument("--dry-run", action="store_true", help="print the grid and an estimated wall time, run nothing")
    p.add_argument("--report-only", action="store_true",
                   help="write the report of the cells finished so far (no training), e.g. between sittings")
    p.set_defaults(handler=run_study)


TOP = "top"  # the section of StudyParams' own fields


def study_params(args: argparse.Namespace):
    """The study's parameters: the --params file, with the options given on the command line over it."""
    from cli.fields import given_sections
    from flows.params import lift_legacy_loop_keys
    from cli.preflight import read_params_file
    from flows.study_params import StudyParams

    values = lift_legacy_loop_keys(read_params_file(args.params)) if args.params else {}
    sections = given_sections(args)
    for key, value in sections.pop(TOP, {}).items():
        values[key] = str(value) if isinstance(value, Path) else value
    for section, given in sections.items():
        values[section] = {**values.get(section, {}), **given}
    return StudyParams.model_validate(values)  # errors: one line from cli/main.py


def run_study(args: argparse.Namespace) -> int:
    from flows.study import report_finished_cells, study_flow
    from tasks.study.estimate import dry_run

    params = study_params(args)
    if not args.report_only:
        _check_cells(params)
    if not (args.report_only or args.dry_run or params.dask_address):  # the cells train here
        from solvers.trainer import check_step_runs_here

        loops = [params.loop_params(cell) for cell in params.cells()]
        for step, fusion, device in sorted({(p.train.step, p.train.graph_fusion, p.solver.device) for p in loops}):
            check_step_runs_here(step, fusion, device)
    if params.dask_address:
        from tasks.loop.sharding import check_scheduler

        check_scheduler(params.dask_address)  # before any training: one clear line when it is not there
    if args.dry_run:
        print("\n".join(dry_run(params)))
        return 0
    if args.report_only:
        summary = report_finished_cells(params)
        print(f"report: {summary['report']}\ncells pending: {len(summary['pending'])} of {summary['cells']}, "
              f"failed: {summary['failed'] or 'none'}")
        return 0
    from tasks.loop.tracking import check_tracking

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
    from cli.preflight import check_loop_data

    cells = params.cells()
    loops = {cell.key: params.loop_params(cell) for cell in cells}
    cache: dict = {}
    for split in params.splits:
        first = next(cell for cell in cells if cell.split == split.name)
        try:
            check_loop_data(loops[first.key], cache)
        except ValueError as err:
            raise ValueError(f"split {split.name!r}: {err}") from err
