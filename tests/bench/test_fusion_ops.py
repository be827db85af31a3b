"""bench/fusion_ops.py on a tiny GTS: a captured pass counted both ways computes one loss, and fused it dispatches
fewer kernel-launching operations, some of them generated kernels."""
import pytest
import torch

from bench import fusion_ops
from mwp.readers import load_dataset
from solvers.fusion import fusion_unavailable
from solvers.gts import GTSConfig, GTSModel
from solvers.vocab import build_encoding


@pytest.mark.skipif(fusion_unavailable(torch.device("cpu")) is not None, reason="TorchInductor needs a C++ compiler")
@pytest.mark.parametrize("step", ["graphed", "graphed-whole"])
def test_a_pass_counted_both_ways_computes_one_loss_with_fewer_dispatches_fused(step):
    problems = list(load_dataset("builtin").problems)[:8]
    encoding = build_encoding(problems)
    torch.manual_seed(0)
    model = GTSModel(GTSConfig(embedding_size=8, hidden_size=16), encoding).train()
    batch = encoding.batch(problems)
    plain, fused = (fusion_ops.pass_counts(model, batch, 8, step, name) for name in ("none", "inductor"))
    assert plain["shape"] == fused["shape"]
    assert fused["loss"] == pytest.approx(plain["loss"], rel=1e-5)  # same dropout masks, float32 rounding apart
    assert plain["generated"] == 0 < fused["generated"]
    assert fused["dispatches"] < plain["dispatches"]
