"""The quantity labeler of tasks/dbca/atoms.py: the pool-to-test compound divergence uses the split's own atom labels."""
from mwp.builtin import generate_corpus
from tasks.dbca.atoms import QuantityLabeler, cluster_quantities, compound_divergence_between


def test_labeler_reproduces_the_splits_clusters_and_labels_new_problems():
    problems = generate_corpus(200, seed=1)
    labeler = QuantityLabeler.fit(problems, k=5, seed=0)
    assert labeler.clusters(problems).labels == cluster_quantities(problems, k=5, seed=0).labels
    unseen = generate_corpus(30, seed=9)
    labels = labeler.clusters(unseen).labels
    assert all(len(labels[p.id]) == len(p.quantities) and all(0 <= c < 5 for c in labels[p.id]) for p in unseen)


def test_divergence_is_zero_for_the_same_problems_and_grows_for_disjoint_templates():
    problems = generate_corpus(300, seed=2)
    labeler = QuantityLabeler.fit(problems, k=5, seed=0)
    assert abs(compound_divergence_between(labeler, problems, problems)) < 1e-9
    shallow = [p for p in problems if len(p.prefix()) == 3]
    deep = [p for p in problems if len(p.prefix()) >= 7]
    assert compound_divergence_between(labeler, shallow, deep) > compound_divergence_between(labeler, problems, deep)
