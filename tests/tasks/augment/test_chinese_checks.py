"""Chinese operations 1 and 2 on hand-made problems: each widening of what operation 1 licenses and each
refusal that keeps compositions and swaps coherent, with the reason it is counted under."""
from fractions import Fraction

from mwp.expr import to_infix
from tasks.augment.base import AugmentConfig, clause_units
from tasks.augment.consistency import consistency_reason
from tasks.augment.geca import geca_op1, operation1
from tasks.augment.swap import Entity, pool_entities, swap_entity
from tasks.augment.verify import verify
from tests.tasks.augment.zh_cases import refusal, zh


def test_a_statement_whose_counted_entity_names_the_thing_composes_and_its_holder_may_recur():
    # "小刚有48张邮票" names no noun but 邮票 itself; 小刚 is in the narrative and in the host's next clause,
    # which is who both are about, not a second statement of one amount
    host = zh("h", "小刚有48张邮票，小军的张数比小刚的4倍少10张，小军比小刚多多少张？", "x=48*4-10-48", 134)
    donor = zh("d", "小芳有120张邮票，小刚的邮票是小芳的(2/5)，小刚有多少张邮票？", "x=120*(2/5)", 48)
    (new,) = geca_op1([host, donor], AugmentConfig(), 0, 1).candidates
    assert new.text == "小芳有120张邮票，小刚的邮票是小芳的(2/5)，小军的张数比小刚的4倍少10张，小军比小刚多多少张？"
    assert to_infix(new.expression) == "N0*N1*N2-N3-N0*N1"
    (checked,), _ = verify([new])
    assert checked.answer == 134 and consistency_reason(checked, [host, donor]) is None


def test_a_donor_from_another_class_is_refused():
    host = zh("h", "六年级(1)班有学生40人，平均每人捐了20元，全班共捐了多少元？", "x=40*20", 800)
    donor = zh("d", "5(1)班有女生22人，占全班人数的44%．全班有几人？", "x=22/0.44", 50)
    assert refusal(host, donor) == "op1_zh_donor_names_another_group"


def test_a_narrative_that_fixes_the_whole_is_refused_where_the_host_relates_its_other_part():
    # 50 students of whom 60% are girls fixes the boys at 20; the host then says boys are 1/5 fewer than girls
    host = zh("h", "某班有女生30人，男生比女生少(1/5)，男生有多少人？", "x=30*(1-(1/5))", 24)
    donor = zh("d", "某班共有学生50人，其中女生占60%，女生有多少人？", "x=50*0.6", 30)
    assert refusal(host, donor) == "op1_zh_donor_fixes_the_whole"


def test_a_second_price_change_after_the_narrative_is_refused():
    host = zh("h", "一种商品原价是200元，现价比原来降低了20%，现价多少元？", "x=200*(1-0.2)", 160)
    donor = zh("d", "一件商品降价40%后售价120元，这件商品原价多少元？", "x=120/(1-0.4)", 200)
    assert refusal(host, donor) == "op1_zh_two_price_changes"


def test_a_total_question_is_refused_when_the_narrative_adds_a_part_it_would_not_count():
    host = zh("h", "梨树17棵，苹果树是梨树的3倍，一共有果树多少棵？", "x=17+17*3", 68)
    donor = zh("d", "梨树比桃树多60棵，桃树是梨树的40%．梨树多少棵？", "x=60/(1-0.4)", 100)
    assert refusal(host, donor) == "op1_zh_host_total_misses_a_part"


def test_a_narrative_with_its_own_reader_is_refused_where_the_host_names_another():
    host = zh("h", "一本故事书有150页，小红每天看7页，看了9天，还剩多少页？", "x=150-7*9", 87)
    donor = zh("d", "小明读一本故事书，第一天读了60页，第二天读了90页，这本故事书有多少页？", "x=60+90", 150)
    assert refusal(host, donor) == "op1_zh_donor_names_someone_else"


def test_a_composition_that_makes_a_whole_count_fractional_is_refused():
    host = zh("h", "3米长的绳子，截成(1/4)米长的小段，可以截成多少．", "x=3/(1/4)", 12)
    donor = zh("d", "一条绳子剪去(2/5)，还剩2米，这条绳子长多少米？", "x=2/(1-(2/5))", Fraction(10, 3))
    new = operation1(host, clause_units(host), 0, donor, clause_units(donor), "zh", 1)
    (checked,), _ = verify([new])
    assert checked.answer == Fraction(40, 3)
    assert consistency_reason(checked, [host, donor]) == "check_count_not_whole"


