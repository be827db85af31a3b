from tasks.operators.base import CandidateBatch
def reverse_operation(*a): return CandidateBatch()
