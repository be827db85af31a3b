"""Whether a Chinese problem is coherent in itself before operation 1 composes from it: a host or donor that
is already incoherent (SD's decomposed parts often are: "男生有42人，科技小组的人数是生物小组的6倍，科技小组有多少人？")
passes its fault on to every composition made from it. Three readings, each a counted refusal in geca.py:
the question asks what one of the problem's own statements states, the question names a thing its
narrative never mentions beside a sibling it does mention, and (for the host statement operation 1
replaces) the statement shares nothing with the rest of the problem, which compares with a base nothing
gives. Each reading was narrowed after reading what it refused among Math23K's own problems (another case,
a rate, a total)."""
from __future__ import annotations

import re

from mwp.problem import Problem
from tasks.augment import zh
from tasks.augment.base import Units
from tasks.augment.entities import Reading


def zh_incoherent(problem: Problem, u: Units, reading: Reading, role: str) -> str | None:
    """Why a Chinese host or donor (``role``) is incoherent in itself, if it is: its question asks what one
    of its own statements states, or names a thing its narrative never mentions; a composition would
    inherit the fault. None for other languages."""
    if problem.language != "zh":
        return None
    if asks_its_own_statement(problem, u, reading):
        return f"op1_zh_{role}_question_asks_its_own_statement"
    if question_thing_not_told(problem, u):
        return f"op1_zh_{role}_question_names_a_thing_not_told"  # "6行枣树，每行12棵，...有桃树多少棵"
    return None


# A question with one of these asks for a sum of kinds ("一共有果树多少棵" after 桃树 and 梨树), so the noun
# it names need not be one the narrative names; a statement with one is the whole ("全班有45人").
_TOTALS = ("一共", "共", "总", "合计", "全部", "全班", "全校")
# Words of a statement that name its kind of person by the other kind ("男生有25人，女生有30人").
_COMPLEMENTS = {"男": "女", "女": "男"}
# Nouns that name a kind the narrative's things belong to ("学生" of 男生 and 女生).
_KINDS = zh.GENERAL_NOUNS | frozenset("学生 同学 人员 职工 工人 果树 树木 车辆 书本".split())
# Last characters of nouns that name a property, not a thing (jieba's 段长, 总长度, 人数).
_PROPERTY_ENDS = frozenset("长宽高重价度数量积程")
# Suffixes after the root of a noun (绳子: 绳, as in 跳绳).
_SUFFIXES = frozenset("子头儿")
# Last characters that make two nouns kinds of one thing counted side by side (桃树 and 枣树, 公鸡 and 母鸡,
# 篮球 and 足球); other shared heads are not siblings (海水 and 淡水, 学生票 and 门票, 乘车 and 汽车).
_SIBLING_HEADS = frozenset("树花鸡鸭鹅羊牛兔鱼猪狗猫球")
# Words after which a question asks about another moment or another case ("如果每排坐8人", "此时").
_ANOTHER_CASE = ("如果", "若", "假如", "要是", "照这样", "当", "此时", "这时", "那么", "原来", "原有", "原计划")
_MOMENT = re.compile(r"(?<![小每])时[，,]")  # "没有称物体时，弹簧长多少厘米"
_CJK = re.compile(r"[\u4e00-\u9fff]{2}")
# A part of a base ("是生物小组的6倍", "相当于桃树的(4/5)"): the base is named here.
_BASE = re.compile(r"(?:是|相当于)([\u4e00-\u9fff]{2,6}?)的")


def _said(tokens: tuple[str, ...], start: int, end: int, entity: str | None) -> tuple[str, frozenset[str]] | None:
    """What a clause says of what it counts: (unit, its content words with the counted noun and its
    determiner, without 一共 and the like). "果园有桃树120棵" and "果园里有桃树多少棵" both say (棵, {有, 果园, 桃树});
    "一个鸡蛋约重(1/25)千克" says #个 (one egg), which "这些鸡蛋约重多少千克" does not ask."""
    if entity is None:
        return None
    unit, _, noun = entity.partition(":")
    words = {w for w in zh.predicate(tokens, start, end, entity) - zh.NEUTRAL}
    words |= {w for w in zh.predicate(tokens, start, end, entity) if w.startswith(zh.DETERMINED)}
    words |= {w.text for w in zh.words(tokens) if start <= w.start < end and w.flag in ("f", "s") and len(w.text) > 1}
    words |= {ch for ch in "".join(tokens[start:end]) if ch in "不没△○□☆◇"}  # "都不参加", "有12个△" / "○有多少个"
    return unit, words | ({noun} if noun else set())  # 前面 and 后面 in a queue, 楼下 and a whole theatre


