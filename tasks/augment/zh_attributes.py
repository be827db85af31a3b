"""Chinese operation 1 for statements of a thing's measure ("一条绳子长5米", "王强的身高是180厘米", "一台电视机原价
8000元"), which the entity reader cannot take as a host statement: it counts no thing (``米``, ``元``), so the
entity route refuses it as naming nothing (zh_refusal: op1_zh_statement_names_no_thing).

Paper 003's operation 1 on them: the question "这捆电线全长有多少米" and the statement "一条绳子长5米" are
alternative fragments (the environment is the measure of a thing: its attribute and unit), so the donor's
narrative, told of the host's thing, takes the statement's place and the donor's expression the statement's
quantity:

    host  一条绳子长5米，正好围成一个正方形，这个正方形的边长是多少米？           5/4
    donor 一捆电线，第一次用去15米，第二次用去25米，两次正好用去全长的(2/5)，这捆电线全长多少米？
    new   ...told of 一条绳子, the narrative ends before the host's square ...

Licensed only where the texts show one thing on each side, measured the same way:
- the host's statement is a whole clause naming its thing, an attribute and one used quantity with its unit
  ("一头海象体重大约是1.13吨"), not a rate, not one the next clause leans on ("...，比赵芳高12.5%"), not what the
  host's own question asks, and no other attribute of the thing is stated by the donor and the host alike;
- the donor's question asks that attribute in that unit of one named thing ("这根绳子长多少米", "明明体重多少千克"),
  its narrative names the thing and tells no event that changes it (a cut, a sale, a price change: then the
  question asks the measure before the story, and the host would go on from the measure after it);
- the two things are the same noun, two people (the donor's renamed), or two things of one classifier that are
  not shapes (a triangle's area is not a parallelogram's formula): 绳子 and 电线 (根/条), 电视机 and 冰箱 (台).
Each refusal is counted by reason (``op1_zh_attr_*``, and the entity route's names where the reason is the same)."""
from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple, Sequence

from mwp.problem import Problem
from tasks.augment import zh
from tasks.augment.base import AugmentConfig, CandidateBatch, Units, clause_units
from tasks.augment.compose import (ContentWords, book, drawn_pairs, marked, near_duplicate, operation1, rated,
                                   retold, used_quantity_in_clause)
from tasks.augment.zh_refusal import (KIN, MORE_REMOVALS, PRICE_CHANGES, REMOVALS, ZH_ATTEMPTS, acts_on_it,
                                      kin_of_someone_else, next_subject_ambiguous, people,
                                      total_misses_a_part)

# Attribute words, and the ones that say the same measure ("体重" of a person is how heavy: "重").
_SAME = {"体重": "重", "重量": "重", "质量": "重", "全长": "长", "总长": "长", "长度": "长", "宽度": "宽",
         "高度": "高", "身高": "高", "价钱": "价格", "售价": "价格", "单价": "价格", "定价": "价格", "全程": "路程"}
_ATTRIBUTES = ("身高", "体重", "重量", "原价", "售价", "进价", "定价", "价格", "价钱", "单价", "周长", "面积", "体积",
               "容积", "边长", "半径", "直径", "底", "高", "长", "宽", "重", "全长", "总长", "长度", "宽度", "高度", "路程",
               "全程")
_UNITS = ("平方厘米", "平方分米", "平方米", "平方千米", "立方厘米", "立方分米", "立方米", "厘米", "分米", "毫米", "千米",
          "公里", "米", "千克", "公斤", "克", "吨", "元", "升", "毫升", "公顷")
# Things whose measures follow a formula of their kind: never told of another kind
_SHAPES = ("长方形", "正方形", "三角形", "平行四边形", "梯形", "圆", "长方体", "正方体", "圆柱", "圆锥", "球", "扇形",
           "环形", "圆形", "圆环")
