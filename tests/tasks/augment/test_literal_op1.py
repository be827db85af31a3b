"""geca_op1_literal (tasks/augment/literal.py): operation 1 matched on the counted entity alone composes
the SD kind of part that geca_op1 refuses (a host whose question is about someone its statement does not
name), with the composed expression and answer, named as its own operator; refusals are counted."""
from fractions import Fraction

from mwp.expr import to_prefix
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.geca import geca_op1
from tasks.augment.literal import geca_op1_literal
from tasks.augment.registry import get_operator
from tasks.augment.verify import verify

CFG = AugmentConfig(per_problem_cap=4)


def _pool():
    # an SD-style training part: its statement names Keith, its question Sophia
    host = build_problem("host", "Keith has saved 30 dollars. Mark gives Sophia 5 dollars. "
                         "How many dollars does Sophia have now?", "x=30+5", 35, "toy")
    donor = build_problem("donor", "Sophia saves 3 dollars every week. Sophia saves for 4 weeks. "
                          "How many dollars does Sophia save?", "x=3*4", 12, "toy")
    lone = build_problem("lone", "A yard is 6 meters long and 2 meters wide. What is its area?", "x=6*2", 12, "toy")
    return [host, donor, lone]


def test_the_literal_operator_composes_what_geca_op1_refuses():
    pool = _pool()
    strict = geca_op1(pool, CFG, 1, 1)
    assert [c for c in strict.candidates if c.provenance.parents == ("host", "donor")] == []
    batch = geca_op1_literal(pool, CFG, 1, 1)
    composed = {c.provenance.detail.split()[0]: c for c in batch.candidates if c.provenance.parents == ("host", "donor")}
    assert sorted(composed) == ["clause=0", "clause=1"]  # both statements count dollars
    (made, into_second), _ = verify([composed["clause=0"], composed["clause=1"]])
    assert made.text == ("Sophia saves 3 dollars every week. Sophia saves for 4 weeks. Mark gives Sophia 5 dollars. "
                         "How many dollars does Sophia have now?")
    assert to_prefix(made.expression) == ["+", "*", "N0", "N1", "N2"] and made.answer == Fraction(17)
    assert made.provenance.operator == "geca_op1_literal" and "literal" in made.provenance.detail
    assert to_prefix(into_second.expression) == ["+", "N0", "*", "N1", "N2"] and into_second.answer == Fraction(42)


def test_hosts_without_a_donor_are_counted_and_the_draw_is_seeded():
    pool = _pool()
    first, again = geca_op1_literal(pool, CFG, 7, 1), geca_op1_literal(pool, CFG, 7, 1)
    assert [c.text for c in first.candidates] == [c.text for c in again.candidates]
    # "lone" states meters, which no question asks for; "donor" states dollars, which "host" asks for
    assert first.rejected["op1_literal_no_donor"] >= 1
    assert get_operator("geca_op1_literal") is geca_op1_literal
