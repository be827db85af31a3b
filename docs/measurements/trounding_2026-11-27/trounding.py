import sys, dataclasses
sys.path.insert(0, "/work/main")
from flows.environment import apply_defaults; apply_defaults()
import solvers.gts_graphs as g
unit = int(sys.argv[1])
g.WAVE_ROUNDINGS["coarse"] = dataclasses.replace(g.WAVE_ROUNDINGS["coarse"], encoder_tokens=unit)
from bench import graph_memory
sys.exit(graph_memory.main(["--shapes-only", "--step", "graphed-whole", "--datasets", sys.argv[2], "--hidden", "32", "--embedding", "16"]))
