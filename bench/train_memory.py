"""Resident memory of one GTS training epoch on MAWPS, batch by batch, in this process alone.

Prints the current and the peak resident set size every few batches, so a peak can be told apart
from a batch's activations (one forward+backward of the longest batch, measured first in a fresh
model) and from memory the allocator keeps after tensors are freed (``--malloc-trim`` returns it to
the system after every batch, glibc only). One process per precision: a peak RSS is per process.

    .venv/bin/python bench/train_memory.py --precision fp32
    .venv/bin/python bench/train_memory.py --precision bf16
    .venv/bin/python bench/train_memory.py --precision bf16 --malloc-trim
"""
from __future__ import annotations

import argparse
import ctypes
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import torch  # noqa: E402
from mwp.readers import load_dataset  # noqa: E402
from solver_speed import split  # noqa: E402
from solvers.gts import GTSConfig, GTSModel  # noqa: E402
from solvers.base import TrainConfig  # noqa: E402
from solvers.trainer import _train_epoch, autocast_dtype, make_optimizer  # noqa: E402
from solvers.vocab import build_encoding  # noqa: E402


def current_mb() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() // 2**20


def peak_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--every", type=int, default=6, help="print every this many batches")
    ap.add_argument("--malloc-trim", action="store_true", help="call glibc's malloc_trim(0) after every batch")
    ap.add_argument("--trim-every-epoch", action="store_true", help="call glibc's malloc_trim(0) after every epoch")
    ap.add_argument("--epochs", type=int, default=1, help="epochs in a row (memory the allocator keeps can grow over epochs)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim if args.malloc_trim or args.trim_every_epoch else None
    trim = malloc_trim if args.malloc_trim else None
    train, _, _ = split(load_dataset("mawps", args.data).problems, 0, 0.2, 0.1)
    cfg = GTSConfig(embedding_size=128, hidden_size=args.hidden)
    encoding = build_encoding(train, min_count=cfg.min_count)
    torch.manual_seed(0)
    model = GTSModel(cfg, encoding)
    model.train()
    autocast = dict(device_type="cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16")
    print(f"{args.precision}, hidden {args.hidden}, {len(train)} problems; model built: {current_mb()} MB", flush=True)

    longest = sorted(train, key=lambda p: -len(p.text.split()))[: args.batch_size]
    before = current_mb()
    with torch.autocast(**autocast):
        loss = model.loss(encoding.batch(longest))
    loss.backward()
    print(f"longest batch, one forward+backward: peak {peak_mb()} MB (from {before} MB)", flush=True)
    model.zero_grad(set_to_none=True)
    del loss

    # The trainer's own epoch (clipping, autocast, Adam as in train_model), watched through its
    # progress-bar hook, which it calls after every batch.
    config = TrainConfig(epochs=1, batch_size=args.batch_size, seed=0, progress=False, precision=args.precision)
    device = torch.device("cpu")
    optimizer = make_optimizer(model, config, device)
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    watch = _Watch(args.every, trim)
    rng, amp_dtype = random.Random(0), autocast_dtype(device, config.precision)
    for epoch in range(1, args.epochs + 1):
        start, watch.batches = time.process_time(), 0
        _train_epoch(model, encoding, train, config, optimizer, scaler, rng, device, amp_dtype, watch)
        print(f"epoch{'' if args.epochs == 1 else f' {epoch}'} ({watch.batches} batches, "
              f"{time.process_time() - start:.1f} CPU s): peak {peak_mb()} MB, current {current_mb()} MB", flush=True)
        if args.trim_every_epoch:
            malloc_trim(0)
            print(f"  after malloc_trim: current {current_mb()} MB", flush=True)


class _Watch:
    """Stands in for the trainer's progress bar: after every batch, trims (optionally) and prints RSS."""

    def __init__(self, every: int, trim):
        self.every, self.trim, self.batches = every, trim, 0

    def set_postfix(self, **_):
        pass

    def update(self):
        self.batches += 1
        if self.trim is not None:
            self.trim(0)
        if self.batches % self.every == 0:
            print(f"batch {self.batches}: current {current_mb()} MB, peak {peak_mb()} MB", flush=True)

if __name__ == "__main__":
    main()