# Things one narrative may be told of in another's place (the same story fits both): lengths of a line, prices of
# clothes or of appliances, lengths of a way. Other things are told only of their own noun (a dog told as a tiger
# would weigh what no dog weighs; a walk along a road is not one along a rope).
_KINDS = (frozenset("绳子 绳 铁丝 电线 钢管 钢材 钢条 彩条 彩带 丝带 竹竿 木料 木条 铁管 水管 塑料管 电缆 布 花布 白布 铁条".split()),
          frozenset("上衣 衬衫 毛衣 裤子 外衣 大衣 西服 西装 羽绒服 夹克 裙子 外套 衣服 皮鞋 运动服 童装 套装".split()),
          frozenset("电视机 彩电 冰箱 洗衣机 空调 电脑 电冰箱 微波炉 录音机 收音机 照相机 手机 电风扇".split()),
          frozenset("公路 路 马路 铁路 水渠 河堤 隧道 街道 跑道 高速公路 水泥路 小路".split()))
# Words that count the host's people: a narrative that names more people changes who they are
_COUNTED = ("伙伴", "两名", "两人", "两个人", "二人", "两位", "俩", "三人", "三个人", "他们", "她们", "大家", "各自")
# Events that change a thing's measure as a story goes: a donor telling one asks the measure before its story
_CHANGES = REMOVALS + MORE_REMOVALS + PRICE_CHANGES + ("增加", "减少", "提高", "降低", "缩短", "延长", "加长", "剩",
                                                       "折", "涨", "降")


def _alternation(words) -> str:
    """A regex alternation of the words, longest first (so 平方米 is tried before 米)."""
    return "|".join(sorted(words, key=len, reverse=True))


_CL, _ATTR, _UNIT = (_alternation(words) for words in (zh.COUNT_CLASSIFIERS, _ATTRIBUTES, _UNITS))
_STATEMENT = re.compile(
    rf"^(?:已知|如果|而)?(?P<det>[一这那该])?(?P<cl>{_CL})?(?P<obj>[\u4e00-\u9fff]{{1,6}}?)的?(?P<attr>{_ATTR})"
    rf"(?:是|为|约|约是|大约是|大约|有)?Q(?P<unit>{_UNIT})[，,．。；;]*$")
_QUESTION = re.compile(
    rf"^(?:求|那么|问|则)?(?P<det>[这那该])?(?P<cl>{_CL})?(?P<obj>[\u4e00-\u9fff]{{1,6}}?)的?(?:原来)?(?P<attr>{_ATTR})"
    rf"(?:是|为|有|=)*(?:多少|几)(?P<unit>{_UNIT})[？?．。.]*$")


class Measure(NamedTuple):
    thing: str  # "绳子", "王强"
    attribute: str  # normalised: "长", "重", "价格"
    unit: str  # "米"
    classifier: str  # the determiner's classifier ("条"), "" when none is written
    person: bool  # the thing is a person's name


class AttributeDonor(NamedTuple):
    index: int  # position in the pool
    measure: Measure


def _measure(problem: Problem, u: Units, c: int, pattern: re.Pattern) -> Measure | None:
    start, end = u.spans[c]
    m = pattern.match(marked(problem.tokens, start, end, u.qty_pos))
    if m is None:
        return None
    thing = m.group("obj")
    # The thing must be a word of the text, a noun or a name, not a time (现在), a pronoun (它) or part of a word
    at = start + m.start("obj")
    word = next((w for w in zh.words(tuple(problem.tokens)) if w.start == at and w.end == at + len(thing)), None)
    if word is None or not (zh.is_name(word) or zh.is_noun(word)) or thing in zh.ATTRIBUTES:
        return None
    cl = m.group("cl") or _classifier_of(problem, thing)
    return Measure(thing, _SAME.get(m.group("attr"), m.group("attr")), m.group("unit"), cl, zh.is_name(word))


def _classifier_of(problem: Problem, thing: str) -> str:
    """The classifier the text gives the thing where it introduces it ("修一条公路" -> 条), else ""."""
    m = re.search(rf"[一这那该每]({_CL}){re.escape(thing)}", "".join(problem.tokens))
    return m.group(1) if m else ""


