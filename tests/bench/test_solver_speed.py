"""bench/solver_speed.py's matmul yardstick: the full size where its products fit the time budget, a smaller power
of two where they would not (bfloat16 on a CPU without bfloat16 instructions takes minutes at 2048 x 2048)."""
from bench.solver_speed import matmul_flops


def test_the_matmul_yardstick_keeps_its_size_within_budget_and_shrinks_it_beyond():
    flops, n = matmul_flops(size=512, repeats=1, budget_s=1e9)
    assert n == 512 and flops > 0
    assert matmul_flops(size=128, repeats=1, budget_s=1e9)[1] == 128  # below the first probe's 256: the size itself
    assert matmul_flops(size=2048, repeats=1, budget_s=0.0)[1] == 256  # no time at all: the first probe's size

