"""Chinese operation 1 for problems about named numbers (一个数, 某数, 甲数, 乙数), which the entity reader
(zh.py) cannot read: no classifier, no counted noun, so every such problem is refused as a host or a donor by
the entity route ("一个数的(5/8)是25，这个数=．" asks for nothing that is counted).

Paper 003's operation 1 on them: the question "这个数=？" and the statement "甲数是35" are alternative fragments
(the environment is the number), so the donor's narrative takes the statement's place, told of the host's
number, and the donor's expression the statement's quantity:

    host  甲数是35，乙数比甲数的3倍还多25，乙数=？          35*3+25
    donor 一个数的(5/8)是25，这个数=．                       25/(5/8)
    new   甲数的(5/8)是25，乙数比甲数的3倍还多25，乙数=？    25/(5/8)*3+25

Licensed only where the texts show one number on each side: the host's statement is the bare value of one
named number ("甲数是35", "已知甲数是132") that the rest of the host goes on to use, and whose next clause does not
lean on it ("甲数是78，是乙数的2倍"); the donor asks for the number itself ("这个数=？", "求这个数", "甲数是多少")
and its narrative speaks of that number alone (no second number, no digits or kinds of number: "一个两位数",
"两数的和"). Each refusal is counted by reason (``op1_zh_number_*``).

The terms of an arithmetic operation are named numbers too (被减数, 减数, 一个加数, 一个因数 of a product, 被除数,
除数): "被减数是850，减数是354，差=？" goes on from its 被减数 through the difference it asks, so a donor's narrative
told of it ("被减数的(1/2)是500，减数是354，差=？") composes as the named numbers do. So do the terms of a ratio or
a proportion (比的前项, 一个外项) and the result of an operation (两个因数的积, 差, 比值): "两个因数的积是4.2，其中一个
因数是7，另一个因数=．" goes on from its 积 through the factor it names.

A host whose next clause leaves its subject to the statement ("甲数是30，比乙数多6", "甲数是105，它的12倍=．") is
restated first, the name written in ("甲数比乙数多6"): told another narrative, the comparison would otherwise
fall to the narrative's last amount ("甲数的(5/8)是25，比乙数多6")."""
from __future__ import annotations

import re
from typing import NamedTuple, Sequence

from mwp.expr import quantity_slots
from mwp.problem import Problem
from tasks.augment.base import AugmentConfig, CandidateBatch, Units, clause_units
from tasks.augment.compose import ContentWords, book, drawn_pairs, marked, near_duplicate, operation1, retold
from tasks.augment.zh_refusal import ZH_ATTEMPTS

NAMES = ("甲数", "乙数", "丙数")
_INTRO = ("一个数", "某数")  # a generic number as a narrative introduces it
_REFS = ("这个数", "这数", "此数", "该数")  # and as it goes on to refer to it
# Characters that make 一个数 another word (一个数学小组, 一个数字) or another number (另一个数, 每一个数, 第一个数)
_NOT_AFTER = set("学字据量位码轴组列值")
_NOT_BEFORE = set("另每第同")
# A second number, or a number of a kind or form the composition would not keep (its digits, its parity)
_OTHER = ("两数", "两个数", "二数", "三数", "三个数", "几个数", "另一个数", "甲、乙", "甲乙", "它们", "位数", "数字",
          "自然数", "整数", "质数", "合数", "奇数", "偶数", "个位", "十位", "百位", "小数点", "最大", "最小")
# Words that hold numbers to whole values (a common divisor, a remainder): another value told of them breaks
# the host ("甲、乙两数的最大公约数是3，最小公倍数是45" with 甲 = 16)
_WHOLE = ("公约数", "公倍数", "公因数", "约数", "因数", "倍数", "整除", "余")
# Words naming the result of an operation: a donor's "商是15" beside a host's own 商 would be two quotients
_RESULTS = ("商", "余数", "积", "差", "比值")
_SUM = re.compile(r"的和|之和|和(?:是|为|=|等于|多少|[．。？?])")  # a sum named as a result, not 和 as "and"
_CONNECTORS = ("已知", "如果", "若", "并且", "且", "而", "又", "那么", "则", "求", "问", "那", "其中的", "其中")
# The terms of an arithmetic operation, each a named number too ("被减数是850，减数是354，差=？"), and of a ratio
# or a proportion ("比的前项是20，比值是(5/8)，比的后项=．"), with the words that name the operation's other terms
# and its result: a host goes on to use its term through them
TERMS = {"被减数": "减", "减数": "减", "被加数": "加", "加数": "加", "被乘数": "乘", "乘数": "乘", "因数": "乘",
         "被除数": "除", "除数": "除", "前项": "比", "后项": "比", "外项": "比例", "内项": "比例"}