def host_clause(host: Problem, u: Units, c: int) -> Measure | None:
    """The measure statement ``c`` of ``host`` gives ("一条绳子长5米，" -> 绳子, 长, 米), else None."""
    start, end = u.spans[c]
    if used_quantity_in_clause(host, u, c) is None or sum(start <= p < end for p in u.qty_pos) != 1:
        return None
    return _measure(host, u, c, _STATEMENT)


def asked(donor: Problem, u: Units) -> Measure | None:
    """The measure the donor's question asks ("这捆电线全长有多少米" -> 电线, 长, 米), else None."""
    return _measure(donor, u, len(u.spans) - 1, _QUESTION)


def donor_refusal(donor: Problem, u: Units, measure: Measure) -> str | None:
    """Why a donor asking ``measure`` cannot donate its narrative to any host, if it cannot."""
    q_start = u.spans[-1][0]
    narrative, question = "".join(donor.tokens[:q_start]), "".join(donor.tokens[q_start:])
    if len(u.spans) < 2 or any(p >= q_start for p in u.qty_pos):
        return "op1_donor_question_holds_quantity"  # any number in it: the narrative is not all it asks from
    if measure.thing not in narrative:
        return "op1_zh_attr_donor_never_names_it"  # "...，它的高=多少厘米": nothing to tell of the host's thing
    mentions, occurrences = zh.noun_mentions(tuple(donor.tokens[:q_start]), measure.thing)
    if len(mentions) != occurrences:
        return "op1_zh_attr_thing_inside_another_word"  # 路 in 水泥路: renaming it would break the word
    if any(w in narrative or w in question for w in _CHANGES) or "原来" in question or acts_on_it(donor.tokens[:q_start]):
        return "op1_zh_attr_donor_changes_it"  # "用去(3/5)，还剩30米，原来长多少米": the measure before its story
    if "另" in narrative or "另" in question:
        return "op1_zh_donor_introduces_a_second_thing"
    last = "".join(donor.tokens[slice(*u.spans[-2])])
    if last.startswith(("如果", "若", "假如")):
        return "op1_donor_narrative_ends_in_a_condition"
    return None


def host_refusal(host: Problem, u: Units, c: int, measure: Measure) -> str | None:
    """Why statement ``c`` (of ``measure``) cannot take another problem's narrative, if it cannot."""
    tokens = tuple(host.tokens)
    if c + 1 < len(u.spans) and zh.continues(tokens, *u.spans[c + 1]):
        return "op1_zh_next_clause_leans_on_the_statement"  # "王强的身高是180厘米，比赵芳高12.5%"
    if c > 0 and zh.continues(tokens, *u.spans[c]):
        return "op1_zh_statement_leans_on_the_clause_before"
    if zh.is_rate(tokens, *u.spans[c]):
        return "op1_zh_statement_is_a_ratio"  # "每箱苹果重8.8千克": a rate
    own = asked(host, u)
    if own is not None and own.thing == measure.thing and own.attribute == measure.attribute:
        return "op1_zh_attr_host_asks_it"  # the host's question is its own statement
    return None


def same_kind(host: Measure, donor: Measure) -> bool:
    """The donor's thing may be told as the host's (one attribute, one unit): the same noun, two people, or two
    things of one kind in ``_KINDS``; never a shape."""
    if (host.attribute, host.unit) != (donor.attribute, donor.unit):
        return False
    if any(s in host.thing or s in donor.thing for s in _SHAPES):
        return False  # a shape's measures fix one another: a narrative's would restate the host's (底, 高)
    if host.thing == donor.thing:
        return True
    if host.person or donor.person:
        return host.person and donor.person
    return any(host.thing in kind and donor.thing in kind for kind in _KINDS)


