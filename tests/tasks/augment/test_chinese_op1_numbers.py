"""Chinese operation 1 on named numbers (tasks/augment/zh_numbers.py): a donor asking for a number itself
("这个数=？") gives its narrative, told of the host's number, to the host's bare value statement ("甲数是35");
the composed expression nests the donor's; every refusal is counted by reason; the consistency checks pass
the composition without an entity reading."""
from fractions import Fraction

from mwp.expr import to_prefix
from tasks.augment.base import AugmentConfig
from tasks.augment.consistency import check_candidates, consistency_reason
from tasks.augment.generate import generate_candidates
from tasks.augment.verify import verify
from tests.tasks.augment.zh_cases import op1_pass, op1_refused, zh


HOST = zh("h", "甲数是35，乙数比甲数的3倍还多25，乙数=？", "x=35*3+25", 130)
DONOR = zh("d", "一个数的(5/8)是25，这个数=．", "x=25/(5/8)", 40)


def test_a_number_donor_replaces_the_hosts_value_statement_told_of_its_number():
    batch, made = op1_pass([HOST, DONOR])
    kept, _ = verify(made)
    (new,) = kept
    assert new.text == "甲数的(5/8)是25，乙数比甲数的3倍还多25，乙数=？"
    assert " ".join(to_prefix(new.expression)) == "+ * / N1 N0 N2 N3" and new.answer == Fraction(145)
    assert "一个数" not in new.text and "这个数" not in new.text  # no trace of the donor's number
    assert "number=一个数->甲数" in new.provenance.detail
    assert consistency_reason(new, [HOST, DONOR]) is None


def test_a_named_donor_and_its_pronoun_are_told_of_the_hosts_number():
    host = zh("h", "甲数的(1/6)与乙数的(1/5)相等，如果乙数是60，则甲数=．", "x=60*(1/5)/(1/6)", 72)
    donor = zh("d", "甲数减去它的75%等于56，甲数是多少？", "x=56/(1-75%)", 224)
    batch, made = op1_pass([host, donor])
    (new,) = verify(made)[0]
    assert new.text == "甲数的(1/6)与乙数的(1/5)相等，乙数减去它的75%等于56，则甲数=．"
    assert new.answer == Fraction(224) * Fraction(1, 5) / Fraction(1, 6)


def test_a_whole_round_keeps_the_composition_past_verification_and_the_checks():
    batch = generate_candidates([HOST, DONOR], AugmentConfig(operators=("geca_op1",)), 1)
    assert [c.text for c in batch.candidates] == ["甲数的(5/8)是25，乙数比甲数的3倍还多25，乙数=？"]
    kept, rejected = check_candidates(batch.candidates, {"h": HOST, "d": DONOR})
    assert len(kept) == 1 and not rejected


def test_a_donor_speaking_of_a_second_number_isop1_refused():
    op1_refused([HOST, zh("d", "两个数的和是60，其中一个数是25，另一个数=．", "x=60-25", 35)],
             "op1_zh_number_donor_has_another_number")
    op1_refused([HOST, zh("d", "甲数的(4/5)与乙数的(3/4)相等，乙数是24，甲数=．", "x=24*(3/4)/(4/5)", 22.5)],
             "op1_zh_number_donor_has_another_number")
    op1_refused([HOST, zh("d", "一个两位数的十位数字是3，个位数字是5，这个数=．", "x=3*10+5", 35)],
             "op1_zh_number_donor_has_another_number")
    # a bare 甲 is a second number: told of the host's 甲数, "甲是120，比甲数的(1/3)少30" would merge them
    op1_refused([HOST, zh("d", "甲是120，比乙数的(1/3)少30，乙数=．", "x=(120+30)/(1/3)", 450)],
             "op1_zh_number_donor_has_another_number")
    # Math23K 21423's own "某的": told of 甲数, the 某 would be left as someone else
    op1_refused([HOST, zh("d", "某的(2/3)比一个数的70%少100，求这个数．", "x=100/(70%-(2/3))", 3000)],
             "op1_zh_number_donor_has_another_number")


def test_a_donor_asking_for_something_of_the_number_never_donates():
    # "这个数的25%" is not the number: the question asks another amount, so the pair is never drawn
    batch, made = op1_pass([HOST, zh("d", "某数的40%是8，这个数的25%=．", "x=8/40%*25%", 5)])
    assert made == [] and batch.rejected["op1_no_statement_with_a_donor"] >= 1


def test_a_host_whose_next_clause_leans_on_the_statement_isop1_refused():
    host = zh("h", "甲数是78，是乙数的2倍，甲乙两数的和=．", "x=78+78/2", 117)
    op1_refused([host, DONOR], "op1_zh_next_clause_leans_on_the_statement")


def test_a_host_that_asks_its_own_number_or_never_uses_it_isop1_refused():
    op1_refused([zh("h", "甲数是35，乙数是甲数的2倍，甲数=？", "x=35", 35), DONOR], "op1_zh_number_host_asks_it")
    # "它" after the narrative could be its own numbers: the host must go on by the number's name
    op1_refused([zh("h", "甲数是35，乙数比它多5，乙数=？", "x=35+5", 40), DONOR], "op1_zh_number_not_used_after")


def test_a_result_named_on_both_sides_isop1_refused():
    host = zh("h", "甲数除以乙数，商是6，甲数是306，乙数=．", "x=306/6", 51)
    donor = zh("d", "一个数除以38，商是7，余数是23，这个数=．", "x=38*7+23", 289)
    op1_refused([host, donor], "op1_zh_number_result_said_twice")


def test_a_word_that_only_contains_the_number_is_not_read_as_one():
    # 一个数学小组 is a maths group, not a number: no donor
    donor = zh("d", "一个数学小组有12人，又来了3人，这个数=．", "x=12+3", 15)
    batch, made = op1_pass([HOST, donor])
    assert made == []


def test_a_host_that_holds_its_numbers_to_whole_values_isop1_refused():
    host = zh("h", "甲、乙两数的最大公约数是3，最小公倍数是45，甲数是9，则乙数=多少：", "x=45*3/9", 15)
    op1_refused([host, DONOR], "op1_zh_number_host_needs_whole_numbers")