_OPERATION = {"减": re.compile("减数|差"), "加": re.compile("加数|" + _SUM.pattern), "乘": re.compile("乘数|因数|积"),
              "除": re.compile("除数|商"), "比": re.compile("前项|后项|比值"), "比例": re.compile("外项|内项")}
# The result of an operation is a named number as well ("两个因数的积是4.2，其中一个因数是7，另一个因数=．" goes on
# from its 积 through the factor it names), said bare (积) or of the numbers it is the result of (两个数的和)
RESULTS = {"差": "减", "和": "加", "积": "乘", "商": "除", "比值": "比"}
_TERM_WORDS = tuple(sorted([*TERMS, *RESULTS], key=len, reverse=True))  # 被减数 before 减数
_OF = "(?:(?:一个)?比的|它的)?"  # a ratio's term told of the ratio: 比的前项, 一个比的后项, 它的前项
_TERM = "(?:另)?(?:一个)?" + _OF + "(?:" + "|".join(sorted(TERMS, key=len, reverse=True)) + ")"
_RESULT = "(?:(?:两个数|两数|两个因数|两个加数|这两个数|它们|甲、乙两数|甲乙两数|甲、乙|两个外项|两个内项)的)?" \
          "(?:[差和积商]|(?:一个)?(?:比的)?比值)"
_HOST_CLAUSE = re.compile(r"^(?:已知|如果|若|并且|且|其中的|其中)?(甲数|乙数|丙数|" + _TERM + "|" + _RESULT
                          + r")(?:是|为|等于|=)Q[，,．。.；;]*$")
_NEXT = re.compile(r"^(?:甲数|乙数|丙数|" + _TERM + r"|差|积|商|比值|和(?=是|为|=|等于))")  # another number, or a result
# A next clause that leans on the statement's number: its subject left out ("甲数是30，比乙数多6") or a 它
_ELIDED = re.compile(r"^(?:(它)(?!们)(?=[比是的])|(?=[比是]))")
_QUESTION = re.compile(r"^(?:求|问|那么|则|请问|那么，)?(这个数|这数|此数|该数|原数|某数|甲数|乙数|丙数)"
                       r"(?:是|为|等于)?(?:多少|几)?=?[？?．。.]*$")
_LABEL = re.compile(r"^(?:文字题|列式计算|列式解答|列综合算式计算|应用题)[：:]")
_PLURAL = ("两数", "两个数", "甲、乙", "甲乙", "它们", "这两个数", "三个数", "三数")


class NumberDonor(NamedTuple):
    index: int  # position in the pool
    asked: str  # the name its question asks for ("甲数"), or "" for a generic number (一个数 ... 这个数)


def composed_by_number(detail: str) -> bool:
    """True for the provenance detail of a composition made here (geca.py writes "number=一个数->甲数")."""
    return " number=" in f" {detail}"


def _generic_mentions(text: str) -> list[tuple[int, int]]:
    """(start, end) of every mention of a generic number: 一个数 and 某数 that are not part of another word,
    and the references 这个数, 此数 ..."""
    out = []
    for word in _INTRO + _REFS:
        for m in re.finditer(re.escape(word), text):
            before = text[m.start() - 1] if m.start() else ""
            after = text[m.end()] if m.end() < len(text) else ""
            if before in _NOT_BEFORE or after in _NOT_AFTER:
                continue
            out.append((m.start(), m.end()))
    return sorted(set(out))


def host_clause(host: Problem, u: Units, c: int) -> str | None:
    """The number whose bare value statement ``c`` of ``host`` is ("甲数是35，" -> "甲数"), else None."""
    m = _HOST_CLAUSE.match(marked(host.tokens, *u.spans[c], u.qty_pos))
    return m.group(1) if m else None