def asks_its_own_statement(problem: Problem, u: Units, reading: Reading) -> bool:
    """The question asks exactly what one of the problem's statements states ("爸爸的体重是60千克，...，爸爸的体重=
    多少千克？", "学校买来2250本练习本，还剩40本．学校一共买来多少本练习本？"): the text answers itself, unless a
    later clause goes on to change that amount (:func:`_story_goes_on`). A clause that names only its noun
    ("果园里有21棵杏树，27棵桃树") says what the clause before says of its own noun."""
    tokens = tuple(problem.tokens)
    asked = _said(tokens, *u.spans[-1], reading.question_entity)
    q_start, q_end = u.spans[-1]
    if asked is None or zh.is_rate(tokens, q_start, q_end) or any(q_start <= q < q_end for q in u.qty_pos) \
            or any(w in "".join(tokens[q_start:q_end]) for w in ("第", "另")):
        return False  # "这样的5辆卡车可以装多少吨" asks of five; "第多少个" counts from the other end; "另一段布"
    before: frozenset[str] = frozenset()
    for c, (start, end) in enumerate(u.spans[:-1]):
        slots = [j for j, k in enumerate(reading.clause_of_slot) if k == c]
        entity = reading.quantity_entities[slots[0]] if len(slots) == 1 else None
        if entity is None or entity.partition(":")[0] != asked[0]:
            before = frozenset()  # another unit: never what the question asks (read no further)
            continue
        said = None if zh.is_rate(tokens, start, end) else _said(tokens, start, end, entity)
        if said is None:
            before = frozenset()
            continue
        noun = entity.partition(":")[2]
        own = said[1] - {noun}
        if not own and before:  # "27棵桃树" after "果园里有21棵杏树": 有, 果园
            said = said[0], said[1] | before
        if said == asked and reading.clause_holders[c] == reading.question_holder \
                and not any(w in "".join(tokens[start:end]) for w in ("又", "再")) \
                and not _sums(problem, u, reading, said[0]) and not _story_goes_on(problem, u, reading, c, said[0]):
            return True  # "小芳有72张邮票，...，小强有多少张邮票" asks of someone else
        before = own or before
    return False


def _sums(problem: Problem, u: Units, reading: Reading, unit: str) -> bool:
    """The question asks a total ("一共加工了多少个零件") and two clauses or more count in its unit without telling
    what is left (甲's 65 and 乙's 75): it asks their sum, not one of them."""
    tokens = problem.tokens
    if not any(w in "".join(tokens[slice(*u.spans[-1])]) for w in _TOTALS):
        return False
    counted = {k for k, entity in zip(reading.clause_of_slot, reading.quantity_entities)
               if k < len(u.spans) - 1 and entity is not None and entity.partition(":")[0] == unit
               and "剩" not in "".join(tokens[slice(*u.spans[k])])}
    return len(counted) > 1


def _story_goes_on(problem: Problem, u: Units, reading: Reading, c: int, unit: str) -> bool:
    """The text after statement ``c`` changes what it states: a later clause counts something (not a ratio)
    without telling what is left ("商店有苹果280千克，上午卖出132千克，下午购进145千克，商店有苹果多少千克？";
    "9小时可以运完，实际每小时运90吨，多少小时可以运完？"), or the question follows another case or moment
    ("如果每排坐8人", "此时", "原来", "没有称物体时，"). "学校买来2250本练习本，还剩40本．学校一共买来多少本练习本？" goes on to nothing."""
    tokens = problem.tokens
    after = "".join(tokens[u.spans[c][1]:])
    if any(w in after for w in _ANOTHER_CASE) or _MOMENT.search(after):
        return True
    for k, entity in zip(reading.clause_of_slot, reading.quantity_entities):
        if c < k < len(u.spans) - 1 and entity is not None and entity != "%" \
                and "剩" not in "".join(tokens[slice(*u.spans[k])]):
            return True
    return False


