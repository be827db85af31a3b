"""Round 0 shared by the arms of a study.

Round 0 trains the solver on the original pool: nothing of the augmentation, the retention, the ranker
or the number of rounds enters it. The augmenting arms of one seed in a study therefore train the same
round 0 (on the CPU the records are equal to the last digit); a run given ``round0_from`` (another run
directory) adopts that run's finished round 0 instead of training it again, when every parameter that
round 0 depends on is equal. Which parameters those are is stated the safe way round: the ones listed
here are known not to reach round 0, and every other one, including any added later, must be equal.
On a GPU, where two trainings of one seed differ in their last digits, adoption also makes the arms of
a seed start from one and the same round 0, so their differences are the rounds' alone.

An adopted round is a copy (checkpoint, pool, predictions, validation curve; not the training's resume
state) with ``adopted.json`` naming its source; its record is written last, as a trained round's is.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from tasks.loop import rundir

ADOPTED = "adopted.json"
# Parameters that do not reach round 0: where the run is written and tracked, where candidates are
# scored, the augmentation (round 0 never generates), the loop's settings of rounds 1..T, and the
# adoption itself.
_NOT_ROUND0 = frozenset({"out_dir", "experiment", "tracking_uri", "mlflow_parent_run_id", "score_workers",
                         "score_dask_address", "score_threads", "round0_from"})
_NOT_ROUND0_AUGMENT = frozenset({"operators", "per_problem_cap", "per_round_cap", "allow_unused_quantities",
                                 "reject_negative_answers"})
_NOT_ROUND0_LOOP = frozenset({"rounds", "retention", "keep_fraction", "score", "warm_start", "warm_start_epochs",
                              "augment_rounds", "control"})


def round_zero_key(document: dict[str, Any]) -> dict[str, Any]:
    """The parameters of a run (``LoopParams.model_dump(mode="json")``, or a run's params.json) that
    round 0 depends on."""
    out = {k: v for k, v in document.items() if k not in _NOT_ROUND0}
    for section, dropped in (("augment", _NOT_ROUND0_AUGMENT), ("loop", _NOT_ROUND0_LOOP)):
        if isinstance(out.get(section), dict):
            out[section] = {k: v for k, v in out[section].items() if k not in dropped}
            if not out[section]:
                out.pop(section)
    return out


def adopt_round_zero(run_dir: Path, source: Path, params: dict[str, Any],
                     source_params: dict[str, Any] | None) -> tuple[bool, str]:
    """Copy ``source``'s finished round 0 into ``run_dir`` when round 0 of ``params`` (this run's
    parameters, JSON) would be trained with the same parameters as ``source_params`` (the source's
    params.json, None when it has none). Returns (adopted, what happened), the reason naming what stands
    in the way when nothing is adopted; a run that already has its round 0 keeps it."""
    if rundir.record_path(run_dir, 0).exists():
        return False, f"round 0 already in {run_dir}"
    if source.resolve() == run_dir.resolve():
        return False, "the source is this run"
    if 0 not in rundir.completed_rounds(source):
        return False, f"{source} has no finished round 0"
    if source_params is None:
        return False, f"{source} has no params.json"
    mine = _data_sha(run_dir)
    if mine is None or mine != _data_sha(source):
        return False, f"{source} made its sets from other data (or this run has not made its own yet)"
    differ = rundir.parameter_changes(round_zero_key(source_params), round_zero_key(params))
    if differ:
        return False, f"{source} trained round 0 with other parameters ({', '.join(differ)})"
    record = rundir.read_record(source, 0)
    target = rundir.round_dir(run_dir, 0)
    partial = target.with_name(target.name + ".adopting")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(rundir.round_dir(source, 0), partial,
                    ignore=shutil.ignore_patterns("train_state", "metrics.json", ADOPTED, "*.adopting"))
    rundir.write_json_atomic(partial / ADOPTED, {"from": str(source.resolve()), "at": time.time()})
    shutil.rmtree(target, ignore_errors=True)  # an attempt of this run's own that never finished
    partial.rename(target)
    rundir.write_record(run_dir, record)  # last: the round is complete
    return True, f"round 0 adopted from {source}"


def _data_sha(run_dir: Path) -> str | None:
    path = run_dir / "data" / "report.json"
    return json.loads(path.read_text(encoding="utf-8")).get("source_sha256") if path.exists() else None


def adopted_from(run_dir: Path, round_index: int) -> str | None:
    """The run directory a round was adopted from, None for a round trained here."""
    path = rundir.round_dir(run_dir, round_index) / ADOPTED
    return json.loads(path.read_text(encoding="utf-8"))["from"] if path.exists() else None
