"""One paper-size GTS forward+backward of the longest MAWPS batch: the peak of live tensor bytes (what
the code holds, from torch.profiler's memory timeline) beside the process's peak resident set (what the
allocator took from the system), for one code tree or several side by side.

Two trees can hold the same tensors at their peak and still peak at different resident sizes: glibc's
malloc keeps freed blocks in its heap and, by default, raises its mmap threshold as large blocks are
freed, so where a pass's large temporaries land depends on the order of allocations. ``--mmap-threshold``
fixes the threshold (``MALLOC_MMAP_THRESHOLD_``): blocks at least that large are mapped and unmapped one
by one, so the resident peak follows the live bytes.

    git worktree add --detach /tmp/old c2e9a31
    .venv/bin/python bench/batch_peak.py --trees /tmp/old . --repeats 2
    .venv/bin/python bench/batch_peak.py --trees /tmp/old . --repeats 2 --mmap-threshold 65536
    .venv/bin/python bench/batch_peak.py --trees /tmp/old . --live        # + the profiler's live-tensor peak

Each tree and repeat runs in its own child process (a peak RSS is per process), in turn A B A B ...
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from memory_phases import current_mb, peak_mb  # noqa: E402

MARK = "PEAK "


def live_peak_mb(run) -> tuple[float, dict[str, float]]:
    """Peak live tensor MB of ``run()`` on the CPU and its make-up by the profiler's categories."""
    import numpy as np
    from torch.profiler import ProfilerActivity, profile
    from torch.profiler._memory_profiler import _CATEGORY_TO_INDEX, MemoryProfileTimeline

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True, with_stack=True) as prof:
        run()
    _, sizes = MemoryProfileTimeline(prof._memory_profile())._coalesce_timeline("cpu")
    sizes = np.asarray(sizes, dtype=np.float64)  # column 0: unknown; column i + 1: category i
    at = int(sizes.sum(1).argmax())
    names = {i + 1: (c.name if c is not None else "UNKNOWN") for c, i in _CATEGORY_TO_INDEX.items()}
    parts = {names.get(j, "other"): round(sizes[at, j] / 2**20, 1) for j in range(sizes.shape[1]) if sizes[at, j]}
    return round(sizes[at].sum() / 2**20, 1), parts


def child(tree: Path, data: str, live: bool) -> dict:
    """Runs inside the child: the tree's own GTS, the longest batch of MAWPS's seed-0 training side."""
    sys.path[:0] = [str(tree), str(tree / "bench")]
    import torch
    from mwp.readers import load_dataset
    from solver_speed import split
    from solvers.gts import GTSConfig, GTSModel
    from solvers.vocab import build_encoding

    torch.set_num_threads(1)
    train, _, _ = split(load_dataset("mawps", data).problems, 0, 0.2, 0.1)
    cfg = GTSConfig(embedding_size=128, hidden_size=512)
    encoding = build_encoding(train, min_count=cfg.min_count)
    torch.manual_seed(0)
    model = GTSModel(cfg, encoding)
    model.train()
    batch = encoding.batch(sorted(train, key=lambda p: -len(p.text.split()))[:64])

    def run():
        model.loss(batch).backward()
        model.zero_grad(set_to_none=True)

    before = current_mb()
    run()
    out = {"before_mb": before, "peak_mb": peak_mb(), "after_mb": current_mb()}
    if live:  # after the measured pass: the profiler's own memory must not count in the resident peak
        out["live_peak_mb"], out["live_parts_mb"] = live_peak_mb(run)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trees", type=Path, nargs="+", default=[ROOT])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--data", default=str(ROOT.parent / "shared/data/mawps/MAWPS.json"))
    ap.add_argument("--mmap-threshold", type=int, help="bytes: MALLOC_MMAP_THRESHOLD_ for the children")
    ap.add_argument("--live", action="store_true", help="also the profiler's peak of live tensor bytes (slow)")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(MARK + json.dumps(child(args.child.resolve(), args.data, args.live)), flush=True)
        return
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if args.mmap_threshold:
        env["MALLOC_MMAP_THRESHOLD_"] = str(args.mmap_threshold)
    print(f"allocator: {'MALLOC_MMAP_THRESHOLD_=' + str(args.mmap_threshold) if args.mmap_threshold else 'glibc default'}")
    for repeat in range(1, args.repeats + 1):
        for tree in args.trees:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(tree), "--data", args.data]
            proc = subprocess.run(cmd + (["--live"] if args.live else []), env=env, capture_output=True, text=True)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)), None)
            if line is None:
                raise SystemExit(f"{tree}: the child failed:\n{proc.stderr[-2000:]}")
            r = json.loads(line[len(MARK):])
            live = f", live tensors peak {r['live_peak_mb']} MB {r['live_parts_mb']}" if "live_peak_mb" in r else ""
            print(f"repeat {repeat} {tree}: resident {r['before_mb']} -> peak {r['peak_mb']} MB "
                  f"(after {r['after_mb']} MB){live}", flush=True)


if __name__ == "__main__":
    main()