def pair_refusal(host: Problem, u: Units, c: int, measure: Measure, told: Problem, told_u: Units) -> str | None:
    """Why the donor's narrative, told of the host's thing, cannot take statement ``c``'s place, if it cannot."""
    tokens = tuple(host.tokens)
    narrative = tuple(told.tokens[:told_u.spans[-1][0]])
    rest = tokens[:u.spans[c][0]] + tokens[u.spans[c][1]:]
    others = _people_and_kin(narrative) - {measure.thing}
    if people(narrative) & people(rest) - {measure.thing}:
        return "op1_holder_differs"  # the donor's 小红 and the host's would be one person
    if others and any(w in "".join(rest) for w in _COUNTED):
        return "op1_zh_attr_changes_who_is_counted"  # "两人一共重多少千克" after a narrative of two more people
    if others and not _people_and_kin(tokens[u.spans[-1][0]:]):
        return "op1_zh_attr_question_of_whom"  # "体内血液约有多少千克" after a narrative of three people
    if next_subject_ambiguous(host, u, c, narrative):
        return "op1_zh_next_clause_subject_ambiguous"  # "..., 售出后可得(1/4)的利润": which thing is sold?
    if told.answer < _amount_used_after(host, u, c, measure):
        return "op1_zh_attr_host_uses_more_than_it_has"  # a 42 m rope of which the host then uses 40 m and 16.8 m
    if total_misses_a_part(host, u, narrative):
        return "op1_zh_host_total_misses_a_part"  # "服装一共要花多少元" after a narrative that prices a shirt
    if zh.places(narrative) - zh.places(tokens):
        return "op1_zh_donor_in_another_place"
    if rated(host, narrative) & rated(host, rest):
        return "op1_conflicting_rates"  # "每千克3元" ... "每千克5元"
    if acts_on_it(rest) and acts_on_it(narrative):
        return "op1_zh_two_stories_act_on_it"
    if kin_of_someone_else(narrative, rest):
        return "op1_zh_kin_of_someone_else"
    told_text, rest_text = "".join(narrative), "".join(rest)
    attributes = {_SAME.get(a, a) for a in _ATTRIBUTES if a in told_text} & {
        _SAME.get(a, a) for a in _ATTRIBUTES if a in rest_text}
    if attributes - {measure.attribute}:
        return "op1_zh_attr_stated_twice"  # the narrative's 宽 beside the host's own 宽 of the same field
    mentioned = (zh.names_in(narrative) | zh.nouns_of_text(narrative)) - {measure.thing}
    if any(p in rest_text for p in ("它", "他", "她")) and mentioned:
        return "op1_zh_attr_pronoun_ambiguous"  # the host's 它 after a narrative that names a second thing
    things = zh.nouns_of_text(narrative) - {measure.thing} - zh.ATTRIBUTES
    if any(set(a) & set(b) for a in things for b in zh.nouns_of_text(rest) - {measure.thing} - zh.ATTRIBUTES - things):
        return "op1_zh_attr_narrative_names_a_like_thing"  # the narrative's 课桌 beside the host's 桌子: one desk?
    if measure.classifier and measure.classifier in rest_text and re.search(
            rf"{re.escape(measure.classifier)}(?!{re.escape(measure.thing)})[\u4e00-\u9fff]", told_text):
        return "op1_zh_attr_classifier_ambiguous"  # "一台电冰箱" then the host's "卖出18台": of which?
    said = zh.said_words(narrative, told_u.spans[:-1]) & zh.said_words(tokens, [s for k, s in enumerate(u.spans) if k != c])
    if said - {measure.thing} - set(_ATTRIBUTES):
        return "op1_zh_donor_restates_the_host"  # a word both say of their own values ("上衣", "现在")
    return None


def _amount_used_after(host: Problem, u: Units, c: int, measure: Measure) -> Fraction | int:
    """What the host's clauses after statement ``c`` take of the thing in its unit ("第二次用去40米" -> 40), where they
    tell a story that uses it up: the host's amounts were chosen for its own measure, and a shorter one cannot give them."""
    tokens = host.tokens
    start, end = u.spans[c]
    if not acts_on_it(tokens[:start] + tokens[end:]):
        return 0
    return sum((q.value for pos, q in zip(u.qty_pos, host.quantities)
                if pos >= end and "".join(tokens[pos + 1:pos + 1 + len(measure.unit)]) == measure.unit), start=0)


def _people_and_kin(tokens: Sequence[str]) -> set[str]:
    """Names and kin (爸爸, 妈妈) the text speaks of."""
    text = "".join(tokens)
    return people(tokens) | {k for k in KIN if k in text}