def test_an_environment_any_counted_thing_fills_licenses_no_swap():
    seats = zh("a", "电影院楼上有200个座位，楼下有800个座位，一共有多少个座位？", "x=200+800", 1000)
    cups = zh("b", "柜子里有20个杯子，又买来8个杯子，一共有多少个杯子？", "x=20+8", 28)
    assert "杯子" not in pool_entities([seats, cups]).alternatives.get(("noun", "座位"), set())


def test_chinese_swaps_that_would_read_wrong_are_refused():
    groups = zh("g", "有一箱矿泉水，平均分给7个小组，每组分到4瓶，这箱矿泉水一共有多少瓶？", "x=7*4", 28)
    assert swap_entity(groups, Entity("noun", "小组"), Entity("noun", "小队"), "geca_op2", "", 1) == \
        "swap_mention_bound_to_its_words"  # 每组 would still count the groups
    pupils = zh("p", "有5个同学投沙包，每人投2个，一共投了多少个沙包？", "x=5*2", 10)
    assert swap_entity(pupils, Entity("noun", "同学"), Entity("noun", "篮球"), "geca_op2", "", 1) == \
        "swap_kind_differs"
    balls = zh("b", "车间生产了240个乒乓球，装了8箱，每箱5盒．每盒装几个乒乓球？", "x=240/(8*5)", 6)
    assert swap_entity(balls, Entity("noun", "乒乓球"), Entity("noun", "铅笔盒"), "geca_op2", "", 1) == \
        "swap_classifier_does_not_fit"  # boxes of pencil boxes
    pears = zh("f", "商店运来14筐梨，还运来16筐苹果，一共运来多少筐？", "x=14+16", 30)
    assert swap_entity(pears, Entity("noun", "梨"), Entity("noun", "水果"), "geca_op2", "", 1) == "swap_general_noun"
    star = zh("s", "在“我是小明星”演讲活动中，已有18名学生演讲完，还有12名学生，共有多少名学生？", "x=18+12", 30)
    assert swap_entity(star, Entity("name", "小明"), Entity("name", "小红"), "geca_op2", "", 1,
                       {"小明": "m", "小红": "f"}) == "swap_mention_bound_to_its_words"
    fine = zh("o", "有5个同学投沙包，每人投2个，一共投了多少个沙包？", "x=5*2", 10)
    assert swap_entity(fine, Entity("noun", "同学"), Entity("noun", "学生"), "geca_op2", "", 1).text == \
        "有5个学生投沙包，每人投2个，一共投了多少个沙包？"


def test_a_narrative_that_removes_a_share_is_refused_before_the_host_removes_another():
    host = zh("h", "一根铁丝长5米，第一次用去总长度的20%，第二次用去(1/2)米，还剩下多少米？", "x=5*(1-0.2)-(1/2)", Fraction(7, 2))
    donor = zh("d", "一根铁丝截去它的20%后还剩4米，这根铁丝长多少米？", "x=4/(1-0.2)", 5)
    assert refusal(host, donor) == "op1_zh_two_removals"  # 20% of which length?


def test_a_clause_without_a_subject_is_refused_after_a_narrative_that_brings_another_thing():
    host = zh("h", "商店有苹果280千克，上午卖出132千克，这时商店有苹果多少千克？", "x=280-132", 148)
    donor = zh("d", "商店里有梨390千克，比苹果少40%，商店里有苹果多少千克？", "x=390/(1-0.4)", 650)
    assert refusal(host, donor) == "op1_zh_next_clause_subject_ambiguous"  # sold 132 kg of pears or apples?
    alone = zh("a", "商店里运来8箱苹果，每箱重35千克，商店里有苹果多少千克？", "x=8*35", 280)
    assert refusal(host, alone) is None  # the narrative speaks of apples only


def test_a_narrative_about_another_school_or_a_class_in_place_of_a_team_is_refused():
    host = zh("h", "君武小学有学生1458人，女生人数是男生人数的(4/5)，君武小学男生有多少人？", "x=1458/(1+(4/5))", 810)
    donor = zh("d", "希望小学有6个年级，平均每个年级有243人，希望小学有学生多少人？", "x=6*243", 1458)
    assert refusal(host, donor) == "op1_zh_donor_names_another_group"
    team = zh("t", "某校合唱队有学生48人，女生人数和男生人数的比是5：3，合唱队有女生多少人？", "x=48*5/(5+3)", 30)
    pupils = zh("p", "三年级(1)班有46人，其中21人是女生，三年级(1)班有男生多少人？", "x=46-21", 25)
    assert refusal(team, pupils) == "op1_zh_donor_names_another_group"


