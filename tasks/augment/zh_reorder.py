"""Chinese problem reordering: the question is asked first and the statements follow it after 已知,
in their own order: "一条小路长1000米，每天修50米，这条小路要修多少天？" becomes
"小路要修多少天？已知一条小路长1000米，每天修50米。". Quantities, expression and answer stay the same.

The statements keep their order (a statement that leans on the one before it, "比女生多(1/4)",
"其中...", "又运来...", stays after it); only the question moves. It moves only where it still says the
same thing when read before the statements, decided from the characters and jieba's words
(tasks/augment/zh.py):

- a clause that opens the question with a condition, its time or its place ("如果每天修50米，需要多少天？",
  "开出3小时后，两车相距多少千米？", "72千克水中，含氧多少千克？"), or a piece of it cut off by a comma
  ("A，B两城相距多少千米"), moves with it; a clause before it about the remainder ("余下的要在5天内完成，
  平均每天生产多少个") or going on from the statements ("照这样的速度，一共需要多少天", "再增加4辆卡车，
  一共...") sets its scope, also before a condition that moves ("照这样计算，如果...，可以坐多少人"), and one
  giving its purpose ("为了超产20%，") or only its basis ("按条款规定，", "按每小时5千米的速度，") frames it:
  refused; so is a condition with no consequent of its own left as the last statement, cut from the
  question by a full stop ("如果再行驶744千米．这辆汽车...");
- a leading connective (那么, 则, 所以, 因此) is dropped: it joins the question to what came before;
- a demonstrative before a noun the statements name ("这条小路", "这批货物", "这个工程队") is dropped, the
  bare noun then points at the statements' thing ("小路要修多少天？已知一条小路..."); one before a time
  ("这个月", "这一天") stays; a demonstrative with
  nothing the statements name after it ("这时", "这样", "这些"), or picking one of two the statements tell of
  ("其中一捆...，另一捆...，这捆铁丝长多少米"), is refused;
- 他/她 becomes the one name the problem gives; with no single name, or 它/他们/她们, it is refused;
- words that place the question after an earlier clause (又, 再, 然后, 其中, 其余, 另, 剩下的, 此时, 照这样)
  or a question with no subject of its own ("比女生多多少人", "是多少", "和乙数相差多少") are refused; a
  question may still open with a rate ("每组有多少个同学") or with 还 ("还剩多少页没看").

Every refusal is a counted reason ``reorder_zh_*``. :func:`question_clause` is the Chinese reader of where
the question is (the last clause asking 多少/几), which the consistency checks use on every Chinese problem.
"""
from __future__ import annotations

import re
from typing import Sequence

from mwp.text import CLAUSE_END, clause_spans
from tasks.augment import zh

Tagged = list[tuple[str, int | None]]  # (token, its position in the source problem; None: inserted)

_CONDITION_OPENERS = ("如果", "假如", "假设", "若", "要是", "倘若")
_TIME_CLAUSE_ENDS = ("后", "以后", "时", "时候")  # "两车同时开出3小时后，两车相距多少千米？": the question's time
_NOT_TIME_ENDS = ("/时", "小时")  # a rate or a duration ("速度是70千米/小时", "共同加工6小时"): a statement
# A clause before the question that opens with the remainder sets the question's scope ("余下的要在5天内完成，
# 平均每天生产多少个": per day of those 5 days); asked first, the question would read as the whole's average.
_REMAINDER = ("剩下", "余下", "其余", "剩余")
# So does a clause that goes on from the statements ("照这样的速度，一共需要多少天", "再增加4辆卡车，一共...").
_GOES_ON = ("照", "按这样", "按照这样", "这样", "像这样", "再")  # 再: a step still to come
# A clause before the question that gives its purpose ("为了超产20%，还需要加工多少个零件"), or only its basis
# ("按条款规定，", "按每小时5千米的速度，"), frames it; left at the end of the statements it is a fragment: refused.
# A basis clause that says something of its own stays a statement ("按售价的0.6售出仍赚30元", "按5：4：3分配给...").
_PURPOSE = ("为了", "为确保")
_BASIS = ("按", "根据", "依照", "依据")
_BASIS_ONLY_ENDS = ("规定", "速度", "标准")
# Words in the statements that tell of another one of a thing ("其中一捆铁丝长8米，另一捆铁丝重20千克"): a
# demonstrative of the question ("这捆铁丝") picks one of them, and the bare noun asked first would not.
_ANOTHER = ("另一", "另外一", "其中一")
# Words that give a condition its consequent in the same clause ("如果每人搬3张就少40张"); a condition without
# one ("如果每天节省0.3吨．") is the question's.
_CONSEQUENT = ("就", "则", "便", "那么", "需要", "要", "可以", "可", "能", "会")
_CONNECTIVES = ("那么", "所以", "因此", "于是", "则", "那")
_DEMONSTRATIVES = frozenset("这那该")
# Characters after a demonstrative that make it a time, a manner or a place, not a thing of the statements.
_NOT_A_THING = frozenset("时样么里儿边天般些次")
# A demonstrative before a time ("这个月", "这一天", "这星期") places the question in a time, not at a thing the
# statements name: it stays ("王老师这个月应缴纳...", where the bare "王老师月应缴纳" would not read).
_TIMES = ("月", "年", "星期", "周", "季度", "学期", "天", "日")
_NOT_TIMES = ("年级", "周长", "月饼", "日记", "天平", "天数")
_EXTRA_CLASSIFIERS = frozenset("批项种笔群片段")
_CLASSIFIER_CHARS = frozenset(c for c in zh.COUNT_CLASSIFIERS if len(c) == 1) | _EXTRA_CLASSIFIERS
_LEANING = ("又", "再", "然后", "其中", "其余", "其他", "其它", "另", "剩下的", "剩余的", "余下的", "此时", "此",
            "照这样", "同样", "它")