def term(name: str) -> str | None:
    """The term or result of an operation a host's name is ("另一个加数" -> "加数", "两个因数的积" -> "积"),
    else None (甲数)."""
    for word in _TERM_WORDS:
        if name.endswith(word):
            return word
    return None


def operation(name: str) -> str:
    """The operation ("减", "加", "乘", "除", "比", "比例") whose term or result ``name`` is: "两个外项的积" is a
    proportion's."""
    bare = term(name)
    if bare == "积" and ("外项" in name or "内项" in name):
        return "比例"
    return TERMS.get(bare) or RESULTS[bare]


def host_refusal(host: Problem, u: Units, c: int, name: str) -> str | None:
    """Why the statement of ``name``'s value cannot take another problem's narrative, if it cannot."""
    tokens = host.tokens
    text = "".join(tokens)
    rest = "".join(tokens[:u.spans[c][0]] + tokens[u.spans[c][1]:])
    bare = term(name)
    # The host speaks of the number again: by name, as two numbers, or (a term) through its operation's other
    # term or result ("减数是354，差=？" uses 被减数)
    used = (bare or name) in rest or any(p in rest for p in _PLURAL) \
        or (bare is not None and _OPERATION[operation(name)].search(rest) is not None) \
        or (bare is not None and "甲" in name and any(n in rest for n in NAMES))  # 甲、乙两数的和 through 甲数
    if not used or (bare is not None and bare not in rest and "它" in rest):
        return "op1_zh_number_not_used_after"  # nothing else speaks of the number, or only a 它 the narrative's could take
    # A multiplication's factor or product (一个因数是49，积是931) is any value; a common factor (公因数) or a
    # divisor is not
    product = bare in ("因数", "积") and "积" in text
    whole = tuple(w for w in _WHOLE if w != "因数") if product else _WHOLE
    if any(w in text for w in whole):
        return "op1_zh_number_host_needs_whole_numbers"  # a common divisor, a remainder: not any value will do
    if _generic_mentions(rest):
        return "op1_zh_number_host_has_a_generic_number"  # 一个数 in the host: the narrative's would be a second
    if asked(host, u) == name:
        return "op1_zh_number_host_asks_it"  # "甲数是35，...，甲数=？": the host's question is its own statement
    if c + 1 < len(u.spans) - 1:
        following = "".join(tokens[slice(*u.spans[c + 1])])
        for word in _CONNECTORS:
            following = following.removeprefix(word)
        if not following.startswith(_PLURAL) and not _NEXT.match(following):
            return "op1_zh_next_clause_leans_on_the_statement"  # "甲数是78，是乙数的2倍"
    return None


def restated(host: Problem, u: Units, c: int, name: str) -> tuple[Problem, Units] | None:
    """The host with the subject its next clause leaves to statement ``c`` written out, the number's name in
    place of nothing or of a 它: "甲数是30，比乙数多6，乙数=？" -> "甲数是30，甲数比乙数多6，乙数=？", "甲数是105，
    它的12倍=．" -> "甲数是105，甲数的12倍=．" (told another narrative, "甲数的(5/8)是25，比乙数多6" would leave
    the comparison to the (5/8)); None where the next clause does not lean on the statement so, or the name is
    not one to repeat (一个加数 said again would be a second one)."""
    if c + 1 >= len(u.spans) or not (name in NAMES or name in TERMS):
        return None
    start = u.spans[c + 1][0]
    following = "".join(host.tokens[start:u.spans[c + 1][1]])
    m = _ELIDED.match(following)
    if m is None:
        return None
    at = len("".join(host.tokens[:start]))
    # one character replaced (retold() writes over spans, it inserts nothing): 它, or 比/是 written after the name
    told = retold(host, u, [(at, at + 1, name + ("" if m.group(1) else following[0]))], question=True)
    return told, clause_units(told)


