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
    # sorted by steps, each pool's batches take the fewest steps a cut of that pool into batches can
    assert rows["steps"]["per_epoch"][0]["decoder_steps"] <= rows["length"]["per_epoch"][0]["decoder_steps"]
    assert all(e["padded_waves"] >= e["decoder_steps"] for row in rows.values() for e in row["per_epoch"])
