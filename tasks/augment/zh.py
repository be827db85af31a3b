"""Chinese reading for the entity rules, from jieba's segmenter and part-of-speech tags (jieba ships its
dictionary; nothing is downloaded). The project's own number reading stays: only the text between two
numbers is segmented (jieba would split a fraction such as ``(1/6)``), and every word is mapped back to
the problem's character tokens.

What the English rules read, read here from the words:
- the counted entity of a quantity: the classifier or unit after the number and the noun after that
  ("5个苹果" -> ``个:苹果``, "760千克柴油" -> ``千克:柴油``, "144只" -> ``只``); a bare classifier that the
  problem attaches to exactly one noun elsewhere is that noun's ("还剩多少千克" -> ``千克:柴油``);
- the question's entity: the same after 多少/几, else the noun the question asks about ("乙数是多少" -> 乙数);
- holders: a person's name (jieba's ``nr`` tag, or the names lexicon and its 小X pattern);
- the predicate: verbs, nouns and adjectives of a clause, without the entity, names, numbers, classifiers
  and function words ("小明有5个苹果" -> {有}).
Anything the tags do not give is ``None``; callers count it, never guess.

jieba keeps a prefix cache; it is written under the user's cache directory (``$XDG_CACHE_HOME`` or
``~/.cache``, ``compaug/jieba``), or the temp directory when that cannot be written, never to a fixed
shared path. Building it without the cache takes about a second and needs no network.
"""
from __future__ import annotations

import logging
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, Sequence

from mwp.text import CLAUSE_END, is_number_token

# Classifiers and units a number is followed by (jieba tags several as adverbs or numerals: 只/d, 页/m).
MEASURE_UNITS = frozenset(
    "元 角 分 元钱 块钱 米 厘米 分米 毫米 千米 公里 里 平方米 平方厘米 平方分米 平方千米 公顷 亩 立方米 立方厘米 立方分米 "
    "升 毫升 吨 千克 克 公斤 斤 两 小时 分钟 秒 秒钟 天 日 年 月 周 星期 岁 度 %".split())
COUNT_CLASSIFIERS = frozenset(
    "个 只 本 页 支 枝 张 条 块 件 辆 棵 朵 头 匹 台 架 盒 箱 包 袋 瓶 杯 碗 盆 筐 篮 人 名 位 次 道 题 份 层 行 排 组 套 "
    "双 对 副 粒 颗 根 把 所 间 座 节 场 首 篇 幅 片 堆 捆 桶 罐 串 束 封 部 艘 列 户 家 班 队 株 只 尾 枚 面 扇 顶 "
    "件 滴 段 筒 批 车 趟 圈 步 口 门".split())
CLASSIFIERS = MEASURE_UNITS | COUNT_CLASSIFIERS
QUESTION_WORDS = ("多少", "几")
PRONOUNS_F, PRONOUNS_M = frozenset({"她"}), frozenset({"他"})
# Words a question may add without asking for something else, and the statement-side subset.
# (原来 and 现在 are not neutral: "原来售价" and "现在售价" are two prices.)
NEUTRAL = frozenset("一共 共 总共 共有 一共有".split())
# The classifier of a determiner ("一根", "这根" -> #根) is compared on its own (zh_refusal: 一支 and 一箱 differ),
# so "3米长的绳子" and "这根绳子长多少米" say the same thing.
DETERMINED = "#"
NEUTRAL = NEUTRAL | frozenset(DETERMINED + c for c in CLASSIFIERS)
NEUTRAL_STATEMENT = NEUTRAL
RATE_WORDS = frozenset("每 平均 每天 每小时 每分钟 每千克 每个 每人 每本 每次 每份 每件 每箱 每盒 每袋 每辆 每套".split())
_CONTENT_FLAGS = ("n", "v", "a", "vn", "an", "j", "l", "i", "b")
# Nouns that name a property of something else ("原价", "面积", "体重"): a statement that names only these
# does not say whose property it is.
ATTRIBUTES = frozenset(
    "原价 售价 现价 定价 进价 价格 价钱 单价 总价 成本 利润 利息 本金 工资 收入 面积 体积 容积 周长 长 宽 高 长度 宽度 高度 "
    "厚度 深度 重量 体重 速度 时间 路程 全长 全程 总数 人数 总人数 水深 底 底边 邻边 半径 直径 产量 数量 总量 效率 距离 "
    "价 钱 费用 总长 全部 总共 结果 部分 任务 工程 计划 工作 总价 一半".split())
