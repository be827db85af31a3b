"""bench/pass_compile.py on a tiny GTS and the built-in problems: the plain pass compiled whole (backend aot_eager:
AOTAutograd's graphs, no generated code, seconds on a CPU) gives the hand-written pass's loss and gradients with the
same dropout masks; dispatch counts are of one call; the loop structures are those of the walked shapes' keys."""
from argparse import Namespace

from bench import pass_compile
from mwp.readers import load_dataset
from solvers.gts import GTSConfig
from solvers.trainer import expressible
from solvers.vocab import build_encoding


def test_the_compiled_plain_pass_matches_the_hand_written_one_and_is_counted():
    train = list(load_dataset("builtin").problems)[:12]
    args = Namespace(hidden=16, embedding=8, batch_size=12, ways=["hand-written", "compiled"], backend="aot_eager")
    report = pass_compile.measure(train, args, "cpu")
    hand, compiled = report["ways"]["hand-written"], report["ways"]["compiled"]
    assert set(report["ways"]) == {"hand-written", "compiled"}
    assert compiled["loss_difference"] < 1e-4 * hand["loss"]  # dropout on (the paper's 0.5), the same masks
    assert compiled["largest_relative_gradient_difference"] < 1e-4
    # aot_eager generates no kernels: the plain pass's aten operations, more than the hand-written ones
    assert compiled["generated_kernels"] == 0 and compiled["dispatches"] > hand["dispatches"] > 100
    assert sum(compiled["dispatches_by_name"].values()) <= compiled["dispatches"]
    assert "warm_cache_first_call_s" in compiled and "loss_difference" not in hand


def test_the_loop_structures_are_the_shapes_keys_without_their_sizes():
    problems = list(load_dataset("builtin").problems)
    encoding = build_encoding(problems, min_count=GTSConfig.min_count)
    kept = [p for p in problems if expressible(encoding, p)]
    got = pass_compile.structures(kept, encoding, Namespace(batch_size=4, epochs=2))
    assert 1 <= got["loop_structures"] <= got["shapes"]
    assert sum(got["shapes_by_structure"].values()) == got["shapes"]
    assert all(name.startswith("W") and " rule " in name for name in got["shapes_by_structure"])
