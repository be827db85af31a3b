"""solvers/dropout.py: nn.Dropout's behaviour with the faster CPU mask."""
from __future__ import annotations

import pytest
import torch

from solvers.dropout import Dropout, keep_mask


@pytest.mark.parametrize("p", [0.5, 0.2, 0.9])
def test_drops_a_fraction_p_and_scales_the_rest_by_the_exact_keep_probability(p):
    torch.manual_seed(0)
    x = torch.ones(400, 1001)  # an element count that is not a multiple of 4
    y = Dropout(p).train()(x)
    dropped = (y == 0).float().mean().item()
    assert abs(dropped - p) < 0.005
    keep = 1 - round(p * 65536) / 65536
    kept = y[y != 0]
    assert torch.allclose(kept, torch.full_like(kept, 1 / keep))
    assert abs(y.mean().item() - 1.0) < 0.02  # unbiased


def test_every_16_bit_lane_of_the_random_words_is_uniform():
    """Each 64-bit draw serves four elements; none of the four positions may be biased (a generator
    that leaves the top bit zero would never drop the fourth element at p = 0.5)."""
    torch.manual_seed(1)
    mask, keep = keep_mask((200_000,), 0.5)
    assert keep == 0.5
    for lane in range(4):
        assert abs(mask[lane::4].float().mean().item() - 0.5) < 0.01


def test_backward_passes_the_gradient_through_kept_elements_only():
    torch.manual_seed(2)
    x = torch.randn(50, 30, requires_grad=True)
    y = Dropout(0.5).train()(x)
    y.backward(torch.full_like(y, 3.0))
    kept = y != 0
    assert torch.equal(x.grad != 0, kept)
    assert torch.allclose(x.grad[kept], torch.full_like(x.grad[kept], 6.0))


def test_seeded_repeatable_identity_in_eval_and_at_p_zero():
    x = torch.randn(20, 20)
    torch.manual_seed(3)
    a = Dropout(0.5).train()(x)
    torch.manual_seed(3)
    b = Dropout(0.5).train()(x)
    assert torch.equal(a, b)
    assert Dropout(0.5).eval()(x) is x
    assert Dropout(0.0).train()(x) is x
    with pytest.raises(ValueError, match="dropout probability"):
        Dropout(1.0)