def asked(problem: Problem, u: Units) -> str | None:
    """What the question asks, where it asks for a number itself: its name ("甲数"), "" for the generic
    number (这个数, 原数), else None ("这个数的(1/4)=．" asks for another amount)."""
    q = marked(problem.tokens, *u.spans[-1], u.qty_pos)
    m = _QUESTION.match(q)
    if m is None:
        return None
    return m.group(1) if m.group(1) in NAMES else ""


def donor_refusal(donor: Problem, u: Units, name: str) -> str | None:
    """Why a donor asking for number ``name`` ("" generic) cannot donate its narrative, if it cannot."""
    narrative = "".join(donor.tokens[:u.spans[-1][0]])
    if any(w in narrative for w in _OTHER + _WHOLE[:-1] + tuple(TERMS)):
        return "op1_zh_number_donor_has_another_number"  # "两数的和", "一个两位数", "另一个数", "减数"
    if re.search(r"的[，,．。；;]", narrative):
        return "op1_zh_number_donor_text_cut"  # Math23K 10251's "一个数的(1/6)是8的，": the text breaks off
    if any(narrative[e:e + 1].isdigit() or narrative[e:e + 1] == "(" for _, e in _mentions(narrative, name)):
        return "op1_zh_number_donor_text_garbled"  # Math23K's "一个数(1/3)比这个数的(1/4)多33": no 的 to read it by
    if set(quantity_slots(donor.expression)) != set(range(len(donor.quantities))):
        return "op1_donor_has_an_unused_quantity"  # Math23K 11458's "一个数的(1/5)5比...": a stray number in the data
    last = "".join(donor.tokens[slice(*u.spans[-2])]) if len(u.spans) > 1 else ""
    if last.startswith(("如果", "若", "假如")):
        return "op1_donor_narrative_ends_in_a_condition"
    if any(ch in narrative.replace(name, "") for ch in "甲乙丙"):
        return "op1_zh_number_donor_has_another_number"  # "甲是120，比乙数的(1/3)少30": 甲 is a second number
    if narrative.count("某") != narrative.count("某数"):
        return "op1_zh_number_donor_has_another_number"  # "某的(2/3)比一个数的70%少100": a 某 that is not the number
    generic = _generic_mentions(narrative)
    named = [n for n in NAMES if n in narrative]
    if name == "":
        if named or not any(narrative[s:e] in _INTRO for s, e in generic):
            return "op1_zh_number_donor_has_another_number"  # 甲数 beside 一个数, or no number introduced
        if sum(narrative[s:e] in _INTRO for s, e in generic) > 1:
            return "op1_zh_number_donor_has_another_number"  # "一个数 ... 一个数": two numbers introduced
    elif named != [name] or generic:
        return "op1_zh_number_donor_has_another_number"  # "甲数的(4/5)与乙数的(3/4)相等，乙数是24，甲数=．"
    return None


def results_clash(host: Problem, u: Units, c: int, name: str, donor: Problem, donor_u: Units) -> bool:
    """True when the donor's narrative names the result of an operation (商, 余数, 积, 差, 和) that the rest
    of the host names too, or that the host's statement ``name`` is ("积是968" told "一个数与3的积" would read
    "积与3的积"): the composed text would have two of them."""
    narrative = "".join(donor.tokens[:donor_u.spans[-1][0]])
    rest = "".join(host.tokens[:u.spans[c][0]] + host.tokens[u.spans[c][1]:])
    if term(name) in RESULTS:
        rest += name + "是"  # the narrative is told of the result the statement names
    return any(w in narrative and w in rest for w in _RESULTS) or bool(_SUM.search(narrative) and _SUM.search(rest))


def pronoun_clash(donor: Problem, u: Units, new: str) -> bool:
    """True when the host's name has a 它 of its own ("一个比的比值是(3/4)，它的前项是12") and the donor's narrative
    has a 它 too: "它的前项的(1/5)比它的(1/4)少10" leaves the second 它 the ratio or its term."""
    return "它" in new and "它" in "".join(donor.tokens[:u.spans[-1][0]])


def _mentions(text: str, name: str) -> list[tuple[int, int]]:
    """(start, end) of the donor narrative's mentions of its number (``name``, or "" for the generic one)."""
    return [(m.start(), m.end()) for m in re.finditer(name, text)] if name else _generic_mentions(text)