def question_thing_not_told(problem: Problem, u: Units) -> str | None:
    """A thing the question names that its narrative never mentions, while the narrative names a sibling
    ("果园里有6行枣树，每行12棵，果园里有桃树多少棵？": 桃树 beside 枣树, :data:`_SIBLING_HEADS`): the question is
    not about the story told. Not refused: a kind (学生 beside 男生, 果树 beside 桃树), the other half
    (女生 beside 男生), a question after a total ("共花掉3650元，...，买饮水机用去多少元") or asking one, and
    nouns of a count or both places (两地, 一楼), and a noun whose modifier the narrative names ("红、黄、蓝球"
    and 红球)."""
    tokens = tuple(problem.tokens)
    start, end = u.spans[-1]
    question, told = "".join(tokens[start:end]), "".join(tokens[:start])
    if any(w in question or w in told for w in _TOTALS):
        return None
    kin = {t[-1] for t in _things(tokens, 0, start) if t[-1] in _SIBLING_HEADS}
    for noun in _things(tokens, start, end):
        if noun[:-1] not in told and noun[-1] in kin and noun not in _KINDS and noun[0] not in _COUNT_STARTS \
                and noun[0] not in zh.CLASSIFIERS \
                and (_other_half(noun) or "\0") not in told:
            return noun
    return None


def _other_half(noun: str) -> str | None:
    """女生 for 男生, 男同学 for 女同学; None for other nouns."""
    return _COMPLEMENTS[noun[0]] + noun[1:] if noun[0] in _COMPLEMENTS else None


_COUNT_STARTS = frozenset("两全所各几多一二三四五六七八九十0123456789")


def statement_unrelated(problem: Problem, u: Units, c: int, entity: str | None = None) -> bool:
    """Statement ``c`` names things (nouns, names, places) and shares no two characters with the rest of the problem,
    while the rest names things of its own and compares them with a base the statement does not give
    ("小新有96张邮票，小兰课外书的本数是小平的(3/4)．小兰有课外书多少本？": 小平 is never given): the statement
    is not the one the rest leans on, and replacing it changes nothing the question depends on. A thing whose kind the rest names counts as
    mentioned (桃树 beside 梨树, 男生 beside 女生: same last character), and so does a root (绳子 beside 跳绳);
    a rest that names no thing
    ("一根绳子长(8/9)米，截下(1/4)米，还剩多少米") is linked by its unit alone and not refused."""
    tokens = tuple(problem.tokens)
    start, end = u.spans[c]
    mine = _things(tokens, start, end)
    rest_spans = [span for k, span in enumerate(u.spans) if k != c]
    theirs = set().union(*(_things(tokens, a, b) for a, b in rest_spans))
    if not mine or not theirs or any(w in "".join(tokens[start:end]) for w in _TOTALS):
        return False  # "全班有45人" is the whole the rest's parts make
    rest = "".join(tok for a, b in rest_spans for tok in tokens[a:b])
    noun = (entity or "").partition(":")[2]
    statement = "".join(tokens[start:end])
    pairs = {statement[k:k + 2] for k in range(len(statement) - 1)}
    if any(_CJK.fullmatch(p) and p in rest for p in pairs) or noun and noun[0] in rest:  # "20道题", "做对的题数"
        return False  # any two characters in common: 运来 and 大米 in "运来的大豆是大米吨数的(5/6)"
    heads = {t[-1] for t in theirs}
    if any(t[-1] in heads or _other_half(t) in theirs
           or t[-1] in _SUFFIXES and t[0] in rest for t in mine):
        return False
    told = "".join(tok for k, (a, b) in enumerate(u.spans[:-1]) if k != c for tok in tokens[a:b])
    bases = set(_BASE.findall(told))  # not the question's own comparison ("小胖...比小巧多走多少米")
    return any(base not in statement and any(base.startswith(t) for t in theirs) for base in bases)


def _things(tokens: tuple[str, ...], start: int, end: int) -> set[str]:
    """Nouns of two characters or more, names and places in tokens[start:end]; properties (体重, 人数, jieba's
    段长) and words of a rate or a determiner (每段, 这些) left out. Read from the whole text's words (one
    cached jieba cut per problem), not from a cut of the span."""
    out = set()
    for w in zh.words(tokens):
        if not start <= w.start < end or len(w.text) < 2:
            continue
        noun = zh.is_noun(w)
        if (noun or zh.is_name(w)) and w.text not in zh.ATTRIBUTES and w.text[-1] not in _PROPERTY_ENDS \
                and w.text[0] not in "每这那该各" or zh.is_name(w) \
                or w.flag in ("s", "ns", "nt") or noun and w.text.endswith(zh._PLACE_ENDS):
            out.add(w.text)
    return out
