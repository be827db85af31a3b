"""Why a Chinese composition (operation 1) is refused, if it is: Chinese clauses often leave their subject
to the clause before, so a statement may be replaced by another problem's narrative only where the text
shows that both are about one thing (geca.py calls this after the entity and predicate have matched)."""
from __future__ import annotations

import re
from typing import Sequence

from mwp.problem import Problem
from tasks.augment import zh
from tasks.augment.base import Units, clause_units
from tasks.augment.entities import read
from tasks.augment.zh_self import statement_unrelated

# Draws per host (times the per-problem cap). Most Chinese (statement, donor) pairs are refused by the
# checks below, so a host tries more donors than an English one before its cap is reached; every
# candidate still passes every check.
ZH_ATTEMPTS = 40


def zh_clause_refusal(host: Problem, u: Units, c: int, entity: str, states: frozenset[str]) -> str | None:
    """Why statement ``c`` of ``host`` cannot be replaced by any narrative (checked once per statement, so
    a host's draws go to the statements that can): a ratio, a statement that names no thing ("长1000米",
    "原价200元"), one the next clause leans on ("比女生多(1/4)", "每个32元") or that leans on the clause
    before ("其中女生有130人")."""
    tokens = tuple(host.tokens)
    if "%" in states or "".join(tokens[slice(*u.spans[c])]).count("%"):
        return "op1_zh_statement_is_a_ratio"  # "男生比女生少10%": a relation, not an amount
    if not zh.has_noun(states, tokens) and not _counts_a_thing(entity):
        return "op1_zh_statement_names_no_thing"
    if c + 1 < len(u.spans) and zh.continues(tokens, *u.spans[c + 1]):
        return "op1_zh_next_clause_leans_on_the_statement"
    if c > 0 and zh.continues(tokens, *u.spans[c]):
        return "op1_zh_statement_leans_on_the_clause_before"  # "其中女生有130人"
    if statement_unrelated(host, u, c, entity):
        return "op1_zh_replaced_statement_unrelated"  # "小新有96张邮票，小兰课外书的本数是小平的(3/4)．小兰有..."
    return None


def zh_refusal(host: Problem, u: Units, c: int, entity: str, states: frozenset[str], donor: Problem,
               narrative: Sequence[str], holder: str | None, asked_of: str | None) -> str | None:
    """Chinese clauses often leave their subject to the clause before, so a composition is licensed only
    when the statement names what it measures (a noun in its predicate: "这根铁丝长8米", never "长8米"),
    the host's next clause does not lean on it ("比女生多(1/4)"), both sides name the same holder or
    none, and the donor's narrative is about something the host mentions (a shared noun)."""
    tokens = tuple(host.tokens)
    donor_question = "".join(donor.tokens[clause_units(donor).spans[-1][0]:])
    asked = zh.determiners(zh.predicate(tuple(donor.tokens), clause_units(donor).spans[-1][0], len(donor.tokens),
                                        read(donor).question_entity))
    if asked and zh.determiners(states) and asked != zh.determiners(states):
        return "op1_zh_determiner_differs"  # "一支钢笔12元" is not what "这箱钢笔多少元" asks
    if "另" in donor_question:
        return "op1_zh_donor_asks_about_a_second_thing"  # "另一根长多少米": its narrative opens with the first
    if c > 0 and zh.introduces(narrative) or "另一" in "".join(narrative):
        return "op1_zh_donor_introduces_a_second_thing"  # "一种商品打0.8销售，一件商品降价20%后是320元"
    host_places, donor_places = zh.places(host.tokens), zh.places(narrative)
    if donor_places - host_places:
        return "op1_zh_donor_in_another_place"  # 果园's pear trees into 公园's, 鼓号队 into 合唱队
    host_groups, told_labels = zh.groups(tokens) | class_labels(tokens), class_labels(narrative)
    if host_groups and (zh.groups(narrative) | told_labels) - host_groups \
            or told_labels and not host_groups and host_places - donor_places:
        return "op1_zh_donor_names_another_group"  # 5(1)班 into 六年级(1)班, 三年级(1)班 into 合唱队
    if c + 1 < len(u.spans) - 1 and len(clause_units(donor).spans) > 2 and _introduces(tokens, *u.spans[c + 1]):
        return "op1_zh_next_clause_introduces_another_thing"  # "..., 一辆汽车3小时行了216千米" after two cars' story
    rest = "".join(tok for k, (a, b) in enumerate(u.spans) if k != c for tok in tokens[a:b])
    told = "".join(narrative)
    if _shares_one_whole(told, rest, "".join(tokens[slice(*u.spans[c])])):
        return "op1_zh_donor_fixes_the_whole"  # "共50人，女生占60%" then the host's "男生比女生少(1/5)"
    others = people(narrative) - {asked_of}
    if holder is None and others and people(tokens) - others:
        return "op1_zh_donor_names_someone_else"  # 小明 reads the book, then the host's 王丽 reads "the" rest
    if any(w in told for w in PRICE_CHANGES) and any(w in rest for w in PRICE_CHANGES):
        return "op1_zh_two_price_changes"  # "降价40%后售价120元" then the host's "现在打0.8销售"
    if any(w in told for w in REMOVALS) and any(w in rest for w in REMOVALS):
        return "op1_zh_two_removals"  # "截去它的20%后还剩4米" then "第一次用去总长度的20%": of which length?
    if any(w in donor_question for w in _BEFORE_ITS_STORY) or "剩" not in donor_question \
            and any(w in "".join(narrative) for w in REMOVALS + MORE_REMOVALS) and not _states_its_start(donor):
        return "op1_zh_donor_asks_the_amount_before_its_story"  # "用去20%，还剩16米，这根绳子原来长多少米": not 16
    if "剩" not in donor_question and acts_on_it(narrative) \
            and acts_on_it(tokens[:u.spans[c][0]] + tokens[u.spans[c][1]:]):
        return "op1_zh_two_stories_act_on_it"  # 王强 reads the book, then the host's 小明 reads "the" rest
    if kin_of_someone_else(narrative, tokens[:u.spans[c][0]] + tokens[u.spans[c][1]:]):
        return "op1_zh_kin_of_someone_else"  # 小红's 爸爸 in the narrative, then the host's "我" and "爸爸"
    if next_subject_ambiguous(host, u, c, narrative):
        return "op1_zh_next_clause_subject_ambiguous"  # "运来梨240千克，运来的苹果比梨多...，卖出了(5/8)": of which?
    if total_misses_a_part(host, u, narrative):
        return "op1_zh_host_total_misses_a_part"  # "一共有果树多少棵" after a narrative that adds 桃树
    if (holder is None) != (asked_of is None):
        return "op1_holder_differs"
    if not zh.nouns_of_text(narrative) & zh.nouns_of_text(host.tokens):
        return "op1_zh_donor_about_another_thing"
    # The donor's narrative may repeat only what the replaced statement says: a word it shares with the
    # host's other clauses ("上衣", "现在", "出售") would state a second value of one thing.
    narrative_said = zh.said_words(narrative, clause_units(donor).spans[:-1])
    rest_said = zh.said_words(host.tokens, [span for k, span in enumerate(u.spans) if k != c])
    if (narrative_said & rest_said) - states - {holder, asked_of}:  # the holder is who both are about
        return "op1_zh_donor_restates_the_host"
    return None


