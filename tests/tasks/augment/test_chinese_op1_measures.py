"""Chinese operation 1 on a thing's measure (tasks/augment/zh_attributes.py): a donor asking a measure of a
thing ("小东体重多少千克", "这块花布长多少米") gives its narrative, told of the host's thing, to the host's statement
of that measure ("小刚的体重是28千克", "一根铁丝长120米"); the composed expression nests the donor's; every refusal
is counted by reason; the composition passes the consistency checks."""
from fractions import Fraction

from tasks.augment.base import AugmentConfig
from tasks.augment.consistency import check_candidates, consistency_reason
from tasks.augment.generate import generate_candidates
from tasks.augment.verify import verify
from tests.tasks.augment.zh_cases import op1_pass, op1_refused, zh


HOST = zh("h", "小刚的体重是28千克，小强的体重是小刚的2倍，小强的体重=多少千克？", "x=28*2", 56)
DONOR = zh("d", "小红体重40千克，比小东体重的(2/3)多10千克，小东体重=多少千克？", "x=(40-10)/(2/3)", 45)


def test_a_persons_measure_takes_the_narrative_told_of_the_hosts_person():
    batch, made = op1_pass([HOST, DONOR])
    (new,) = verify(made)[0]
    assert new.text == "小红体重40千克，比小刚体重的(2/3)多10千克，小强的体重是小刚的2倍，小强的体重=多少千克？"
    assert new.answer == Fraction(90)  # (40 - 10) / (2/3) * 2
    assert "小东" not in new.text and "attribute=小东重->小刚重" in new.provenance.detail
    assert consistency_reason(new, [HOST, DONOR]) is None


def test_a_thing_of_the_same_kind_is_told_with_the_hosts_classifier():
    host = zh("h", "一根铁丝长120米，第一次用去(1/4)，还剩多少米？", "x=120*(1-1/4)", 90)
    donor = zh("d", "一块白布长32米，一块花布的长是白布的3倍少14米，这块花布长多少米？", "x=32*3-14", 82)
    (new,) = verify(op1_pass([host, donor])[1])[0]
    assert new.text == "一块白布长32米，一根铁丝的长是白布的3倍少14米，第一次用去(1/4)，还剩多少米？"
    assert new.answer == Fraction(123, 2)  # 82 * (1 - 1/4)


def test_a_whole_round_keeps_the_composition_past_verification_and_the_checks():
    batch = generate_candidates([HOST, DONOR], AugmentConfig(operators=("geca_op1",)), 1)
    assert [c.text for c in batch.candidates] == [
        "小红体重40千克，比小刚体重的(2/3)多10千克，小强的体重是小刚的2倍，小强的体重=多少千克？"]
    kept, rejected = check_candidates(batch.candidates, {"h": HOST, "d": DONOR})
    assert len(kept) == 1 and not rejected


def test_a_donor_whose_story_changes_the_thing_isop1_refused():
    # the question asks the length before the cut; told into a host, the host would go on from the length after it
    host = zh("h", "一根铁丝长120米，李师傅把它围成一个正方形，这个正方形的边长是多少米？", "x=120/4", 30)
    donor = zh("d", "一根绳子用去(1/5)，还剩16米，这根绳子原来长多少米？", "x=16/(1-1/5)", 20)
    op1_refused([host, donor], "op1_zh_attr_donor_changes_it")


def test_things_of_another_kind_or_shapes_are_never_told_of_each_other():
    # a walk along a road is not one along a rope; a triangle's area is not a parallelogram's formula
    host = zh("h", "一条绳子长26米，第一次用去7米，还剩多少米？", "x=26-7", 19)
    road = zh("d", "甲乙两人从两地沿一条公路相向走来，甲每分钟走60米，乙每分钟走50米，3分钟后相遇，这条公路长多少米？",
              "x=(60+50)*3", 330)
    op1_refused([host, road], "op1_zh_attr_no_donor_of_its_kind")
    shape_host = zh("h", "一个平行四边形的面积是40平方厘米，它的高是5厘米，它的底=多少厘米．", "x=40/5", 8)
    shape_donor = zh("d", "一个平行四边形的底是8厘米，高是6厘米，这个平行四边形的面积=多少平方厘米．", "x=8*6", 48)
    op1_refused([shape_host, shape_donor], "op1_zh_attr_no_donor_of_its_kind")


