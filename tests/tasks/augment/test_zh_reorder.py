"""Chinese problem reordering on hand-made problems: the question first after 已知, quantities re-indexed
by their new order, and every refusal reason."""
import pytest

from mwp.expr import to_infix
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.consistency import consistency_reason
from tasks.augment.entities import question_entity
from tasks.augment.generate import generate_candidates
from tasks.augment.reorder import reorder
from tasks.augment.verify import rejection_reason, verify


def zh(pid, text, equation, answer):
    return build_problem(pid, text, equation, answer, "toy", "zh")


def test_the_question_moves_first_and_its_demonstrative_points_at_the_statements_noun():
    p = zh("p", "一条小路长1000米，每天修50米，这条小路要修多少天？", "x=1000/50", 20)
    out = reorder(p, "given_that", 1)
    assert out.text == "小路要修多少天？已知一条小路长1000米，每天修50米。"
    assert to_infix(out.expression) == "N0/N1" and list(out.values) == [1000, 50]
    assert out.provenance.detail == "zh_given" and out.provenance.parents == ("p",)
    assert rejection_reason(out) is None and question_entity(out) == question_entity(p) == "天"


def test_a_condition_of_the_question_moves_with_it_and_the_slots_are_renumbered():
    p = zh("p", "一条路长1000米，如果每天修50米，需要多少天修完？", "x=1000/50", 20)
    out = reorder(p, "if_then", 1)
    assert out.text == "如果每天修50米，需要多少天修完？已知一条路长1000米。"
    # 50 is now the first quantity, 1000 the second: the same division reads N1 / N0
    assert list(out.values) == [50, 1000] and to_infix(out.expression) == "N1/N0"
    assert rejection_reason(out) is None and out.answer == 0  # the answer is computed by verification


def test_the_time_of_the_question_moves_with_it():
    p = zh("p", "甲、乙两地相距960千米，两车同时相对开出，每小时共行80千米，开出3小时后，两车相距多少千米？",
           "x=960-80*3", 720)
    out = reorder(p, "given_that", 1)
    assert out.text == "开出3小时后，两车相距多少千米？已知甲、乙两地相距960千米，两车同时相对开出，每小时共行80千米。"
    assert list(out.values) == [3, 960, 80] and to_infix(out.expression) == "N1-N2*N0"


def test_a_question_may_open_with_still_or_a_rate():
    p = zh("p", "小明看一本120页的故事书，已经看了100页，还剩多少页没看？", "x=120-100", 20)
    assert reorder(p, "given_that", 1).text == "还剩多少页没看？已知小明看一本120页的故事书，已经看了100页。"
    p = zh("p", "315个同学分成5队，每队平均分成7组．每组有多少个同学？", "x=315/5/7", 9)
    assert reorder(p, "given_that", 1).text == "每组有多少个同学？已知315个同学分成5队，每队平均分成7组。"
    p = zh("p", "妈妈今年38岁，比小芳大29岁，小芳今年多少岁．", "x=38-29", 9)
    assert reorder(p, "given_that", 1).text == "小芳今年多少岁？已知妈妈今年38岁，比小芳大29岁。"


def test_a_piece_of_the_question_cut_off_by_a_comma_moves_with_it_but_a_unit_per_hour_does_not():
    p = zh("p", "汽车往返一趟，共行驶20千米的上坡路，上坡路占全程的(1/4)．A，B两城相距多少千米？", "x=20/(1/4)/2", 40)
    assert reorder(p, "given_that", 1).text == \
        "A，B两城相距多少千米？已知汽车往返一趟，共行驶20千米的上坡路，上坡路占全程的(1/4)。"
    p = zh("p", "飞机的速度是760千米/小时，每天训练3小时，每天飞行多少千米？", "x=760*3", 2280)
    assert reorder(p, "given_that", 1).text == "每天飞行多少千米？已知飞机的速度是760千米/小时，每天训练3小时。"


def test_a_connective_clause_after_a_quote_moves_with_the_question_and_is_dropped():
    p = zh("p", "小芳说：“我看了全书的(1/3)，还有80页没看．”那么，小芳已经看了多少页？", "x=80/(1-(1/3))*(1/3)", 40)
    assert reorder(p, "given_that", 1).text == "小芳已经看了多少页？已知小芳说：“我看了全书的(1/3)，还有80页没看”。"


def test_the_place_of_the_question_moves_with_it():
    p = zh("p", "水是由氢和氧按1：8的重量比化合而成的，72千克水中，含氧多少千克？", "x=72*(8/(1+8))", 64)
    assert reorder(p, "given_that", 1).text == "72千克水中，含氧多少千克？已知水是由氢和氧按1：8的重量比化合而成的。"


