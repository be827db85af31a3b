"""The real split flow on a tiny JSONL file (ephemeral Prefect server, SQLite MLflow in tmp_path)."""
import json

import pytest

from flows.split import SplitParams


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
    assert run.data.params["method"] == "comdiv" and run.data.tags["prefect_flow_run_id"]