def _states_its_start(donor: Problem) -> bool:
    """The donor's first clause states the amount its story starts from ("商店有苹果280千克", then sales and
    purchases): its question then asks what the story leaves, not the start ("一根绳子用去(1/5)", "有一筐苹果")."""
    u, reading = clause_units(donor), read(donor)
    first = "".join(donor.tokens[slice(*u.spans[0])])
    return not any(w in first for w in REMOVALS + MORE_REMOVALS) and any(
        c == 0 and e is not None for c, e in zip(reading.clause_of_slot, reading.quantity_entities))


def kin_of_someone_else(narrative: Sequence[str], rest: Sequence[str]) -> bool:
    """The narrative names a relative of one of its people ("小红..., 爸爸的体重...") and the host's other
    clauses name the same relative beside a person of their own ("我的体重是爸爸的(2/3)", 小东 ... 爸爸): whose
    father is it then?"""
    told, said = "".join(narrative), "".join(rest)
    kin = {k for k in KIN if k in told and k in said}
    if not kin or not people(narrative):
        return False
    return bool(people(rest) - people(narrative)) or any(w in said for w in ("我", "他", "她"))


KIN = ("爸爸", "妈妈", "哥哥", "姐姐", "弟弟", "妹妹", "爷爷", "奶奶", "叔叔", "阿姨", "表弟", "表哥")


def acts_on_it(tokens: Sequence[str]) -> bool:
    """The text tells events that use up or work through a thing (reads, cuts, uses, builds, sells: "看了",
    "读完", "剪去", "修了", "运走"), not only what it is ("一根绳子的(6/7)是36米")."""
    text = "".join(tokens)
    return any(w.flag.startswith("v") and any(ch in _ACTS for ch in w.text) for w in zh.words(tuple(tokens))) \
        or any(w in text for w in ("用去", "用了", "用掉"))


_ACTS = frozenset("看读修挖铺剪截减锯运卖吃烧耕倒")
MORE_REMOVALS = ("倒出", "减去", "剪下", "截下", "用掉", "拿走", "借走", "取出", "吃了")
_BEFORE_ITS_STORY = ("原来", "原有", "原长")


def _counts_a_thing(entity: str) -> bool:
    """The counted entity itself names the thing ("小明有45张邮票" -> ``张:邮票``): the statement says what it
    measures even with no other noun, unlike "长1000米" (``米``) or "原价200元"."""
    return ":" in entity and entity.split(":", 1)[1] not in zh.ATTRIBUTES


