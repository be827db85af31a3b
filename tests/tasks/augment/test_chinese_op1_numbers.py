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


def test_a_donor_whose_own_text_is_broken_isop1_refused():
    # Math23K 11458: "一个数的(1/5)5比它的15%多50", a stray 5 the equation ignores
    op1_refused([HOST, zh("d", "一个数的(1/5)5比它的15%多50，这个数=？", "x=50/((1/5)-15%)", 1000)],
                "op1_donor_has_an_unused_quantity")
    # Math23K 10251: "一个数的(1/6)是8的，", a text that breaks off
    op1_refused([HOST, zh("d", "一个数的(1/6)是8的，这个数=．", "x=8/(1/6)", 48)], "op1_zh_number_donor_text_cut")


def test_a_donor_asking_for_something_of_the_number_never_donates():
    # "这个数的25%" is not the number: the question asks another amount, so the pair is never drawn
    batch, made = op1_pass([HOST, zh("d", "某数的40%是8，这个数的25%=．", "x=8/40%*25%", 5)])
    assert made == [] and batch.rejected["op1_no_statement_with_a_donor"] >= 1


def test_a_host_whose_next_clause_leans_on_the_statement_isop1_refused():
    host = zh("h", "甲数是78，正好是乙数的2倍，甲乙两数的和=．", "x=78+78/2", 117)
    op1_refused([host, DONOR], "op1_zh_next_clause_leans_on_the_statement")


def test_a_host_that_asks_its_own_number_or_never_uses_it_isop1_refused():
    op1_refused([zh("h", "甲数是35，乙数是甲数的2倍，甲数=？", "x=35", 35), DONOR], "op1_zh_number_host_asks_it")
    # "它" after the narrative could be its own numbers: the host must go on by the number's name
    op1_refused([zh("h", "甲数是35，乙数比它多5，乙数=？", "x=35+5", 40), DONOR], "op1_zh_number_not_used_after")


def test_a_result_named_on_both_sides_isop1_refused():
    host = zh("h", "甲数除以乙数，商是6，甲数是306，乙数=．", "x=306/6", 51)
    donor = zh("d", "一个数除以38，商是7，余数是23，这个数=．", "x=38*7+23", 289)
    op1_refused([host, donor], "op1_zh_number_result_said_twice")
    # a sum: the donor's "和是120" beside the host's "和=": two sums (和 as "and" is no result)
    host = zh("h", "一个加数是196，另一个加数是397，和=．", "x=196+397", 593)
    donor = zh("d", "一个数除以3.2后再加上40，和是120，这个数=？", "x=(120-40)*3.2", 256)
    op1_refused([host, donor], "op1_zh_number_result_said_twice")
    donor = zh("d", "一个数和它的(1/2)相差6，这个数=？", "x=6/(1-(1/2))", 12)
    assert len(verify(op1_pass([host, donor])[1])[0]) == 2


def test_a_word_that_only_contains_the_number_is_not_read_as_one():
    # 一个数学小组 is a maths group, not a number: no donor
    donor = zh("d", "一个数学小组有12人，又来了3人，这个数=．", "x=12+3", 15)
    batch, made = op1_pass([HOST, donor])
    assert made == []


def test_a_host_that_holds_its_numbers_to_whole_values_isop1_refused():
    host = zh("h", "甲、乙两数的最大公约数是3，最小公倍数是45，甲数是9，则乙数=多少：", "x=45*3/9", 15)
    op1_refused([host, DONOR], "op1_zh_number_host_needs_whole_numbers")


def test_an_operation_term_is_a_named_number_its_operation_goes_on_from():
    # "减数是354，差=？" never names 被减数 again, yet its difference is taken from it
    host = zh("h", "被减数是850，减数是354，差=？", "x=850-354", 496)
    batch, made = op1_pass([host, zh("d", "一个数的(1/2)是500，这个数=．", "x=500/(1/2)", 1000)])
    (new,) = verify(made)[0]
    assert new.text == "被减数的(1/2)是500，减数是354，差=？" and new.answer == Fraction(646)
    assert "number=一个数->被减数" in new.provenance.detail
    # a later reference is told as "这个加数", the introduction as the host names it
    host = zh("h", "一个加数是354，另一个加数是629，和=？", "x=354+629", 983)
    donor = zh("d", "一个数的(1/2)比这个数的(1/3)多100，这个数=？", "x=100/((1/2)-(1/3))", 600)
    texts = {c.text: c for c in verify(op1_pass([host, donor])[1])[0]}
    new = texts["一个加数的(1/2)比这个加数的(1/3)多100，另一个加数是629，和=？"]
    assert new.answer == Fraction(1229)
    assert texts["一个加数是354，另一个加数的(1/2)比这个加数的(1/3)多100，和=？"].answer == Fraction(954)


def test_a_factor_of_a_product_composes_a_common_factor_does_not():
    host = zh("h", "在乘法里，一个因数是49，积是931，另一个因数=．", "x=931/49", 19)
    made = verify(op1_pass([host, zh("d", "一个数的(1/2)是49，这个数=．", "x=49/(1/2)", 98)])[1])[0]
    assert {c.text: c.answer for c in made}["在乘法里，一个因数的(1/2)是49，积是931，另一个因数=．"] == Fraction(931, 98)
    host = zh("h", "12和18的公因数中，一个因数是6，它与另一个因数的积是18，另一个因数=．", "x=18/6", 3)
    op1_refused([host, DONOR], "op1_zh_number_host_needs_whole_numbers")