_PLURAL_PRONOUNS = ("他们", "她们", "它们")
# Openings zh.continues counts as leaning that a question may still start with: a rate it names ("每组有多少
#个同学") and "still" ("还剩多少页", "还要几天": what is left of the statements' story, told after it).
_STANDS_FIRST = ("每", "还")
_SENTENCE_ENDS = frozenset({"。", "？", "！", ".", "?", "!", "．"})
GIVEN = ("已", "知")


def is_question(tokens: tuple[str, ...], start: int, end: int) -> bool:
    """The clause asks 多少/几 (jieba's 多少岁, 几个, 几天 included), 几分之几 or 百分之几."""
    return any("多少" in w.text or w.text.startswith("几") or "几分之" in w.text or "百分之几" in w.text
               for w in zh.words(tokens) if start <= w.start < end)


def question_clause(tokens: Sequence[str], spans: Sequence[tuple[int, int]]) -> int:
    """Index of the question clause: the last clause that asks 多少/几, else the last clause (a problem
    reordered to "...多少天？已知..." has its question first)."""
    key = tuple(tokens)
    asking = [c for c, (a, b) in enumerate(spans) if is_question(key, a, b)]
    return asking[-1] if asking else len(spans) - 1


def _frames_the_question(clause: str) -> bool:
    """A purpose clause, or a basis clause that says nothing of its own (no number, or only a rule or speed)."""
    return clause.startswith(_PURPOSE) or clause.startswith(_BASIS) and (
        not any(ch.isdigit() for ch in clause) or clause.endswith(_BASIS_ONLY_ENDS))


def _has_consequent(condition: str) -> bool:
    """The condition clause says what follows from it ("...就少40张", "...需要15秒", "...少2.93元")."""
    rest = condition[len(next(o for o in _CONDITION_OPENERS if condition.startswith(o))):]
    return any(w in rest for w in _CONSEQUENT) or re.search(r"[多少]\d", rest) is not None


def _body(tokens: Sequence[str], start: int, end: int) -> tuple[int, int]:
    """The span without its trailing punctuation."""
    while end > start and tokens[end - 1] in CLAUSE_END:
        end -= 1
    return start, end


def _drop_demonstratives(tokens: tuple[str, ...], part: Tagged, narrative: str) -> Tagged | str:
    """The question without demonstratives before a noun the statements name, or a refusal reason."""
    out: Tagged = []
    i = 0
    while i < len(part):
        tok, pos = part[i]
        if tok not in _DEMONSTRATIVES:
            out.append(part[i])
            i += 1
            continue
        j = i + 1
        if j >= len(part) or part[j][0] in _NOT_A_THING:
            return "reorder_zh_question_demonstrative"
        joined = next((w for w in zh.words(tokens) if pos is not None and w.start == pos), None)
        # a classifier jieba joins to the demonstrative ("这栋", "这项") is one whatever the list says
        classified = part[j][0] in _CLASSIFIER_CHARS or (joined is not None and joined.end - joined.start == 2)
        j += classified
        rest = "".join(t for t, _ in part[j:j + 4])
        if rest.lstrip("一").startswith(_TIMES) and not rest.lstrip("一").startswith(_NOT_TIMES):
            out.extend(part[i:j])  # "这个月", "这一天", "这星期": a time told from now, kept as it is
            i = j
            continue
        named = next((k for k in range(len(rest), 0, -1) if rest[:k] in narrative and rest[:k].isalpha()), 0)
        noun = next((w for w in zh.words(tokens) if part[j][1] is not None and w.start == part[j][1]), None) \
            if j < len(part) else None
        if not named or not (classified or named >= 2 or (noun is not None and noun.flag.startswith("n"))):
            return "reorder_zh_question_demonstrative"
        head = noun.text if noun is not None else rest[:named]
        if any(re.search(f"{a}[^，,。．]?{re.escape(head)}", narrative) for a in _ANOTHER):
            return "reorder_zh_question_demonstrative_picks_one"
        i = j
    return out


