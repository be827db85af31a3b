"""bench/bucketing.py on the built-in problems: an epoch's decoder steps, tokens and rounded shapes under each
TrainConfig.bucketing, from plans alone."""
import math

from bench import bucketing
from mwp.readers import load_dataset
from solvers.gts import GTSConfig, GTSModel
from solvers.trainer import expressible
from solvers.vocab import build_encoding


def test_an_epoch_by_steps_runs_no_more_decoder_steps_than_by_length_over_the_same_problems():
    problems = list(load_dataset("builtin").problems)
    encoding = build_encoding(problems, min_count=1)
    kept = [p for p in problems if expressible(encoding, p)]
    model = GTSModel(GTSConfig(embedding_size=8, hidden_size=16), encoding)
    steps = model.decoder_steps(encoding, kept)
    assert len(set(steps)) > 1  # trees of several depths: the two orders differ
    rows = {b: bucketing.epochs_of(kept, encoding, model, b, epochs=2, batch_size=4) for b in ("length", "steps")}
    for row in rows.values():
        assert [e["batches"] for e in row["per_epoch"]] == [math.ceil(len(kept) / 4)] * 2
        assert row["per_epoch"][0]["decoder_steps"] >= math.ceil(len(kept) / 4) * min(steps)
        assert 0 < row["first_epoch_shapes"]["graphed"] <= row["shapes"]["graphed"]
        # the shapes met once hold a batch each; the rarer thresholds hold more shapes
        rare = row["rare_shapes"]["graphed-whole"]
        assert rare["2"][0] == rare["2"][1] <= rare["5"][0] <= row["shapes"]["graphed-whole"]
    # sorted by steps, each pool's batches take the fewest steps a cut of that pool into batches can
    assert rows["steps"]["per_epoch"][0]["decoder_steps"] <= rows["length"]["per_epoch"][0]["decoder_steps"]
    assert all(e["padded_waves"] >= e["decoder_steps"] for row in rows.values() for e in row["per_epoch"])


def test_rare_shapes_count_the_shapes_met_fewer_than_k_times_and_their_batches():
    assert bucketing.rare_shapes([1, 1, 3, 7, 40]) == {"2": [2, 2], "5": [3, 5], "10": [4, 12]}
    assert bucketing.rare_shapes([]) == {"2": [0, 0], "5": [0, 0], "10": [0, 0]}