def test_a_classifier_jieba_joins_to_the_demonstrative_goes_with_it():
    p = zh("p", "这栋教学楼有3层，每层有6间教室，这栋教学楼一共有多少间教室？", "x=3*6", 18)
    assert reorder(p, "given_that", 1).text == "教学楼一共有多少间教室？已知这栋教学楼有3层，每层有6间教室。"


def test_he_becomes_the_one_name_and_a_leading_connective_is_dropped():
    p = zh("p", "小明有5个苹果，吃了2个苹果，那么他还剩多少个苹果？", "x=5-2", 3)
    out = reorder(p, "given_that", 1)
    assert out.text == "小明还剩多少个苹果？已知小明有5个苹果，吃了2个苹果。"
    (checked,), rejected = verify([out])
    assert not rejected and checked.answer == 3 and consistency_reason(checked, [p]) is None


def test_a_condition_in_its_own_sentence_with_its_consequent_stays_a_statement():
    # the last statement opens with 若干 ("some"), not 若 ("if"): no condition is left behind
    p = zh("p", "一条路长1000米，如果每天修50米，20天可以修完．若干天后还剩300米．这条路已经修了多少米？", "x=1000-300", 700)
    assert reorder(p, "given_that", 1).text == \
        "路已经修了多少米？已知一条路长1000米，如果每天修50米，20天可以修完．若干天后还剩300米。"


def test_statements_that_say_something_of_their_own_stay_before_the_moved_question():
    # a condition with its consequent, a basis clause with its own content, another piece of the thing
    p = zh("p", "小明带的钱如果买3张光盘多5.82元，如果买8张光盘少2.93元．每张光盘多少元？", "x=(5.82+2.93)/(8-3)", 1.75)
    assert reorder(p, "given_that", 1).text == "每张光盘多少元？已知小明带的钱如果买3张光盘多5.82元，如果买8张光盘少2.93元。"
    p = zh("p", "一件衣服进价150元，按售价的0.6售出仍赚30元，售价为多少元？", "x=(150+30)/0.6", 300)
    assert reorder(p, "given_that", 1).text == "售价为多少元？已知一件衣服进价150元，按售价的0.6售出仍赚30元。"
    p = zh("p", "把一根钢管锯成两段，一段长4米，重33.2千克，另一段长3米，这两段钢管共重多少千克？", "x=33.2/4*(4+3)", 58.1)
    assert reorder(p, "given_that", 1).text == "两段钢管共重多少千克？已知把一根钢管锯成两段，一段长4米，重33.2千克，另一段长3米。"


def test_a_demonstrative_before_a_time_stays():
    p = zh("p", "李红家上月用电45千瓦时，这个月节约了20%，李红家这个月用电多少千瓦时？", "x=45*(1-20%)", 36)
    assert reorder(p, "given_that", 1).text == "李红家这个月用电多少千瓦时？已知李红家上月用电45千瓦时，这个月节约了20%。"
    p = zh("p", "这个年级有3个班，每班40人，这个年级有学生多少人？", "x=3*40", 120)  # 年级 is a thing, not a year
    assert reorder(p, "given_that", 1).text == "年级有学生多少人？已知这个年级有3个班，每班40人。"


def test_a_comparison_that_names_both_sides_moves():
    p = zh("p", "学校有男生300人，女生比男生多20人，女生有多少人？", "x=300+20", 320)
    assert reorder(p, "given_that", 1).text == "女生有多少人？已知学校有男生300人，女生比男生多20人。"


