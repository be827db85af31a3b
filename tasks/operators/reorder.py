from tasks.operators.base import CandidateBatch
def problem_reordering(*a): return CandidateBatch()