def merges_into_another_term(donor: Problem, u: Units, name: str, new: str) -> bool:
    """True when telling the donor's number as the host's term would write another term: "84被一个数除" told of
    减数 reads "84被减数除", the minuend."""
    if new not in TERMS or "被" + new not in TERMS:
        return False
    text = "".join(donor.tokens[:u.spans[-1][0]])
    return any(s and text[s - 1] == "被" for s, _ in _mentions(text, name))


def told_of(donor: Problem, u: Units, name: str, new: str) -> Problem:
    """The donor with its number (``name``, or the generic 一个数/某数/这个数 when "") written ``new`` in its
    narrative; quantities move with the text (the question is left as it was: operation 1 drops it)."""
    text = "".join(donor.tokens[:u.spans[-1][0]])
    label = _LABEL.match(text)  # "文字题：": the exercise's heading, not a clause; dropped inside the host
    dropped = [(0, label.end(), "")] if label else []
    last = len("".join(donor.tokens[:u.spans[-2][0]])) if len(u.spans) > 1 else len(text)
    if text[last:].rstrip("，,．。.；; ") in _CONNECTORS:  # "...还比原来小3．那么，": the 那么 led to its question
        dropped.append((last, len(text), ""))
    if name:
        return retold(donor, u, dropped + [(s, e, new) for s, e in _mentions(text, name)])
    bare = term(new)  # a term or result: introduced as the host names it, referred to as 这个减数, 这个积
    return retold(donor, u, dropped + [(s, e, new if bare is None or text[s:e] in _INTRO else "这个" + bare)
                                       for s, e in _mentions(text, "")])


def compose(problems: Sequence[Problem], p: int, units: Units, numbers: list[tuple[int, str]],
            donors: list[NumberDonor], cfg: AugmentConfig, rng, batch: CandidateBatch, made_texts: set[str],
            words: ContentWords, round_: int) -> None:
    """Operation 1 for a Chinese host whose statements ``numbers`` give the value of a named number: donors
    asking for a number, told of the host's, drawn as geca_op1 draws its donors, under the same cap; a
    statement whose next clause leaves its subject to it is composed into the host restated (restated()).
    (bench/op1_refusals.py reads this frame's ``host``, ``u``, ``c``, ``d``, ``made`` when a refusal is counted.)"""
    clauses, hosts = [], {}  # hosts: each statement's host, as written or restated (restated())
    for c, name in numbers:
        host, u = restated(problems[p], units, c, name) or (problems[p], units)
        refused = host_refusal(host, u, c, name)
        if refused:
            batch.rejected[refused] += 1
        else:
            clauses.append((c, name))
            hosts[c] = host, u
    if not clauses or not donors:
        batch.rejected["op1_no_statement_with_a_donor"] += 1
        return
    made: set[tuple[int, int]] = set()  # (clause, donor) pairs drawn for this host
    attempts, cap = ZH_ATTEMPTS * cfg.per_problem_cap, cfg.per_problem_cap
    for (c, name), (d, asked_name) in drawn_pairs(clauses, lambda clause: donors, rng, attempts, cap, batch,
                                                  len(batch.candidates), made, own=p):
        host, u = hosts[c]
        donor = problems[d]
        donor_u = clause_units(donor)
        if near_duplicate(words(problems[p]), words(donor)):
            batch.rejected["op1_donor_near_duplicate"] += 1  # the narrative would repeat the host's
            continue
        if results_clash(host, u, c, name, donor, donor_u):
            batch.rejected["op1_zh_number_result_said_twice"] += 1  # the donor's 商 beside the host's own 商
            continue
        if pronoun_clash(donor, donor_u, name):
            batch.rejected["op1_zh_number_pronoun_ambiguous"] += 1  # "它的前项 ... 比它的(1/4)少10"
            continue
        if merges_into_another_term(donor, donor_u, asked_name, name):
            batch.rejected["op1_zh_number_told_as_another_term"] += 1  # "84被减数除" would name the minuend
            continue
        told = told_of(donor, donor_u, asked_name, name)
        detail = f"clause={c} donor={donor.id} number={asked_name or '一个数'}->{name}"
        book(operation1(host, u, c, told, clause_units(told), detail, round_), batch, made_texts)
