"""Chinese operators on hand-made problems: jieba's words read into entities, a composition with the
right expression, a swap that leaves no trace, and text the tags cannot read counted, never a crash."""
from fractions import Fraction

from mwp.expr import to_infix
from mwp.problem import build_problem
from tasks.augment import zh
from tasks.augment.base import AugmentConfig, clause_units
from tasks.augment.consistency import consistency_reason
from tasks.augment.entities import read
from tasks.augment.generate import generate_candidates
from tasks.augment.geca import geca_op1, operation1
from tasks.augment.swap import Entity, pool_entities, swap_entity
from tasks.augment.verify import verify


def apples():
    host = build_problem("h", "小明有5个苹果，每个苹果卖2元，这些苹果能卖多少元？", "x=5*2", 10, "toy", "zh")
    donor = build_problem("d", "小明摘了3个苹果，妈妈又给他4个苹果，小明一共有多少个苹果？", "x=3+4", 7, "toy", "zh")
    return host, donor


def test_numbers_stay_whole_and_entities_are_read_from_the_tags():
    p = build_problem("p", "王老师有(1/6)千克柴油，用了15天，每天用多少千克？", "x=(1/6)/15", Fraction(1, 90), "toy", "zh")
    ws = zh.words(tuple(p.tokens))
    assert ("(1/6)", "m") in [(w.text, w.flag) for w in ws]  # jieba alone would split the fraction
    reading = read(p)
    assert reading.quantity_entities == ("千克:柴油", "天")
    assert reading.question_entity == "千克:柴油"  # the bare unit resolved to the one noun it counts
    assert reading.clause_holders[0] == "王老师"
    host, donor = apples()
    assert read(host).quantity_entities == ("个:苹果", "元") and read(host).question_entity == "元"
    assert read(donor).question_entity == "个:苹果" and read(donor).question_holder == "小明"


def test_a_chinese_composition_has_the_right_expression():
    host, donor = apples()
    new = operation1(host, clause_units(host), 0, donor, clause_units(donor), "zh", 1)
    assert new.text == "小明摘了3个苹果，妈妈又给他4个苹果，每个苹果卖2元，这些苹果能卖多少元？"
    assert to_infix(new.expression) == "(N0+N1)*N2"
    (checked,), rejected = verify([new])
    assert checked.answer == 14 and not rejected
    assert consistency_reason(checked, [host, donor]) is None


def test_the_operator_composes_chinese_when_the_question_asks_what_the_statement_states():
    host = build_problem("h", "学校图书室有故事书120本，科技书比故事书少30本，科技书有多少本？", "x=120-30", 90, "toy", "zh")
    donor = build_problem("d", "学校图书室原有故事书80本，又买来40本，学校图书室有故事书多少本？", "x=80+40", 120, "toy",
                          "zh")
    batch = geca_op1([host, donor], AugmentConfig(), 0, 1)
    (new,) = batch.candidates
    assert new.text == "学校图书室原有故事书80本，又买来40本，科技书比故事书少30本，科技书有多少本？"
    assert to_infix(new.expression) == "N0+N1-N2"
    (checked,), _ = verify([new])
    assert checked.answer == 90 and consistency_reason(checked, [host, donor]) is None


def test_chinese_compositions_are_refused_where_the_statement_leans_on_its_context():
    # "小明有5个苹果" names no thing besides the counted entity, and "每个苹果卖2元" leans on it
    host, donor = apples()
    assert geca_op1([host, donor], AugmentConfig(), 0, 1).candidates == []
    # "长1000米" names no thing: the length of a road is not the length of a vegetable plot
    road = build_problem("r", "修一条公路，长1000米，甲队已经修了(2/5)，乙队修多少米？", "x=1000*(1-(2/5))", 600, "toy", "zh")
    plot = build_problem("p", "一个长方形菜地，面积是68.4平方米，宽是7.2米，长多少米？", "x=68.4/7.2", Fraction(19, 2),
                         "toy", "zh")
    batch = geca_op1([road, plot], AugmentConfig(), 0, 1)
    assert batch.candidates == [] and batch.rejected["op1_zh_statement_names_no_thing"] >= 1


def test_a_chinese_swap_leaves_no_trace_of_the_old_entity():
    p = build_problem("p", "小明有5个苹果，吃了2个苹果，小明还剩多少个苹果？", "x=5-2", 3, "toy", "zh")
    new = swap_entity(p, Entity("noun", "苹果"), Entity("noun", "橘子"), "geca_op2", "noun: 苹果 -> 橘子", 1)
    assert new.text == "小明有5个橘子，吃了2个橘子，小明还剩多少个橘子？"
    (new,), _ = verify([new])
    assert new.answer == 3 and consistency_reason(new, [p]) is None
    name = swap_entity(p, Entity("name", "小明"), Entity("name", "小刚"), "geca_op2", "name: 小明 -> 小刚", 1,
                       {"小明": "m", "小刚": "m"})
    assert name.text == "小刚有5个苹果，吃了2个苹果，小刚还剩多少个苹果？"
    tree = build_problem("t", "苹果树上有5个苹果，摘了2个苹果，还剩多少个苹果？", "x=5-2", 3, "toy", "zh")
    assert swap_entity(tree, Entity("noun", "苹果"), Entity("noun", "橘子"), "geca_op2", "", 1) == \
        "swap_mention_bound_to_its_words"  # 苹果树 would keep the old entity


