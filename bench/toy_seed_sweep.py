"""How the toy trainings of tests/solvers/test_cuda.py end at other seeds on the CPU: per solver and seed,
the training loss's fall (first epoch / last) and how many of the 8 gold expressions beam 3 returns (the
8 toys decoded alone). A CUDA run is another draw of these chaotic trainings than the CPU's seed 0, so
test_cuda.py asks only what every seed tried here gave (docs/solvers.md, "CUDA test failures").

    PYTHONPATH=$PWD .venv/bin/python bench/toy_seed_sweep.py --solvers gts,convs2s,bert-gts --seeds 0,1,2,3,4
    PYTHONPATH=$PWD .venv/bin/python bench/toy_seed_sweep.py --solvers gts --seeds 0,1,2 --epochs 100
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests/solvers")]

import torch  # noqa: E402

from baseline_toys import GOLD, toy_problems  # noqa: E402
from solvers.base import TrainConfig  # noqa: E402
from solvers.registry import build_solver  # noqa: E402
from test_baselines import SPECS, Spec  # noqa: E402

GTS_TOY = Spec("gts", dict(embedding_size=32, hidden_size=64, dropout=0.0), epochs=60, lr=1e-2)  # test_cuda's before


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--solvers", default="gts,convs2s,bert-gts")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--epochs", type=int, help="instead of the spec's")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (a CUDA run is test_cuda.py's draw)")
    ap.add_argument("--precision", default="fp32", help="fp32 or auto (bf16/fp16 autocast on CUDA)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    specs = {s.name: s for s in SPECS + [GTS_TOY]}
    for name in args.solvers.split(","):
        spec = specs[name]
        epochs = args.epochs or spec.epochs
        for seed in (int(s) for s in args.seeds.split(",")):
            started = time.perf_counter()
            solver = build_solver(spec.name, device=args.device, **spec.tiny)
            config = TrainConfig(epochs=epochs, batch_size=8, lr=spec.lr, lr_halving_epochs=100, eval_every=epochs,
                                 beam_size=3, seed=seed, device=args.device, progress=False, precision=args.precision)
            losses = [e.train_loss for e in solver.fit(toy_problems(), toy_problems(), config).epochs]
            gold = sum(list(p.tokens) == g for p, g in zip(solver.predict(toy_problems(), beam_size=3), GOLD))
            print(f"{name} {args.device} {args.precision} {epochs} epochs seed {seed}: loss {losses[0]:.3f} -> {losses[-1]:.4f} "
                  f"(down {losses[0] / losses[-1]:.1f}x), gold {gold}/8, {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