# Nouns that name a kind of things, not one thing (水果 is apples and pears): never swapped to or from.
GENERAL_NOUNS = frozenset("水果 蔬菜 东西 物品 商品 货物 粮食 动物 植物 图书 书 新书 课外书 读物 课外读物 书籍 文具 用品 家具 "
                          "器材 食品 零食 饮料 材料 果树 树 树木".split())
# Words two unrelated narratives share without saying the same thing.
_GENERIC = frozenset("有 是 用 多 少 比 倍 每 共 一共 还 又 再 到 要 需要 用去".split())
_NOT_CONTENT = frozenset("了 的 地 得 着 过 是 把 被 给 和 与 及 或 又 再 也 都 就 才 还 只 比 从 向 往 在 到 为 对 "
                         "这 那 这些 那些 它 它们 他 她 他们 她们 我 我们 你 你们 多 少 后 前 中 里 上 下".split())
GIVEN_CHARS = "明红华芳刚丽军强林东亮玲兰英敏燕伟杰平静莉娟雪梅云霞婷颖磊勇涛斌超鹏飞宇浩凯健龙峰阳文武新华玉珍"
# and the 小X names of Math23K that jieba tags as nouns or cuts (小兵/n, 小巧/n, 小胖/z; 小李 and 小王, in 72 problems,
# cut as 小/a + 李), a person in every context of them read; 小花, 小马, 小叶, 小金, 小黄 and 小高 are left out
# (small flower, pony, leaf, 小金鱼 cut as 小金 + 鱼, 小黄山, and the adjective)
GIVEN_CHARS += "兵胖巧张亚海民毛洋利乐涵程影王李刘杨周陈赵吴胡"


class Word(NamedTuple):
    start: int  # first token of the word in the problem's tokens
    end: int  # one past its last token
    text: str
    flag: str  # jieba's tag; "m" for the project's numbers, "x" for punctuation


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    for candidate in (Path(base) / "compaug" / "jieba", Path(tempfile.gettempdir()) / f"compaug-jieba-{os.getuid()}"):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            if os.access(candidate, os.W_OK):
                return candidate
        except OSError:
            continue
    raise OSError("no writable directory for jieba's cache (tried the user cache and the temp directory)")


@lru_cache(maxsize=1)
def tagger():
    """A private jieba POS tagger (the global one is left alone), with the names lexicon added as ``nr``."""
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    tokenizer.tmp_dir = str(_cache_dir())
    tokenizer.cache_file = "prefix.cache"
    pos = jieba.posseg.POSTokenizer(tokenizer)
    from tasks.augment.entities import load_names

    names = {"".join(n) for (lang, _), group in load_names().items() if lang == "zh" for n in group}
    names |= {"小" + ch for ch in GIVEN_CHARS}
    for name in sorted(names):
        pos.add_word(name, 100000, "nr")
    for unit in sorted(CLASSIFIERS):
        if len(unit) > 1:
            pos.add_word(unit, 100000, "q")
    return pos


@lru_cache(maxsize=65536)
def words(tokens: tuple[str, ...]) -> tuple[Word, ...]:
    """The problem's tokens as words: numbers kept whole (flag ``m``), the text between them segmented and
    tagged by jieba, each word mapped back to its token span. One jieba call per problem: every number is
    written as a line break, which jieba never joins to a word."""
    text, ends, offset = [], {}, 0
    for k, tok in enumerate(tokens):
        piece = "\n" if _is_number(tok) else tok
        text.append(piece)
        offset += len(piece)
        ends[offset] = k + 1
    out, at, first = [], 0, 0
    for pair in tagger().cut("".join(text), HMM=False):
        at += len(pair.word)
        if at not in ends:
            continue  # a word boundary inside a token: the pieces join up to the token's end
        last = ends[at]
        piece = "".join(tokens[first:last])
        if last - first == 1 and _is_number(tokens[first]):
            flag = "m"
        elif piece in CLAUSE_END or not any(ch.isalnum() for ch in piece):
            flag = "x"
        else:
            flag = pair.flag
        out.append(Word(first, last, piece, flag))
        first = last
    return tuple(out)


def _is_number(token: str) -> bool:
    return token[:1] in _NUMBER_START and is_number_token(token)