def test_the_op2_operator_swaps_chinese_nouns_the_pool_shows_in_one_environment():
    a = build_problem("a", "小明有5个苹果，吃了2个苹果，小明还剩多少个苹果？", "x=5-2", 3, "toy", "zh")
    b = build_problem("b", "小明有8个橘子，吃了3个橘子，还剩多少个橘子？", "x=8-3", 5, "toy", "zh")
    entities = pool_entities([a, b])
    assert "橘子" in entities.alternatives[("noun", "苹果")]
    batch = generate_candidates([a, b], AugmentConfig(operators=("geca_op2",)), 1)
    swapped = [c.text for c in batch.candidates if c.provenance.parents == ("a",)]
    assert "小明有5个橘子，吃了2个橘子，小明还剩多少个橘子？" in swapped


def test_chinese_text_the_tags_cannot_read_is_a_counted_rejection():
    odd = [build_problem("x1", "5，3，？", "x=5+3", 8, "toy", "zh"),
           build_problem("x2", "甲乙丙丁5戊己庚3辛壬癸？", "x=5+3", 8, "toy", "zh"),
           build_problem("x3", "有5个，又有3个，共多少？", "x=5+3", 8, "toy", "zh")]
    ops = ("geca_op1", "geca_op2", "entity_substitution", "problem_reordering")
    batch = generate_candidates(odd, AugmentConfig(operators=ops), 1)
    assert batch.candidates == []
    assert sum(batch.rejected.values()) >= len(odd)
    assert batch.rejected == {"op1_host_question_not_about_its_narrative": 3, "op2_no_alternative": 3,
                              "entity_none_replaceable": 3, "reorder_zh_question_not_found": 2,
                              "check_question_unreadable": 1}  # "共多少？已知有5个，又有3个。" counts nothing named


def test_jieba_keeps_its_cache_in_the_user_cache_or_temp_directory_not_a_shared_path():
    from pathlib import Path
    import tempfile

    where = Path(zh.tagger().tokenizer.tmp_dir)
    assert where.name in ("jieba",) or where.name.startswith("compaug-jieba-")
    assert where != Path(tempfile.gettempdir())  # never the shared /tmp/jieba.cache


def test_a_chinese_noun_swap_must_fit_the_classifiers_the_pool_counts_it_with():
    p = build_problem("p", "明明买了6本练习本，兰兰买了3本练习本，明明比兰兰多买了多少本练习本？", "x=6-3", 3, "toy", "zh")
    box = Entity("noun", "铅笔盒", classifiers=frozenset({"个"}))
    assert swap_entity(p, Entity("noun", "练习本"), box, "geca_op2", "", 1) == "swap_classifier_does_not_fit"
    book = Entity("noun", "作业本", classifiers=frozenset({"本"}))
    assert swap_entity(p, Entity("noun", "练习本"), book, "geca_op2", "", 1).text == \
        "明明买了6本作业本，兰兰买了3本作业本，明明比兰兰多买了多少本作业本？"


def test_the_xiao_names_jieba_reads_as_nouns_are_holders_and_a_second_child_is_refused():
    # jieba alone: 小兵/n, 小巧/n, 小胖/z, and "小张和小李" cut as 小张/n 和 小/a 李/nr
    names = [w.text for w in zh.words(tuple("小张和小李比小兵、小巧、小胖多")) if zh.is_name(w)]
    assert names == ["小张", "小李", "小兵", "小巧", "小胖"]
    assert not any(zh.is_name(w) for w in zh.words(tuple("小金鱼有160尾")))  # 小金鱼 stays a goldfish
    # the audit's wrong kept composition (Math23K 13592 + 11616): the donor's 爸爸 is 小兵's father, and the
    # host's 小东 would grow to his height
    host = build_problem("13592", "小东的身高116厘米，爸爸的身高176厘米，小东再长多少厘米才和爸爸一样高？", "x=176-116", 60,
                         "toy", "zh")
    donor = build_problem("11616", "小兵和爸爸一起到健身房量了身高．量得小兵的身高是140厘米，比爸爸要矮(1/5)，"
                          "爸爸的身高=多少厘米？", "x=140/(1-(1/5))", 175, "toy", "zh")
    batch = geca_op1([host, donor], AugmentConfig(), 0, 1)
    assert not batch.candidates and batch.rejected["op1_zh_donor_names_someone_else"] == 1
