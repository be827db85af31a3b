"""What a solver class says its model can do (solvers/torch_solver.py's flags, read by LoopParams to refuse a
training step or bucketing before any work) is what its model class has, for every registered solver."""
import typing

import pytest

from solvers.registry import SOLVERS, solver_class
from solvers.torch_solver import TorchSolver


@pytest.mark.parametrize("name", SOLVERS)
def test_each_solvers_flags_match_the_methods_of_the_model_it_builds(name):
    cls = solver_class(name)
    if not issubclass(cls, TorchSolver):  # an ensemble of other solvers (mathen): it trains none of these itself
        assert not getattr(cls, "shape_fixed_steps", False) and not getattr(cls, "counts_decoder_steps", False)
        return
    model = typing.get_type_hints(cls.build_model)["return"]
    assert cls.shape_fixed_steps == hasattr(model, "shape_fixed_loss")
    assert cls.counts_decoder_steps == hasattr(model, "decoder_steps")


def test_gts_takes_every_step_and_bert_gts_counts_its_steps():
    assert solver_class("gts").shape_fixed_steps and solver_class("gts").counts_decoder_steps
    assert not solver_class("bert-gts").shape_fixed_steps and solver_class("bert-gts").counts_decoder_steps