_CLASS_LABEL = re.compile(r"[0-9一二三四五六七八九十]+(?:年级)?[(（][0-9一二三四五六七八九十]+[)）]班|[一二三四五六]年级"
                          r"|[\u4e00-\u9fff]{2}(?:小学|中学)")


def people(tokens: Sequence[str]) -> set[str]:
    """Names in the text, with a surname and a given name that jieba cut apart (王/丽 -> 王丽, 李/红 with 红 tagged
    an adjective -> 李红)."""
    ws = zh.words(tuple(tokens))
    merged = {a.text + b.text for a, b in zip(ws, ws[1:]) if a.flag.startswith("nr") and len(a.text) == len(b.text) == 1
              and a.text in zh._SURNAMES and (b.flag.startswith("nr") or b.text in zh.GIVEN_CHARS)}
    return zh.names_in(tuple(tokens)) | merged


def _introduces(tokens: tuple[str, ...], start: int, end: int) -> bool:
    """The clause opens by bringing in its own actor ("一辆汽车...", "两辆汽车从两地相对开出")."""
    first = next((w for w in zh.words(tokens) if start <= w.start < end and w.flag != "x"), None)
    return first is not None and first.text[:1] in "一某两" and not first.text[:1].isdigit()


def total_misses_a_part(host: Problem, u: Units, narrative: Sequence[str]) -> bool:
    """The host asks a total of no named parts ("一共要花多少元") and the narrative brings in a thing the host does
    not have: would the total count it?"""
    question = "".join(host.tokens[u.spans[-1][0]:])
    return any(w in question for w in _TOTALS) and not any(w in question for w in "和与、及") \
        and bool(zh.nouns_of_text(narrative) - zh.nouns_of_text(host.tokens))


def next_subject_ambiguous(host: Problem, u: Units, c: int, narrative: Sequence[str]) -> bool:
    """The host's clause after statement ``c`` has no subject of its own and the narrative brings in a thing the
    host does not have: the clause would then read as told of that thing."""
    return c + 1 < len(u.spans) and _no_subject(tuple(host.tokens), *u.spans[c + 1]) \
        and bool(_things(narrative) - _things(host.tokens))


def _things(tokens: Sequence[str]) -> set[str]:
    """Nouns of the text that name things, not properties (全长) or count words (jieba's 每箱/nz)."""
    nouns = {w.text for w in zh.words(tuple(tokens)) if zh.is_noun(w)}  # one-character nouns too: 梨, 桃
    return {n for n in nouns - zh.ATTRIBUTES - _NOT_THINGS if n[0] not in "每这那该各"}


def _no_subject(tokens: tuple[str, ...], start: int, end: int) -> bool:
    """The clause opens with a verb (after time words and adverbs: "上午卖出132千克", "第一天卖了(1/6)"): its
    subject is whatever the text spoke of last."""
    for w in zh.words(tokens):
        if start <= w.start < end and w.flag != "x":
            if w.flag in ("t", "d") or w.flag == "m" and not w.text[:1].isdigit():
                continue
            return w.flag.startswith("v")
    return False


def class_labels(tokens: Sequence[str]) -> set[str]:
    """Labels of a class, grade or school in the text ("5(1)班", "六年级(1)班", "四年级", "希望小学")."""
    return set(_CLASS_LABEL.findall("".join(tokens)))


_NOT_THINGS = frozenset("运 重 长 宽 高 价 钱 里 处".split())  # one-character words jieba tags n ("水果店/运/来")
REMOVALS = ("用去", "剪去", "截去", "运出", "运走", "卖出", "卖掉", "吃去", "吃掉", "用了", "剪掉", "截掉", "运了", "卖了")
PRICE_CHANGES = ("降价", "涨价", "提价", "加价", "减价", "打折", "折出售", "折销售", "便宜", "现价", "售价", "降低了", "优惠")
_TOTALS = ("一共", "共有", "总共", "合计", "总数")
_COMPLEMENTS = {"男生": "女生", "女生": "男生", "男同学": "女同学", "女同学": "男同学", "男工": "女工", "女工": "男工"}
_WHOLES = ("全长的", "全程的", "总数的", "全书的", "全部的", "总长的", "总价的", "原价的", "计划的", "总量的",
           "全班的", "全校的", "全班人数", "全校人数")


def _shares_one_whole(told: str, rest: str, statement: str) -> bool:
    """The donor's narrative fixes a whole and its parts ("共有学生50人，其中女生占60%", "男、女生人数比是7：5"),
    and the host's other clauses relate a part of the same whole ("男生比女生少(1/5)", "已修全长的(4/5)"):
    the composed text states one amount twice, and the two need not agree."""
    if any(w in told and w in rest for w in _WHOLES):
        return True
    if "占" in told or "：" in told or "比是" in told:
        return any(part in told + statement and other in rest for part, other in _COMPLEMENTS.items())
    return False