def test_chinese_swaps_keep_plants_colours_and_labels_apart():
    orchard = zh("o", "果园里有21棵杏树，27棵梨树，一共有多少棵？", "x=21+27", 48)
    assert swap_entity(orchard, Entity("noun", "梨树"), Entity("noun", "苹果"), "geca_op2", "", 1) == "swap_kind_differs"
    assert swap_entity(orchard, Entity("noun", "梨树"), Entity("noun", "桃树"), "geca_op2", "", 1).text == \
        "果园里有21棵杏树，27棵桃树，一共有多少棵？"
    pears = zh("p", "一个果园种了360棵梨树，平均每棵梨树收梨40千克，一共收梨多少千克？", "x=360*40", 14400)
    assert swap_entity(pears, Entity("noun", "梨树"), Entity("noun", "桃树"), "geca_op2", "", 1) == \
        "swap_mention_bound_to_its_words"  # peach trees that bear pears
    balls = zh("b", "口袋中有15个黑球，13个白球和10个红球，一共有多少个球？", "x=15+13+10", 38)
    assert swap_entity(balls, Entity("noun", "红球"), Entity("noun", "乒乓球"), "geca_op2", "", 1) == "swap_kind_differs"
    classes = zh("c", "学校把240棵树苗分给甲、乙、丙3个班级，丙班分到60棵，甲、乙两个班级一共分到多少棵？", "x=240-60", 180)
    assert swap_entity(classes, Entity("noun", "班级"), Entity("noun", "小队"), "geca_op2", "", 1) == \
        "swap_mention_bound_to_its_words"  # 丙班 would stay a class


def test_a_name_jieba_cuts_apart_still_counts_as_someone_else():
    host = zh("h", "一本故事书有150页，王丽每天看7页，看了9天，还剩多少页？", "x=150-7*9", 87)
    donor = zh("d", "小明读一本故事书，第一天读了60页，第二天读了90页，这本故事书有多少页？", "x=60+90", 150)
    assert refusal(host, donor) == "op1_zh_donor_names_someone_else"


def test_a_host_whose_next_clause_brings_in_its_own_actors_takes_no_narrative_with_its_own():
    host = zh("h", "甲乙两地相距300千米，两辆汽车从两地相对开出，甲车每小时行40千米，乙车每小时行20千米，几小时后相遇？",
              "x=300/(40+20)", 5)
    donor = zh("d", "修一段公路，平均每天修20千米，修12天后还剩60千米，这段公路长多少千米？", "x=20*12+60", 300)
    assert refusal(host, donor) == "op1_zh_next_clause_introduces_another_thing"


def test_a_name_with_a_title_is_not_swapped_where_the_title_stands_alone():
    p = zh("t", "李老师从邮局汇款500元，汇费是汇款数的1%，老师应付多少元汇费？", "x=500*0.01", 5)
    assert swap_entity(p, Entity("name", "李老师"), Entity("name", "王老师"), "geca_op2", "", 1) == \
        "swap_mention_bound_to_its_words"


def test_a_name_swap_keeps_the_role_its_title_gives():
    p = zh("r", "王老师要批改48篇作文，批改了4小时后，还剩12篇，平均每小时批改几篇？", "x=(48-12)/4", 9)
    assert swap_entity(p, Entity("name", "王老师"), Entity("name", "小强"), "geca_op2", "", 1) == "swap_name_role_differs"
    assert swap_entity(p, Entity("name", "王老师"), Entity("name", "赵老师"), "geca_op2", "", 1).text == \
        "赵老师要批改48篇作文，批改了4小时后，还剩12篇，平均每小时批改几篇？"
    flowers = zh("f", "平均每人做小红花11朵，12人做小红花多少朵？", "x=11*12", 132)
    assert swap_entity(flowers, Entity("name", "小红"), Entity("name", "小伟"), "geca_op2", "", 1) == \
        "swap_mention_bound_to_its_words"


def test_a_subject_ending_like_a_school_is_no_place():
    from tasks.augment import zh as reader
    # 数学 ends in 学 as 小学 does, but names a subject: a 数学小组's story is in its 小组, not a place called 数学
    assert reader.places(tuple("数学小组有8人")) == {"小组"}
    assert reader.places(tuple("学院有学生300人，车间有工人50人")) == {"学院", "车间"}
    assert reader.places(tuple("一辆客车上有40人")) == {"客车"}  # a vehicle is a setting of its own