def _resolve_pronouns(part: Tagged, names: set[str]) -> Tagged | str:
    """他/她 replaced by the problem's one name (paper 000 resolves pronouns the same way)."""
    out: Tagged = []
    for k, (tok, pos) in enumerate(part):
        if tok in ("他", "她") and not (k and part[k - 1][0] == "其"):
            if len(names) != 1:
                return "reorder_zh_question_pronoun_unresolved"
            out.extend((ch, None) for ch in next(iter(names)))
        else:
            out.append((tok, pos))
    return out


def reordered(problem) -> Tagged | str:
    """The reordered tokens of a Chinese problem, each with its source position, or a refusal reason."""
    tokens = tuple(problem.tokens)
    spans = clause_spans(list(tokens))
    q = question_clause(tokens, spans)
    if not is_question(tokens, *spans[q]):
        return "reorder_zh_question_not_found"
    if q != len(spans) - 1:
        return "reorder_zh_question_not_last"
    if sum(is_question(tokens, a, b) for a, b in spans) > 1:
        return "reorder_zh_two_questions"  # "...少多少吨？多少．": which one moves is not clear
    first = q
    while first > 0 and tokens[spans[first - 1][1] - 1] not in _SENTENCE_ENDS:
        before = "".join(t for t in tokens[slice(*spans[first - 1])] if any(ch.isalnum() for ch in t))
        if before.startswith(_REMAINDER + _GOES_ON):  # also before a condition that moves with the question
            return "reorder_zh_question_scoped_by_the_clause_before"
        if _frames_the_question(before):
            return "reorder_zh_question_framed_by_the_clause_before"
        timed = before.endswith(_TIME_CLAUSE_ENDS) and not before.endswith(_NOT_TIME_ENDS) or before.endswith("中")
        if not (before.startswith(_CONDITION_OPENERS) or timed or len(before) <= 2):
            break
        first -= 1
    if first == 0:
        return "reorder_zh_no_statement"
    left = "".join(t for t in tokens[slice(*spans[first - 1])] if any(ch.isalnum() for ch in t))
    if left.startswith(_CONDITION_OPENERS) and not left.startswith("若干") and not _has_consequent(left):
        # "...，如果再行驶744千米．这辆汽车一共需要多少时间？": a condition cut from its question by a full stop
        return "reorder_zh_condition_left_behind"
    start, end = _body(tokens, spans[first][0], spans[q][1])
    quote_end = start
    while quote_end < end and not any(ch.isalnum() for ch in tokens[quote_end]):
        quote_end += 1  # the closing quote of a statement ("...没看．”那么，..."): it stays with the statements
    start = quote_end
    while True:
        while start < end and tokens[start] in CLAUSE_END:
            start += 1
        text = "".join(tokens[start:end])
        lead = next((c for c in _CONNECTIVES if text.startswith(c) and len(text) > len(c)), None)
        if lead is None or (lead == "那" and text[1:2] in _CLASSIFIER_CHARS | _NOT_A_THING):
            break
        start += len(lead)
    text = "".join(tokens[start:end])
    if any(p in text for p in _PLURAL_PRONOUNS):
        return "reorder_zh_question_pronoun_plural"
    if any(w in text for w in _LEANING):
        return "reorder_zh_question_leans_on_statement"
    opener = next((w for w in zh.words(tokens) if w.start >= start and w.flag != "x"), None)
    opens_with_demonstrative = opener is not None and opener.text[:1] in _DEMONSTRATIVES
    if opener is not None and opener.start < end and not opens_with_demonstrative \
            and not text.startswith(_CONDITION_OPENERS + _STANDS_FIRST) and zh.continues(tokens, opener.start, end):
        return "reorder_zh_question_without_subject"
    n_start, n_end = _body(tokens, 0, spans[first - 1][1])
    narrative = "".join(tokens[n_start:n_end])
    part = _drop_demonstratives(tokens, [(tokens[i], i) for i in range(start, end)], narrative)
    if isinstance(part, str):
        return part
    part = _resolve_pronouns(part, zh.names_in(tokens[n_start:n_end]))
    if isinstance(part, str):
        return part
    given: Tagged = [] if narrative.startswith("已知") else [(ch, None) for ch in GIVEN]
    statements = [(tokens[i], i) for i in [*range(n_start, n_end), *range(spans[first][0], quote_end)]]
    return part + [("？", None)] + given + statements + [("。", None)]