def test_a_term_host_going_on_by_a_pronoun_isop1_refused_and_a_heading_is_dropped():
    host = zh("h", "被减数是850，差比它少354，减数=？", "x=354", 354)
    op1_refused([host, DONOR], "op1_zh_number_not_used_after")
    host = zh("h", "被除数是18，除数是3，商=？", "x=18/3", 6)
    made = verify(op1_pass([host, zh("d", "文字题：一个数的(1/2)是9，这个数=？", "x=9/(1/2)", 18)])[1])[0]
    assert sorted((c.text, c.answer) for c in made) == [("被除数是18，除数的(1/2)是9，商=？", Fraction(1)),
                                                        ("被除数的(1/2)是9，除数是3，商=？", Fraction(6))]


def test_a_donor_whose_passive_would_write_another_term_isop1_refused():
    # "84被一个数除" told of the host's 减数 would read "84被减数除": the minuend
    host = zh("h", "在一个减法算式里，被减数是差的5倍，已知减数是16，被减数=．", "x=16/(5-1)*5", 20)
    op1_refused([host, zh("d", "84被一个数除，商和余数都是7，这个数=．", "x=(84-7)/7", 11)],
                "op1_zh_number_told_as_another_term")


def test_the_result_of_an_operation_is_a_named_number_too():
    # "两个因数的积是4.2" goes on through the factor it names; "其中一个因数是7" is a term host as well
    host = zh("h", "两个因数的积是4.2，其中一个因数是7，另一个因数=．", "x=4.2/7", 0.6)
    made = {c.text: c.answer for c in verify(op1_pass([host, DONOR])[1])[0]}
    assert made == {"两个因数的积的(5/8)是25，其中一个因数是7，另一个因数=．": Fraction(40, 7),
                    "两个因数的积是4.2，一个因数的(5/8)是25，另一个因数=．": Fraction(21, 200)}
    # a ratio's terms and its value; a later reference to the number is told as "这个比值"
    host = zh("h", "比的前项是20，比值是(5/8)，比的后项=．", "x=20/(5/8)", 32)
    donor = zh("d", "一个数的2倍比这个数多6，这个数=？", "x=6/(2-1)", 6)
    made = {c.text: c.answer for c in verify(op1_pass([host, donor])[1])[0]}
    assert made == {"比的前项的2倍比这个前项多6，比值是(5/8)，比的后项=．": Fraction(6) / Fraction(5, 8),
                    "比的前项是20，比值的2倍比这个比值多6，比的后项=．": Fraction(20, 6)}
    # the sum of 甲 and 乙 goes on through 甲数
    host = zh("h", "已知甲、乙两数的和是20，甲数是9.05，乙数=．", "x=20-9.05", 10.95)
    made = {c.text: c.answer for c in verify(op1_pass([host, DONOR])[1])[0]}
    assert made["甲、乙两数的和的(5/8)是25，甲数是9.05，乙数=．"] == Fraction(40) - Fraction("9.05")


def test_a_result_the_donor_names_as_well_isop1_refused():
    # told of the host's 积, "一个数与3的积是60" would read "积与3的积是60"
    host = zh("h", "积是968，一个乘数是8，另一个乘数=？", "x=968/8", 121)
    op1_refused([host, zh("d", "一个数与3的积是60，这个数=？", "x=60/3", 20)], "op1_zh_number_result_said_twice")


def test_a_next_clause_that_leaves_its_subject_to_the_statement_is_restated():
    # told another narrative, "甲数的(5/8)是25，比乙数多6" would leave the comparison to the (5/8): the host
    # says whose it is, the name written for the subject left out or for its 它
    host = zh("h", "甲数是30，比乙数多6，乙数=？", "x=30-6", 24)
    (new,) = verify(op1_pass([host, DONOR])[1])[0]
    assert new.text == "甲数的(5/8)是25，甲数比乙数多6，乙数=？" and new.answer == Fraction(34)
    host = zh("h", "甲数是105，它的12倍=．", "x=105*12", 1260)
    (new,) = verify(op1_pass([host, DONOR])[1])[0]
    assert new.text == "甲数的(5/8)是25，甲数的12倍=．" and new.answer == Fraction(480)
    host = zh("h", "被减数是850，它是减数的2倍，差=？", "x=850-850/2", 425)
    (new,) = verify(op1_pass([host, DONOR])[1])[0]
    assert new.text == "被减数的(5/8)是25，被减数是减数的2倍，差=？" and new.answer == Fraction(20)


def test_a_pronoun_on_both_sides_isop1_refused():
    # "它的前项的(1/5)比它的(1/4)少10": the second 它 could be the ratio or its term
    host = zh("h", "一个比的比值是(3/4)，它的前项是12，后项=．", "x=12/(3/4)", 16)
    op1_refused([host, zh("d", "一个数的(1/5)比它的(1/4)少10，这个数=？", "x=10/((1/4)-(1/5))", 200)],
                "op1_zh_number_pronoun_ambiguous")


def test_a_garbled_donor_isop1_refused_and_a_donors_last_connector_is_dropped():
    # Math23K's "一个数(1/3)比这个数的(1/4)多33": the number written against the name, no 的 to read it by
    op1_refused([HOST, zh("d", "一个数(1/3)比这个数的(1/4)多33，这个数=？", "x=33/((1/3)-(1/4))", 396)],
                "op1_zh_number_donor_text_garbled")
    # "那么，" led to the donor's own question: inside the host it would lead to nothing
    donor = zh("d", "一个数，减去它的20%，再加上5，还比原来小3．那么，这个数=．", "x=(5+3)/20%", 40)
    (new,) = verify(op1_pass([HOST, donor])[1])[0]
    assert new.text == "甲数，减去它的20%，再加上5，还比原来小3，乙数比甲数的3倍还多25，乙数=？"
    assert new.answer == Fraction(145)
