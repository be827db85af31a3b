"""bench/batch_peak.py's live-tensor peak, read from torch.profiler's memory timeline, on allocations whose
sizes are known: two tensors alive together, then one freed before a third."""
import pytest
import torch

from bench.batch_peak import live_peak_mb


def test_the_live_peak_is_the_most_bytes_alive_at_once():
    def run():
        a = torch.ones(4 * 2**20 // 4)  # 4 MiB of float32
        b = torch.ones(8 * 2**20 // 4)  # 8 MiB: 12 alive together
        del a
        c = torch.ones(6 * 2**20 // 4)  # 14 alive: b and c
        return b.sum() + c.sum()

    peak, parts = live_peak_mb(run)
    assert peak == pytest.approx(14.0, abs=0.1)
    assert sum(parts.values()) == pytest.approx(peak, abs=0.2)
