"""The Prefect edge of the round's steps: thin ``@task`` wrappers (verb_noun names) around the pure
functions in ``tasks/``. Each unpacks its inputs, calls one pure function, logs, and returns paths
or small records. Only the steps that read files the user gave retry.
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.logging import get_run_logger

from mwp.problem import read_problems_jsonl, write_jsonl
from tasks import pool as pool_io
from tasks import training


@task(name="prepare_data", retries=2, retry_delay_seconds=2, cache_policy=NO_CACHE)
def prepare_data(data: dict[str, Any], run_dir: str, seed: int, test_fraction: float, valid_fraction: float,
                 split_file: str | None, iid_holdout_fraction: float) -> tuple[pool_io.DataSets, dict[str, Any]]:
    """Read the data source (skips counted and reported, never silent), split it, and write the
    sets into ``run_dir/data``. A resumed run reuses its ``data`` folder after checking that the
    source data and split file are still the ones it was made from."""
    from mwp.readers import load_dataset

    directory = Path(run_dir) / "data"
    fingerprint = pool_io.source_fingerprint(data, split_file)
    existing = pool_io.existing_sets(directory)
    if existing is not None:
        report = json.loads((directory / "report.json").read_text(encoding="utf-8"))
        if report.get("source_sha256") != fingerprint:
            raise ValueError(f"{run_dir}: the data or split file changed since this run started; resuming would mix "
                             "rounds made from different data. Use another --out, or delete the run directory.")
        return existing, report
    options = {"n": data["builtin_size"]} if data["format"] == "builtin" else {}
    result = load_dataset(data["format"], data.get("path"), **options)
    problems = result.problems[: data["limit"]] if data.get("limit") else result.problems
    split = pool_io.load_split_file(split_file) if split_file else None
    train, valid, tests = pool_io.split_problems(problems, seed, test_fraction, valid_fraction, split,
                                                 iid_holdout_fraction)
    sets = pool_io.write_sets(directory, train, valid, tests)
    report = {"format": data["format"], "records": result.total, "usable": len(result.problems),
              "used": len(problems), "skipped": dict(result.skipped),
              "train": len(train), "valid": len(valid), "tests": {k: len(v) for k, v in tests.items()},
              "split_ids_not_loaded": pool_io.missing_ids(problems, split) if split else 0,
              "source_sha256": fingerprint}
    pool_io.write_json_atomic(directory / "report.json", report)
    get_run_logger().info("data: %d usable of %d records (skipped %s); sets %s", report["usable"],
                          report["records"], report["skipped"] or "none",
                          {"train": len(train), "valid": len(valid), **report["tests"]})
    return sets, report


@task(name="train_solver", cache_policy=NO_CACHE)
def train_solver(pool_path: str, valid_path: str, settings: dict[str, Any], checkpoint_dir: str, seed: int,
                 warm_start_from: str | None = None) -> training.TrainSummary:
    train = read_problems_jsonl(pool_path)
    valid = read_problems_jsonl(valid_path)
    # A progress bar on a terminal; in a worker's log a bar per batch would only be noise.
    summary = training.train_solver(train, valid, settings, Path(checkpoint_dir), seed,
                                    progress=sys.stderr.isatty(),
                                    warm_start_from=Path(warm_start_from) if warm_start_from else None)
    get_run_logger().info("trained %s on %d problems in %.1fs; best epoch %d (valid acc %s)", settings["name"],
                          len(train), summary.seconds, summary.best_epoch, summary.best_valid_answer_acc)
    return summary


@task(name="evaluate_solver", cache_policy=NO_CACHE)
def evaluate_solver(checkpoint_dir: str, test_sets: dict[str, str], beam_size: int, device: str) -> dict:
    metrics = training.evaluate_checkpoint(Path(checkpoint_dir), {k: Path(v) for k, v in test_sets.items()},
                                           beam_size, device)
    get_run_logger().info("evaluation: %s", {k: round(v["answer_acc"], 4) for k, v in metrics.items()})
    return metrics


@task(name="generate_candidates", cache_policy=NO_CACHE)
def generate_candidates(pool_path: str, out_path: str, augment: dict[str, Any], seed: int,
                        round_index: int) -> dict[str, Any]:
    """Run the augmentation operators over the pool; verified, deduplicated candidates to JSONL."""
    from tasks.augment import AugmentConfig, generate_candidates as generate

    pool = read_problems_jsonl(pool_path)
    config = AugmentConfig(max_spans=augment["max_spans"], max_span_len=augment["max_span_len"],
                           per_problem_cap=augment["max_per_source"], per_round_cap=augment["max_per_round"],
                           seed=seed)
    batch = generate(pool, operators=augment["operators"], config=config, seed=seed, round=round_index)
    write_jsonl(batch.candidates, out_path)
    by_operator = Counter(c.provenance.operator for c in batch.candidates)
    stats = {"verified": len(batch.candidates), "rejected": dict(batch.rejected),
             "candidates": len(batch.candidates) + sum(batch.rejected.values()),
             "by_operator": dict(by_operator)}
    get_run_logger().info("round %d: %d verified candidates (%s), rejected %s", round_index, stats["verified"],
                          dict(by_operator), dict(batch.rejected) or "none")
    return stats


@task(name="score_candidates", cache_policy=NO_CACHE)
def score_candidates(candidates_path: str, pool_path: str, checkpoint_dir: str, score_name: str, seed: int,
                     device: str, scored_path: str) -> dict[str, Any]:
    candidates = read_problems_jsonl(candidates_path)
    pool = {p.id: p for p in read_problems_jsonl(pool_path)}
    scores, unscorable = training.score_with_checkpoint(Path(checkpoint_dir), candidates, score_name, pool,
                                                        seed, device)
    pool_io.write_scored(Path(scored_path), candidates, scores)
    return {"scored": len(candidates) - unscorable, "unscorable": unscorable}


@task(name="keep_top_candidates", cache_policy=NO_CACHE)
def keep_top_candidates(scored_path: str, keep_fraction: float, kept_path: str) -> dict[str, Any]:
    from ranking.retention import Scored, keep_top_fraction

    scored = pool_io.read_scored(Path(scored_path))
    by_id = {p.id: (p, s) for p, s in scored}
    kept, cut = keep_top_fraction([Scored(p.id, s) for p, s in scored], keep_fraction)
    pool_io.write_scored(Path(kept_path), [by_id[k.id][0] for k in kept], [k.score for k in kept])
    finite = [s for _, s in scored if s == s]
    return {"kept": len(kept), "confidence_cut": cut,
            "confidence_mean": sum(finite) / len(finite) if finite else None,
            "kept_confidence_mean": sum(k.score for k in kept) / len(kept) if kept else None}


@task(name="write_pool", cache_policy=NO_CACHE)
def write_pool(sets: pool_io.DataSets, run_dir: str, round_index: int, out_path: str) -> int:
    """Materialize the training pool after ``round_index`` (original train + every kept set)."""
    return write_jsonl(pool_io.current_pool(sets, Path(run_dir), round_index), out_path)


def summary_json(obj: Any) -> str:
    return json.dumps(asdict(obj) if hasattr(obj, "__dataclass_fields__") else obj, default=str)


@task(name="measure_compound_divergence", cache_policy=NO_CACHE)
def measure_compound_divergence(data: dict[str, Any], split_file: str, pool_path: str, test_path: str,
                                run_dir: str) -> float:
    """DBCA^c between the current pool and the compositional test set, under the split's own atom
    labels (quantity clusters fitted exactly as the split fitted them, once per run: the fitted
    labeler is kept in ``run_dir/data/quantity_labeler.joblib``)."""
    import joblib

    from mwp.readers import load_dataset
    from tasks.gap import QuantityLabeler, compound_divergence_between

    split = pool_io.load_split_file(split_file)
    settings = split.get("parameters", {})
    cache = Path(run_dir) / "data" / "quantity_labeler.joblib"
    if cache.exists():
        labeler = joblib.load(cache)  # written by this function for this run directory
    else:
        k = next((v for v in (split.get("k"), settings.get("k")) if isinstance(v, int)), 10)
        options = {"n": data["builtin_size"]} if data["format"] == "builtin" else {}
        reference = load_dataset(data["format"], data.get("path"), **options).problems
        labeler = QuantityLabeler.fit(reference, k=k, window=int(settings.get("window", 4)),
                                      seed=int(settings.get("seed", 0)))
        joblib.dump(labeler, cache)
    value = compound_divergence_between(labeler, read_problems_jsonl(pool_path), read_problems_jsonl(test_path),
                                        alpha=float(settings.get("compound_alpha", 0.1)))
    get_run_logger().info("compound divergence pool -> %s: %.4f (k=%d)", Path(test_path).stem, value, labeler.k)
    return value
