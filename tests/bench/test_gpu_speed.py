"""bench/gpu_speed.py's operation counts on the CPU, on a tiny GTS: the steady-state step (the trainer's own
train_step after three steps) dispatches more than the loss alone (it adds clipping and Adam) and less than
the one-batch fit (which also builds the vocabularies, the model and the optimizer's state)."""
from argparse import Namespace

import torch

from bench import gpu_speed
from mwp.readers import load_dataset


def test_the_steady_state_step_counts_the_update_without_the_fits_setup():
    torch.manual_seed(0)
    train = list(load_dataset("builtin").problems)[:40]
    args = Namespace(hidden=16, embedding=8, batch_size=8)
    fit = gpu_speed.ops_per_batch(args, train, "cpu", "fp32")
    steady = gpu_speed.steady_step(args, train, "cpu", "fp32")
    parts = gpu_speed.part_ops(args, train, "cpu")
    assert parts["loss_fwd_bwd"] < steady["aten_ops"] < fit["aten_ops"]
    assert "kernels" not in steady  # kernels are counted on CUDA only