def test_a_rename_that_would_merge_two_people_isop1_refused():
    # the donor's own 小刚 beside its 小东: told as the host's 小刚, two people would become one
    donor = zh("d", "小刚体重40千克，比小东体重的(2/3)多10千克，小东体重=多少千克？", "x=(40-10)/(2/3)", 45)
    op1_refused([HOST, donor], "op1_holder_differs")


def test_a_narrative_of_more_people_is_refused_where_the_host_counts_its_people():
    host = zh("h", "爸爸重75千克，小明重30千克，两人一共重多少千克？", "x=75+30", 105)
    op1_refused([host, DONOR], "op1_zh_attr_changes_who_is_counted")


def test_a_host_whose_next_clause_leans_on_the_statement_isop1_refused():
    # without the refusal: "小英身高140厘米，比小刚矮10厘米，比小芳高20厘米": who is taller than 小芳?
    host = zh("h", "小刚的身高是150厘米，比小芳高20厘米，小芳的身高=多少厘米．", "x=150-20", 130)
    donor = zh("d", "小英身高140厘米，比小明矮10厘米，小明身高多少厘米？", "x=140+10", 150)
    op1_refused([host, donor], "op1_zh_next_clause_leans_on_the_statement")


def test_a_narrative_of_more_people_is_refused_where_the_host_says_how_many_there_are():
    # "两个小伙伴" then the narrative's 小红 beside the host's 小强 and 小芳: three people where the text says two
    host = zh("h", "两个小伙伴称体重，小强重25.7千克，小芳比小强轻1.04千克，小芳的体重=多少千克？", "x=25.7-1.04", 24.66)
    donor = zh("d", "小红体重40千克，比小东体重的(2/3)多10千克，小东体重=多少千克？", "x=(40-10)/(2/3)", 45)
    op1_refused([host, donor], "op1_zh_attr_changes_who_is_counted")


def test_a_name_jieba_cuts_apart_is_still_a_person():
    # jieba reads 李红 as 李/nr + 红/a: the narrative still names a person, so the host's "两人" is ambiguous
    host = zh("h", "爸爸重75千克，小明重30千克，两人一共重多少千克？", "x=75+30", 105)
    donor = zh("d", "李红的体重是42千克，小东的体重是李红的(1/2)，小东的体重=多少千克？", "x=42*(1/2)", 21)
    op1_refused([host, donor], "op1_zh_attr_changes_who_is_counted")


def test_a_total_of_no_named_parts_after_a_narrative_of_another_thing_isop1_refused():
    # would "一共" count the narrative's shirt? the expression would not
    host = zh("h", "学校要为25名教师订购服装，一件上衣的售价是265元，裤子的售价是135元．购买这批服装一共要花多少元？",
              "x=(265+135)*25", 10000)
    donor = zh("d", "一件衬衫100元，一件毛衣的价格比它的2倍还多6元，毛衣的价格=多少元．", "x=100*2+6", 206)
    op1_refused([host, donor], "op1_zh_host_total_misses_a_part")


def test_a_narrative_giving_less_than_the_host_then_uses_isop1_refused():
    # the donor's rope is 42 m; the host then cuts 40 m and 16.8 m of it
    host = zh("h", "一根绳子长100米，第一次用去40米，第二次用去16.8米，还剩全长的百分之几？", "x=(100-40-16.8)/100", 0.432)
    donor = zh("d", "一根绳子的(6/7)是36米，这根绳子长多少米．", "x=36/(6/7)", 42)
    op1_refused([host, donor], "op1_zh_attr_host_uses_more_than_it_has")
    longer = zh("d", "一根绳子的(2/5)是36米，这根绳子长多少米．", "x=36/(2/5)", 90)
    assert op1_pass([host, longer])[1]  # 90 m gives both cuts