@pytest.mark.parametrize("text, equation, answer, reason", [
    ("小明有5个苹果，小红有3个苹果，他们一共有多少个苹果？", "x=5+3", 8, "reorder_zh_question_pronoun_plural"),
    ("小明有5个苹果，小红有3个苹果，他一共有多少个苹果？", "x=5+3", 8, "reorder_zh_question_pronoun_unresolved"),
    ("一条路长100米，已经修了40米，剩下的要修多少米？", "x=100-40", 60, "reorder_zh_question_leans_on_statement"),
    ("一桶油重20千克，第一天用去5千克，第二天又用去多少千克才用完？", "x=20-5", 15,
     "reorder_zh_question_leans_on_statement"),
    ("男生有30人，女生有20人，其中女生占多少人？", "x=20", 20, "reorder_zh_question_leans_on_statement"),
    ("一条路长100米，已经修了40米，这时还剩多少米？", "x=100-40", 60, "reorder_zh_question_demonstrative"),
    ("一条路长100米，已经修了40米，这些要修多少米？", "x=100-40", 60, "reorder_zh_question_demonstrative"),
    ("甲数是20，乙数是5，是乙数的几倍？", "x=20/5", 4, "reorder_zh_question_without_subject"),
    ("女生有20人，男生比女生多5人，比女生多多少人？", "x=5", 5, "reorder_zh_question_without_subject"),
    ("一条路长100米，每天修20米，需要5天修完。", "x=100/20", 5, "reorder_zh_question_not_found"),
    ("3个苹果和5个苹果一共有多少个苹果？", "x=3+5", 8, "reorder_zh_no_statement"),
    ("3辆卡车共运480箱，照这样计算，再增加4辆卡车，一共可以运多少箱？", "x=480/3*(3+4)", 1120,
     "reorder_zh_question_scoped_by_the_clause_before"),
    ("火车运268吨，汽车比火车少运多少吨？多少．", "x=268", 268, "reorder_zh_two_questions"),
    ("要生产1107个，前6天共生产432个，余下的要在5天内完成，平均每天生产多少个？", "x=(1107-432)/5", 135,
     "reorder_zh_question_scoped_by_the_clause_before"),
    ("小明有5个苹果，吃了2个，还剩多少个？（用算式表示）", "x=5-2", 3, "reorder_zh_question_not_last"),
    # the clause before a condition that moves sets the scope too: "照这样计算。" would be left at the end
    ("5条小船可以坐25人，照这样计算，如果小船的数量增加3倍，可以坐多少人？", "x=25/5*(5+5*3)", 100,
     "reorder_zh_question_scoped_by_the_clause_before"),
    ("一辆汽车5小时行驶了620千米，如果再行驶744千米．这辆汽车一共需要用多少小时？", "x=744/(620/5)+5", 11,
     "reorder_zh_condition_left_behind"),
    ("李大伯的医疗费用共计4200元，报销率是70%，按条款规定，李大伯可以报销多少元？", "x=4200*70%", 2940,
     "reorder_zh_question_framed_by_the_clause_before"),
    ("工厂要加工600个零件，已经加工了420个，为了超产20%，还需要加工多少个零件？", "x=600*(1+20%)-420", 300,
     "reorder_zh_question_framed_by_the_clause_before"),
    ("有两捆铁丝，其中一捆铁丝长8米，重400千克，另一捆铁丝重20千克，这捆铁丝长多少米？", "x=20/(400/8)", 0.4,
     "reorder_zh_question_demonstrative_picks_one"),
])
def test_each_refusal_has_its_counted_reason(text, equation, answer, reason):
    assert reorder(zh("p", text, equation, answer), "given_that", 1) == reason


def test_a_round_counts_refusals_and_keeps_only_checked_reorderings():
    pool = [zh("a", "小明有5个苹果，吃了2个苹果，那么他还剩多少个苹果？", "x=5-2", 3),
            zh("b", "小明有5个苹果，小红有3个苹果，他们一共有多少个苹果？", "x=5+3", 8)]
    batch = generate_candidates(pool, AugmentConfig(operators=("problem_reordering",)), 1)
    assert [c.text for c in batch.candidates] == ["小明还剩多少个苹果？已知小明有5个苹果，吃了2个苹果。"]
    assert batch.candidates[0].answer == 3
    assert batch.rejected == {"reorder_zh_question_pronoun_plural": 1}


def test_a_reordered_problem_is_read_at_its_question():
    out = reorder(zh("p", "小明有5个苹果，吃了2个苹果，小明还剩多少个苹果？", "x=5-2", 3), "given_that", 1)
    assert out.text.startswith("小明还剩多少个苹果？")
    assert question_entity(out) == "个:苹果"


def test_operation_1_leaves_a_reordered_problem_alone():
    a = zh("a", "小明有5个苹果，吃了2个苹果，小明还剩多少个苹果？", "x=5-2", 3)
    b = zh("b", "小红有8个苹果，小红又买了4个苹果，小红一共有多少个苹果？", "x=8+4", 12)
    pool = [reorder(p, "given_that", 1) for p in (a, b)]
    (checked_a, checked_b), _ = verify(pool)
    batch = generate_candidates([checked_a, checked_b], AugmentConfig(operators=("geca_op1",)), 2)
    assert batch.candidates == [] and batch.rejected == {"op1_question_not_last": 2}  # refused once each