def told_as(donor: Problem, u: Units, theirs: Measure, measure: Measure) -> Problem:
    """The donor with its thing written as the host's in its narrative, a classifier before it as the host's too
    ("一块花布" -> "一根绳子"); quantities move with the text."""
    text = "".join(donor.tokens[:u.spans[-1][0]])
    before = f"(?:{re.escape(theirs.classifier)})?" if theirs.classifier and measure.classifier else ""
    out = []
    for m in re.finditer(before + re.escape(theirs.thing), text):
        classified = before and m.group().startswith(theirs.classifier) and len(m.group()) > len(theirs.thing)
        out.append((m.start(), m.end(), (measure.classifier if classified else "") + measure.thing))
    return retold(donor, u, out)


def index_donors(problems: Sequence[Problem], units: Sequence[Units], batch: CandidateBatch) -> list[AttributeDonor]:
    """The Chinese problems whose question asks a thing's measure and that can donate their narrative."""
    out = []
    for d, (problem, u) in enumerate(zip(problems, units)):
        if problem.language != "zh" or len(u.spans) < 2:
            continue
        measure = asked(problem, u)
        if measure is None:
            continue
        reason = donor_refusal(problem, u, measure)
        if reason:
            batch.rejected[reason] += 1
        else:
            out.append(AttributeDonor(d, measure))
    return out


def host_clauses(host: Problem, u: Units) -> list[tuple[int, Measure]]:
    """The statements of ``host`` that give a thing's measure."""
    return [(c, m) for c in range(len(u.spans) - 1) for m in [host_clause(host, u, c)] if m]


def compose(problems: Sequence[Problem], p: int, u: Units, measures: list[tuple[int, Measure]],
            donors: list[AttributeDonor], cfg: AugmentConfig, rng, batch: CandidateBatch, made_texts: set[str],
            words: ContentWords, round_: int, made_before: int) -> bool:
    """Operation 1 for a Chinese host whose statements ``measures`` give a thing's measure: donors asking that
    measure of a thing of its kind, told of the host's thing, drawn as geca_op1 draws its donors, under the
    host's cap (``made_before``: the batch's size when the host was started). Returns whether any statement had
    a donor. (bench/op1_refusals.py reads this frame's ``host``, ``u``, ``c``, ``d``, ``made`` when a refusal is
    counted.)"""
    host = problems[p]
    clauses = []
    for c, measure in measures:
        refused = host_refusal(host, u, c, measure)
        if refused:
            batch.rejected[refused] += 1
            continue
        pool = [donor for donor in donors if donor.index != p and same_kind(measure, donor.measure)]
        if pool:
            clauses.append((c, measure, pool))
        else:
            batch.rejected["op1_zh_attr_no_donor_of_its_kind"] += 1
    if not clauses:
        return False
    made: set[tuple[int, int]] = set()
    for (c, measure, _), (d, theirs) in drawn_pairs(clauses, lambda clause: clause[2], rng,
                                                    ZH_ATTEMPTS * cfg.per_problem_cap, cfg.per_problem_cap, batch,
                                                    made_before, made):
        donor = problems[d]
        donor_u = clause_units(donor)
        if near_duplicate(words(host), words(donor)):
            batch.rejected["op1_donor_near_duplicate"] += 1
            continue
        if theirs.thing != measure.thing and measure.thing in "".join(donor.tokens[:donor_u.spans[-1][0]]):
            batch.rejected["op1_holder_differs"] += 1  # the donor's 小新 told as 小红 beside its own 小红: one person
            continue
        if theirs.thing != measure.thing:  # the donor told of the host's thing (keeps its id; the refusal sampler reads it)
            donor = told_as(donor, donor_u, theirs, measure)
            donor_u = clause_units(donor)
        refused = pair_refusal(host, u, c, measure, donor, donor_u)
        if refused:
            batch.rejected[refused] += 1
            continue
        detail = (f"clause={c} donor={donor.id} attribute={theirs.thing}{theirs.attribute}->"
                  f"{measure.thing}{measure.attribute}")
        book(operation1(host, u, c, donor, donor_u, detail, round_), batch, made_texts)
    return True