_NUMBER_START = frozenset("0123456789(.-")


_SURNAMES = frozenset("王李张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗梁宋郑谢韩唐冯于董萧程曹袁邓许傅沈曾彭吕苏卢蒋蔡贾丁魏薛叶"
                      "阎余潘杜戴夏钟汪田任姜范方石姚谭廖邹熊金陆郝孔白崔康毛邱秦江史顾侯邵孟龙万段雷钱汤尹黎易常武乔贺赖龚文小")
# jieba's dictionary tags some common nouns as names (松树, 白兔): a name does not end in these.
_NOT_NAME_ENDS = frozenset("树花草果菜鱼鸡鸭鹅猪牛羊兔鸟车船书笔本纸布米面油桃梨瓜豆球猫狗马熊虎龟蛇猴鹿")


def is_name(word: Word) -> bool:
    """A person's name: jieba's ``nr`` that starts with a common surname (or 小) and does not end like a
    thing (松树, 白兔 are tagged ``nr`` by the dictionary)."""
    text = word.text
    return (word.flag.startswith("nr") and 2 <= len(text) <= 4 and text[0] in _SURNAMES
            and text[-1] not in _NOT_NAME_ENDS)


def is_noun(word: Word) -> bool:
    return (word.flag[:1] == "n" and not is_name(word) and word.text not in CLASSIFIERS
            and word.text not in _NOT_CONTENT)


def groups(tokens: Sequence[str], spans: Sequence[tuple[int, int]] | None = None) -> set[str]:
    """Words that tell one group from another (jieba's ``b``: 五年级, 三年级) in the given clauses."""
    ws = words(tuple(tokens))
    return {w.text for w in ws if w.flag == "b" and (spans is None or any(a <= w.start < b for a, b in spans))}


def _entity_at(ws: Sequence[Word], k: int) -> str | None:
    """Classifier (or unit) at words[k] and the noun after it: ``unit:noun``, ``unit``, or None."""
    if k >= len(ws) or ws[k].text not in CLASSIFIERS:
        if k < len(ws) and ws[k].flag == "q":
            unit = ws[k].text
        else:
            return None
    else:
        unit = ws[k].text
    if k + 1 < len(ws) and is_noun(ws[k + 1]):
        return f"{unit}:{ws[k + 1].text}"
    return unit


def _resolve(entity: str | None, attached: dict[str, set[str]]) -> str | None:
    """A bare classifier becomes ``unit:noun`` when the problem attaches it to exactly one noun."""
    if entity is None or ":" in entity:
        return entity
    nouns = attached.get(entity, set())
    return f"{entity}:{next(iter(nouns))}" if len(nouns) == 1 else entity


