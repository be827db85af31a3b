"""The documents of tasks/dbca/split_file.py: the split file and its snapshots carry the split's quantity
labeler, and so does SD's split.json."""
import json
from pathlib import Path

from mwp.builtin import generate_corpus
from tasks.dbca.atoms import cluster_quantities, labeler_from_split, split_problems
from tasks.dbca.split_file import sd_document, snapshot_path, snapshot_result, split_document
from tasks.dbca.splitter import SplitConfig
from tasks.dbca.synthetic import SDResult, build_sd

CONFIG = SplitConfig(test_fraction=0.2, seed=0, max_atom_divergence=0.1, snapshot_divergences=(0.05,), progress=False)


def test_split_file_and_snapshot_carry_the_labeler_of_the_splits_clusters():
    problems = generate_corpus(60, seed=1)
    choice = split_problems(problems, CONFIG, k=3)
    assert (choice.tried, choice.iid) == ({}, {})  # a fixed k: nothing chosen
    document = split_document(problems, choice.clusters, choice.result, choice, "comdiv", {"k": 3}, CONFIG)
    assert list(document) == ["method", "parameters", "k", "train", "test", "stats", "quantity_labeler"]
    labeler = labeler_from_split(json.loads(json.dumps(document)))
    assert labeler.clusters(problems).labels == choice.clusters.labels
    assert len(document["train"]) == 48 and document["stats"]["k_tried"] == {}

    snap, = choice.result.snapshots
    at = snapshot_result(choice.result, snap, len(problems))
    assert at.stop_reason == "target" and set(at.train) | set(at.test) == set(range(60)) and at.test == snap.test
    snapshot = split_document(problems, choice.clusters, at, choice, "comdiv", {"k": 3}, CONFIG)
    assert snapshot["quantity_labeler"] == document["quantity_labeler"]
    assert snapshot_path(Path("splits/comdiv.json"), 0.5) == Path("splits/comdiv-c0.50.json")


def test_iid_split_file_records_the_ks_tried_and_the_chosen_ks_labeler():
    problems = generate_corpus(60, seed=2)
    choice = split_problems(problems, CONFIG, method="iid", ks=(2, 3))
    assert choice.result.stop_reason == "random" and set(choice.tried) == {2, 3}
    document = split_document(problems, choice.clusters, choice.result, choice, "iid", {}, CONFIG)
    assert set(document["stats"]["k_tried"]) == {"2", "3"}
    assert document["quantity_labeler"]["k"] == document["k"] == choice.k


def test_sd_split_json_carries_the_labeler_of_its_divergence_clusters():
    sd = build_sd(generate_corpus(200, seed=3))
    assert sd.train and sd.test
    document = sd_document(sd, {"k": 4}, k=4, seed=0)
    assert document["quantity_labeler"]["k"] == 4
    both = sd.train + sd.test
    assert labeler_from_split(document).clusters(both).labels == cluster_quantities(both, 4, seed=0).labels
    assert sd_document(SDResult(), {}, k=4, seed=0)["quantity_labeler"] is None  # nothing to cluster
