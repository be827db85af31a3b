"""Chinese operation 1 on hand-made problems: a determiner reads the same whether jieba tags it as a
numeral, a pronoun or cuts it in two ("一根绳子" and "这根绳子" say one thing), and a donor whose narrative
changes the thing it is asked about (cuts it, reads it) is refused before a host that goes on from it."""
from fractions import Fraction

from mwp.expr import to_infix
from tasks.augment import zh as zh_reader
from tasks.augment.base import AugmentConfig
from tasks.augment.consistency import consistency_reason
from tasks.augment.geca import geca_op1
from tasks.augment.verify import verify
from tests.tasks.augment.zh_cases import refusal, zh


def says(text):
    tokens = tuple(text)
    return zh_reader.predicate(tokens, 0, len(tokens), None)


def test_this_and_one_with_a_classifier_say_the_same_however_jieba_tags_them():
    # jieba: 一条/m, 这/r + 条/n; 一根/m, 这根/mq; 一本/m, 这本/r
    assert says("一条公路长") == says("这条公路长") == {"#条", "公路", "长"}
    assert says("一根绳子长") == says("这根绳子长") == {"#根", "绳子", "长"}
    assert says("一本故事书有") == says("这本故事书有") == {"#本", "故事书", "有"}
    assert says("这个果园有桃树") == {"果园", "有", "桃树"}  # 这个 determines the orchard, not the trees counted


def test_a_bare_noun_composes_with_a_determined_one_but_two_classifiers_are_two_things():
    host = zh("h", "3米长的绳子，截成(1/4)米长的小段，可以截成多少段？", "x=3/(1/4)", 12)
    donor = zh("d", "一根绳子的(6/7)是36米，这根绳子长多少米？", "x=36/(6/7)", 42)
    (new,) = geca_op1([host, donor], AugmentConfig(), 0, 1).candidates
    assert new.text == "一根绳子的(6/7)是36米，截成(1/4)米长的小段，可以截成多少段？"
    pens = zh("p", "一支钢笔12元，买5支要多少元？", "x=12*5", 60)
    box = zh("b", "买3箱钢笔用了360元，这箱钢笔多少元？", "x=360/3", 120)
    assert refusal(pens, box) == "op1_zh_determiner_differs"


def test_a_question_about_this_rope_composes_with_a_statement_about_one_rope():
    host = zh("h", "一根绳子长25米，剪去了它的(2/5)，还剩多少米？", "x=25*(1-(2/5))", 15)
    donor = zh("d", "一根绳子的(6/7)是36米，这根绳子长多少米？", "x=36/(6/7)", 42)
    (new,) = geca_op1([host, donor], AugmentConfig(), 0, 1).candidates
    assert new.text == "一根绳子的(6/7)是36米，剪去了它的(2/5)，还剩多少米？"
    assert to_infix(new.expression) == "N1/N0*(1-N2)"
    (checked,), _ = verify([new])
    assert checked.answer == Fraction(126, 5) and consistency_reason(checked, [host, donor]) is None  # 42 * 3/5


def test_a_donor_asking_the_length_before_its_cuts_is_refused():
    # the narrative leaves 16 m of the rope; the host's 20 m is what its story starts from
    host = zh("h", "一根绳子长20米，剪了2次，平均每段长多少米？", "x=20/(2+1)", "20/3")
    asked_original = zh("d", "一根绳子用去它的20%，还剩16米，这根绳子原来长多少米？", "x=16/(1-0.2)", 20)
    assert refusal(host, asked_original) == "op1_zh_donor_asks_the_amount_before_its_story"
    asked_whole = zh("d2", "一根绳子用去(1/5)，还剩(3/5)米，这根绳子长多少米？", "x=(3/5)/(1-(1/5))", "3/4")
    assert refusal(host, asked_whole) == "op1_zh_donor_asks_the_amount_before_its_story"


def test_a_donor_asking_what_is_left_after_its_cuts_may_compose():
    host = zh("h", "一根绳子长20米，剪了2次，平均每段长多少米？", "x=20/(2+1)", "20/3")
    donor = zh("d", "一根绳子长30米，用去了12米，这根绳子还剩多少米？", "x=30-12", 18)
    assert refusal(host, donor) is None


def test_two_stories_that_read_one_book_are_refused():
    # 小明's reading fixes the book at 180 pages; the host's 小明 then reads "the" rest of it again
    host = zh("h", "一本故事书有80页，小明每天看5页，看了7天，还剩多少页没看？", "x=80-5*7", 45)
    donor = zh("d", "小明读一本故事书，已经读了80页，已读页数和未读页数的比是4：5．这本故事书有多少页？",
               "x=80/(4/(4+5))", 180)
    assert refusal(host, donor) == "op1_zh_two_stories_act_on_it"
    # told by 王强 (jieba cuts 王/强; read as one person since session 26), the pair is refused as naming someone else
    other = zh("o", "王强读一本故事书，已经读了80页，已读页数和未读页数的比是4：5．这本故事书有多少页？",
               "x=80/(4/(4+5))", 180)
    assert refusal(host, other) == "op1_zh_donor_names_someone_else"
    # a narrative that only says what the book is composes
    static = zh("s", "一本故事书的(3/4)是90页，这本故事书有多少页？", "x=90/(3/4)", 120)
    assert refusal(host, static) is None


def test_a_donor_whose_story_states_its_start_asks_what_the_story_leaves_and_may_compose():
    # 280 kg, sold 132, bought 145: "商店有苹果多少千克" asks the 293 kg the story leaves, which the host goes on from
    host = zh("h", "商店有苹果300千克，梨比苹果多25%，商店有梨多少千克？", "x=300*(1+0.25)", 375)
    donor = zh("d", "商店有苹果280千克，上午卖出132千克，下午购进145千克，商店有苹果多少千克？", "x=280-132+145", 293)
    assert refusal(host, donor) is None
    unknown_start = zh("u", "有一筐苹果，卖出(3/5)后，还剩12千克，这筐苹果有多少千克？", "x=12/(1-(3/5))", 30)
    assert refusal(host, unknown_start) == "op1_zh_donor_asks_the_amount_before_its_story"


def test_a_relative_of_the_narratives_child_is_refused_beside_the_hosts_own_narrator():
    host = zh("h", "爸爸的体重是60千克，我的体重是爸爸的(2/3)，比妹妹重10千克．妹妹的体重=多少千克？", "x=60*(2/3)-10", 30)
    donor = zh("d", "小红的体重是26千克，爸爸的体重比她的3倍少4千克．爸爸的体重=多少千克？", "x=26*3-4", 74)
    assert refusal(host, donor) == "op1_zh_kin_of_someone_else"
    # where the host names nobody else, the narrative's child is whose father it is
    alone = zh("a", "爸爸的体重是60千克，血液约占体重的(1/13)，爸爸的血液约重多少千克？", "x=60*(1/13)", "60/13")
    assert refusal(alone, donor) is None


def test_a_mark_up_in_the_narrative_is_a_price_change_before_the_hosts_own():
    host = zh("h", "一台电脑原价6500元，现0.95出售，现价比原价便宜多少元？", "x=6500*(1-0.95)", 325)
    donor = zh("d", "买一台电脑，分期付款要加价6%，现金购买按原价的98%成交，分期付款比现金购买多付600元．这台电脑原价=多少元？",
               "x=600/(1+0.06-0.98)", 7500)
    assert refusal(host, donor) == "op1_zh_two_price_changes"
