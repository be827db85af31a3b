"""The quantity labeler of tasks/dbca/atoms.py: the split's own clusters, numpy labelling of new problems,
a JSON round trip, and the pool-to-test compound divergence under the split's labels."""
import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest

from mwp.builtin import generate_corpus
from tasks.dbca.atoms import (QuantityLabeler, cluster_quantities, compound_divergence_between, labeler_from_split,
                              quantity_documents)

DBCA = Path(__file__).resolve().parents[3] / "tasks" / "dbca"


def test_labeler_reproduces_the_splits_clusters_and_labels_new_problems():
    problems = generate_corpus(200, seed=1)
    labeler = QuantityLabeler.fit(problems, k=5, seed=0)
    clusters = cluster_quantities(problems, k=5, seed=0)
    assert labeler.clusters(problems).labels == clusters.labels
    assert clusters.labeler.clusters(problems).labels == clusters.labels  # the one cluster_quantities fitted
    unseen = generate_corpus(30, seed=9)
    labels = labeler.clusters(unseen).labels
    assert all(len(labels[p.id]) == len(p.quantities) and all(0 <= c < 5 for c in labels[p.id]) for p in unseen)


def test_a_json_round_trip_labels_held_out_problems_as_the_fitted_labeler_does():
    labeler = cluster_quantities(generate_corpus(300, seed=4), k=6, seed=2).labeler
    text = json.dumps(labeler.to_dict())
    again = QuantityLabeler.from_dict(json.loads(text))
    held_out = generate_corpus(80, seed=12)
    assert again.clusters(held_out).labels == labeler.clusters(held_out).labels
    assert (again.k, again.window, again.vocabulary) == (labeler.k, labeler.window, labeler.vocabulary)
    assert np.array_equal(again.centres, labeler.centres) and np.array_equal(again.idf, labeler.idf)


def test_numpy_labelling_matches_the_fitted_sklearn_vectorizer_and_kmeans():
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    _, docs = quantity_documents(generate_corpus(300, seed=5), window=4)
    vectorizer = TfidfVectorizer(analyzer=lambda tokens: tokens)
    kmeans = KMeans(n_clusters=7, n_init=1, random_state=0).fit(vectorizer.fit_transform(docs))
    labeler = QuantityLabeler(7, 4, tuple(vectorizer.get_feature_names_out()), vectorizer.idf_, kmeans.cluster_centers_)
    _, held_out = quantity_documents(generate_corpus(100, seed=13), window=4)
    assert labeler.assign(held_out).tolist() == kmeans.predict(vectorizer.transform(held_out)).tolist()


def test_assign_on_a_hand_made_labeler():
    # two terms, idf 1 and 2; centres at the unit vectors of "apples" and "miles"
    labeler = QuantityLabeler(k=3, window=4, vocabulary=("apples", "miles"), idf=[1.0, 2.0],
                              centres=[[1.0, 0.0], [0.0, 1.0]])
    # ["apples", "apples", "miles"]: tf (2, 1) * idf (1, 2) = (2, 2), normalised (0.707, 0.707): a tie, first centre
    # ["apples", "miles", "miles"]: (1, 4) -> centre 1; ["pears"]: no known token, zero vector, a tie -> centre 0
    docs = [["apples", "apples", "miles"], ["apples", "miles", "miles"], ["pears"], ["miles", "pears"]]
    assert labeler.assign(docs).tolist() == [0, 1, 0, 1]


def test_from_dict_rejects_unknown_keys_and_inconsistent_shapes():
    good = {"k": 2, "window": 4, "vocabulary": ["a", "b"], "idf": [1.0, 1.0], "centres": [[1.0, 0.0]]}
    assert QuantityLabeler.from_dict(good).centres.shape == (1, 2)
    with pytest.raises(ValueError, match="keys"):
        QuantityLabeler.from_dict({**good, "seed": 0})
    with pytest.raises(ValueError, match="centres of shape"):
        QuantityLabeler.from_dict({**good, "centres": [[1.0, 0.0, 0.0]]})
    with pytest.raises(ValueError, match="integers"):
        QuantityLabeler.from_dict({**good, "k": "2"})
    with pytest.raises(ValueError, match="3 centres for k=2"):
        QuantityLabeler.from_dict({**good, "centres": [[1.0, 0.0]] * 3})


def test_labeler_from_split_reads_the_documents_key():
    labeler = cluster_quantities(generate_corpus(50, seed=3), k=3).labeler
    document = json.loads(json.dumps({"method": "comdiv", "quantity_labeler": labeler.to_dict()}))
    assert labeler_from_split(document).vocabulary == labeler.vocabulary
    assert labeler_from_split({"method": "comdiv"}) is None


def test_divergence_is_zero_for_the_same_problems_and_grows_for_disjoint_templates():
    problems = generate_corpus(300, seed=2)
    labeler = QuantityLabeler.fit(problems, k=5, seed=0)
    assert abs(compound_divergence_between(labeler, problems, problems)) < 1e-9
    shallow = [p for p in problems if len(p.prefix()) == 3]
    deep = [p for p in problems if len(p.prefix()) >= 7]
    assert compound_divergence_between(labeler, shallow, deep) > compound_divergence_between(labeler, problems, deep)
    assert math.isclose(compound_divergence_between(labeler, shallow, shallow), 0.0, abs_tol=1e-9)


def test_no_module_of_tasks_dbca_imports_pickle_or_joblib():
    paths = sorted(DBCA.glob("*.py"))
    assert {p.name for p in paths} >= {"atoms.py", "divergence.py", "splitter.py", "synthetic.py", "split_file.py",
                                          "steps.py"}
    imported = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update((path.name, alias.name.split(".")[0]) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add((path.name, node.module.split(".")[0]))
    assert sorted(m for m in imported if m[1] in {"pickle", "joblib", "cloudpickle", "dill"}) == []
