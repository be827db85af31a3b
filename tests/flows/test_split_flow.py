"""The real split and SD flows on tiny JSONL files (ephemeral Prefect server, SQLite MLflow in tmp_path)."""
import json
from functools import partial

import pytest

from cli.main import build_parser
from flows.split import SDParams, SplitParams
from mwp.problem import read_problems_jsonl
from mwp.readers import FORMATS, load_dataset
from tasks.dbca.atoms import atoms_of, cluster_quantities, compounds_of, labeler_from_split
from tasks.dbca.splitter import measure_divergences


def _write_pool(path):
    rows = []
    for i in range(10):
        rows.append({"id": f"m{i}", "text": f"A box holds {i + 2} pens. Ann buys 3 boxes. How many pens?",
                     "equation": f"x={i + 2}*3", "answer": (i + 2) * 3})
        rows.append({"id": f"s{i}", "text": f"Tom had {i + 9} cards. He lost 4 cards. How many are left?",
                     "equation": f"x={i + 9}-4", "answer": i + 5})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")


def test_params_reject_unknown_keys():
    with pytest.raises(ValueError, match="extra"):
        SplitParams(format="jsonl", path="x", out="y", taget_divergence=0.5)


def test_the_format_choices_are_the_readers_registry():
    for params in (SplitParams, SDParams):
        with pytest.raises(ValueError, match="'mawps'"):  # pydantic lists the allowed values
            params(format="mawsp", path="x", out="y")
        assert params.model_json_schema()["properties"]["format"]["enum"] == list(FORMATS)
    parser = build_parser()
    for command in ("split", "sd"):
        assert parser.parse_args([command, "--format", "asdiv", "x", "--out", "y"]).format == "asdiv"
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--format", "mawsp", "x", "--out", "y"])


def test_split_flow_writes_the_file_and_logs_the_run(prefect_harness, tmp_path, monkeypatch):
    import mlflow

    from flows.split import split_flow

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    data = tmp_path / "pool.jsonl"
    _write_pool(data)
    out = tmp_path / "splits" / "comdiv.json"
    result = split_flow(SplitParams(format="jsonl", path=str(data), out=str(out), k=2, ks=[2], window=2,
                                    test_fraction=0.2, max_atom_divergence=0.1, progress=False))
    written = json.loads(out.read_text(encoding="utf-8"))
    assert len(written["train"]) == 16 and len(written["test"]) == 4
    assert set(written["train"]) | set(written["test"]) == {f"m{i}" for i in range(10)} | {f"s{i}" for i in range(10)}
    assert written["stats"]["number_ratio"] == "16/4"
    assert 0.0 <= written["stats"]["atom_divergence"] <= 0.1 + 1e-9
    assert written["parameters"]["k"] == 2 and written["method"] == "comdiv"

    mlflow.set_tracking_uri(f"sqlite:///{out.parent / 'mlflow.db'}")
    run = mlflow.get_run(result["mlflow_run_id"])
    assert run.data.metrics["compound_divergence"] == pytest.approx(written["stats"]["compound_divergence"], abs=1e-6)
    assert run.data.params["method"] == "comdiv" and run.data.tags["prefect.flow_run_id"]

    # the file carries the labeler of the split's clusters: it gives the same labels without refitting,
    # and under them the split measures what the file says
    problems = load_dataset("jsonl", str(data)).problems
    labeler = labeler_from_split(written)
    assert (labeler.k, labeler.window) == (2, 2)
    clusters = labeler.clusters(problems)
    assert clusters.labels == cluster_quantities(problems, k=2, window=2, seed=0).labels
    side = {pid: i for i, pid in enumerate(p.id for p in problems)}
    atom_div, compound_div = measure_divergences(
        problems, [side[i] for i in written["train"]], [side[i] for i in written["test"]],
        partial(atoms_of, clusters=clusters), partial(compounds_of, clusters=clusters), min_compound_examples=2)
    assert (round(atom_div, 6), round(compound_div, 6)) == (written["stats"]["atom_divergence"],
                                                            written["stats"]["compound_divergence"])


def _sd_pool(path):
    """One rule-9 seed ((n1 * n2) - n3, one quantity a clause) and a donor of each of its part templates."""
    rows = [("seed", "Tom picks 12 apples. Ann picks 4 apples. Bob picks 2 apples. How many apples are there?",
             "x=12*4-2", 46),
            ("mul", "Sam picks 12 apples. Kim picks 4 apples. What is the apple total?", "x=12*4", 48),
            ("sub", "Sam picks 12 apples. Kim picks 4 apples. What is the apple total?", "x=12-4", 8)]
    path.write_text("\n".join(json.dumps({"id": i, "text": t, "equation": e, "answer": a}) for i, t, e, a in rows) + "\n",
                    encoding="utf-8")


def test_sd_flow_writes_the_set_and_a_split_file_with_its_labeler(prefect_harness, tmp_path, monkeypatch):
    import mlflow

    from flows.split import sd_flow

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    data = tmp_path / "pool.jsonl"
    _sd_pool(data)
    out = tmp_path / "sd"
    result = sd_flow(SDParams(format="jsonl", path=str(data), out=str(out), k=3))
    written = json.loads((out / "split.json").read_text(encoding="utf-8"))
    assert written["train"] == ["seed/sd9a", "seed/sd9b"] and written["test"] == ["seed"]
    assert written["labels"] == {"seed": "structural"} and written["stats"]["number_ratio"] == "2/1"
    both = read_problems_jsonl(out / "train.jsonl") + read_problems_jsonl(out / "test.jsonl")
    labeler = labeler_from_split(written)
    assert labeler.clusters(both).labels == cluster_quantities(both, k=3, seed=0).labels

    mlflow.set_tracking_uri(f"sqlite:///{out / 'mlflow.db'}")
    run = mlflow.get_run(result["mlflow_run_id"])
    assert run.data.metrics["n_test"] == 1 and run.data.tags["prefect.flow_run_id"]