def _attached(ws: Sequence[Word]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for k in range(len(ws)):
        e = _entity_at(ws, k)
        if e and ":" in e:
            unit, noun = e.split(":")
            out.setdefault(unit, set()).add(noun)
    return out


def quantity_entities(tokens: tuple[str, ...], positions: Sequence[int]) -> tuple[str | None, ...]:
    ws = words(tokens)
    at = {w.start: k for k, w in enumerate(ws)}
    attached = _attached(ws)
    out = []
    for pos in positions:
        k = at.get(pos)
        if pos < len(tokens) and tokens[pos].endswith("%"):
            out.append("%")
        else:
            out.append(_resolve(_entity_at(ws, k + 1), attached) if k is not None else None)
    return tuple(out)


def question_entity(tokens: tuple[str, ...], start: int, end: int) -> str | None:
    """After 多少/几: the classifier and noun (``多少个苹果`` -> 个:苹果); 多少 with nothing after it: the last
    noun before it in the clause ("乙数是多少" -> 乙数); 百分之几 -> %; else None."""
    ws = words(tokens)
    inside = [k for k, w in enumerate(ws) if start <= w.start < end]
    for k in inside:
        w = ws[k]
        if w.text in QUESTION_WORDS or (w.text.startswith("几") and len(w.text) == 2):
            if k > 0 and ws[k - 1].text.endswith("百分之"):
                return "%"
            if w.text.startswith("几") and len(w.text) == 2:  # jieba's 几个, 几天
                unit = w.text[1]
                nxt = ws[k + 1] if k + 1 < len(ws) and is_noun(ws[k + 1]) else None
                return _resolve(f"{unit}:{nxt.text}" if nxt else unit, _attached(ws)) if unit in CLASSIFIERS else None
            e = _entity_at(ws, k + 1)
            if e:
                return _resolve(e, _attached(ws))
            before = [ws[j] for j in inside if j < k and is_noun(ws[j])]
            return before[-1].text if before else None
    if any(ws[k].text in ("百分之几", "百分之多少") for k in inside):
        return "%"
    return None


def holder(tokens: tuple[str, ...], start: int, end: int, protagonist: str | None, unresolved: str) -> str | None:
    """The first name of tokens[start:end]; 他/她 stand for ``protagonist``; else None."""
    for w in words(tokens):
        if start <= w.start < end:
            if is_name(w):
                return w.text
            if w.text in PRONOUNS_F | PRONOUNS_M:
                return protagonist or unresolved
    return None


def names_in(tokens: tuple[str, ...]) -> set[str]:
    return {w.text for w in words(tokens) if is_name(w)}


def pronoun_gender(tokens: Sequence[str]) -> str | None:
    text = "".join(tokens)
    female, male = "她" in text, "他" in text and "其他" not in text
    return "f" if female and not male else "m" if male and not female else ("both" if female else None)


def predicate(tokens: tuple[str, ...], start: int, end: int, entity: str | None) -> frozenset[str]:
    """Content words of tokens[start:end] (verbs, nouns, adjectives, time words such as 上午, ordinals and
    grades such as 第二天 and 五年级, cue words such as 比 and 倍), without the entity's words, names,
    pronouns, numbers, classifiers and the interrogative; a determiner gives its classifier marked ``#``
    ("一根", "这根" -> #根), which matching compares on its own (NEUTRAL, zh_refusal)."""
    parts = set(entity.split(":")) if entity else set()
    out = set()
    for w in words(tokens):
        if not start <= w.start < end or w.text in parts or w.text in CLASSIFIERS or is_name(w):
            continue
        if w.text in ("比", "倍", "每", "剩", "剩下", "还剩", "多", "少") or w.text in RATE_WORDS:
            out.add(w.text)
        elif w.flag.startswith(_CONTENT_FLAGS) and w.text not in _NOT_CONTENT \
                and w.text not in QUESTION_WORDS:
            out.add(w.text)
        elif (w.flag == "t" or (w.flag == "m" and not _is_number(w.text) and not _determiner(w.text))) \
                and w.text not in QUESTION_WORDS and not w.text.startswith(QUESTION_WORDS):
            out.add(w.text)
    return frozenset(out | _determiners(tokens, start, end))


def _determiners(tokens: tuple[str, ...], start: int, end: int) -> set[str]:
    """The classifiers of the clause's determiners, marked ``#`` ("一根绳子", "这根绳子" -> #根; jieba tags them m,
    r or mq, or cuts 这/条 in two), leaving out one that determines a place ("这个果园": the orchard, not what it
    counts)."""
    ws = [w for w in words(tokens) if start <= w.start < end]
    out = set()
    for k, w in enumerate(ws):
        if _determiner(w.text) and len(w.text) == 2 and w.text[-1] in CLASSIFIERS:
            classifier, after = w.text[-1], ws[k + 1] if k + 1 < len(ws) else None
        elif w.text in ("这", "那", "该") and k + 1 < len(ws) and ws[k + 1].text in COUNT_CLASSIFIERS:
            classifier, after = ws[k + 1].text, ws[k + 2] if k + 2 < len(ws) else None
        else:
            continue
        if w.text[0] == "每" or after is not None and after.text in places(tuple(tokens)):
            continue
        out.add(DETERMINED + classifier)
    return out


def determiners(predicate_words: frozenset[str]) -> frozenset[str]:
    """The determiner classifiers of a predicate (``#根``)."""
    return frozenset(w for w in predicate_words if w.startswith(DETERMINED))


def _determiner(text: str) -> bool:
    """"一根", "一个", "这条", "两": a count word before a noun, not an ordinal or a grade."""
    return text[:1] in "一这那每某该各" and len(text) <= 2 or text in ("两", "几", "多")


def has_noun(predicate_words: frozenset[str], tokens: tuple[str, ...]) -> bool:
    """The predicate names a thing (a noun of the problem that is not a property such as 原价 or 面积),
    not only a verb or a property ("长", "有", "看", "原价")."""
    nouns = {w.text for w in words(tokens) if is_noun(w) or w.flag == "b"}
    return bool((predicate_words & nouns) - ATTRIBUTES)


def said_words(tokens: Sequence[str], spans: Sequence[tuple[int, int]]) -> set[str]:
    """Every predicate word of the given clauses (entities included), generic verbs left out."""
    key = tuple(tokens)
    out: set[str] = set()
    for a, b in spans:
        out |= predicate(key, a, b, None)
        out |= {w.text for w in words(key) if a <= w.start < b and is_name(w)}
    return out - _GENERIC


def introduces(tokens: Sequence[str]) -> bool:
    """The text opens by introducing something ("一件商品", "某校"): it cannot follow a clause that has
    introduced the host's own."""
    first = next((w for w in words(tuple(tokens)) if w.flag != "x"), None)
    return first is not None and first.text[:1] in "一某" and not _is_number(first.text)


_CONTINUES = ("比", "是", "占", "其中", "每", "相当于", "等于", "正好", "刚好", "恰好", "它", "这", "那", "为", "相当",
              "再", "又", "还", "和", "与", "同")


def continues(tokens: tuple[str, ...], start: int, end: int) -> bool:
    """The clause leans on the one before it ("比女生多(1/4)", "是总数的60%", "每个32元"): it has no
    subject of its own, so the clause before it cannot be replaced by another narrative."""
    first = next((w for w in words(tokens) if start <= w.start < end and w.flag != "x"), None)
    return first is not None and (first.text.startswith(_CONTINUES) or first.flag == "p")


def nouns_of_text(tokens: Sequence[str]) -> set[str]:
    return {w.text for w in words(tuple(tokens)) if is_noun(w) and len(w.text) > 1}


def is_rate(tokens: tuple[str, ...], start: int, end: int) -> bool:
    """"每本12元", "平均每天": a rate, not an amount a narrative can replace."""
    return any("每" in w.text or w.text == "平均" for w in words(tokens) if start <= w.start < end)


def clause_words(tokens: tuple[str, ...], start: int, end: int) -> set[str]:
    return {w.text for w in words(tokens) if start <= w.start < end and w.flag != "x"}


def noun_mentions(tokens: tuple[str, ...], noun: str) -> tuple[list[Word], int]:
    """The words equal to ``noun`` and how many times its characters occur in the text in all (more
    occurrences than words: the noun sits inside a longer word, "苹果树")."""
    ws = [w for w in words(tokens) if w.text == noun]
    return ws, "".join(tokens).count(noun)


def rated_nouns(tokens: tuple[str, ...]) -> set[str]:
    """What a text gives a rate for ("每个苹果2元", "每本12元" -> 苹果, 本)."""
    ws = words(tokens)
    out = set()
    for k, w in enumerate(ws):
        if w.text.startswith("每"):
            if len(w.text) > 1:
                out.add(w.text[1:])
            if k + 1 < len(ws) and (is_noun(ws[k + 1]) or ws[k + 1].text in CLASSIFIERS):
                out.add(ws[k + 1].text)
    return out


def count_noun(entity: str | None) -> str | None:
    """The noun of a counted entity a swap may replace (``个:苹果`` -> 苹果); None for units and money."""
    if not entity or ":" not in entity:
        return None
    unit, noun = entity.split(":", 1)
    return noun if unit in COUNT_CLASSIFIERS and noun not in CLASSIFIERS else None


def is_content(word: Word) -> bool:
    """A verb, noun or adjective that is not a function word, a classifier or a name."""
    return (word.flag.startswith(_CONTENT_FLAGS) and not is_name(word) and word.text not in _NOT_CONTENT
            and word.text not in CLASSIFIERS and word.text not in QUESTION_WORDS)


# One character each, but for the words: not 学 (数学, 同学 are no places); a vehicle (车) is a setting of its own
_PLACE_ENDS = tuple("园室角村厂店站场校区馆库队组班车间院堂") + ("小学", "中学", "大学")


def places(tokens: Sequence[str]) -> set[str]:
    """Nouns that name where something is (公园, 果园, 图书角, 车间; jieba's ``s``/``ns`` too)."""
    return {w.text for w in words(tuple(tokens))
            if (w.flag in ("s", "ns", "nt") or (is_noun(w) and w.text.endswith(_PLACE_ENDS))) and len(w.text) > 1}
