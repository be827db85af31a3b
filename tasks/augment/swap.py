"""Consistent entity swaps, shared by operation 2 and entity substitution: a name or a counted noun is
replaced everywhere in a problem, question included, in every form it takes (singular, plural,
capitalized, possessive), so that no trace of the old entity survives; a swap that would merge two
entities (the new one is already there) or leave a pronoun of the wrong gender is refused.

Alternatives come from the pool itself, as GECA finds them (paper 003): two entities of one kind are
alternatives when they fill the same environment, the clause with the entity replaced by a
placeholder, quantities left out and names written ``<name>``, and that environment holds a content
word ("<name> picked <0>" licenses apples ~ pears; "There are <0>" licenses nothing).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

from lemminflect import getLemma

from mwp.problem import Problem
from tasks.augment.base import UNIT_WORDS, Slot, assemble, clause_units
from tasks.augment.entities import _FUNCTION, INVARIANT, SINGULAR_PRONOUNS, entity_key, names_in, plural, read, singular
from tasks.augment import zh
from tasks.augment.licence import attested, verb_refusal
from tasks.augment.morph import lemma
from tasks.augment.base import skeleton

_FEMALE = frozenset({"she", "her", "hers", "herself"})
_MALE = frozenset({"he", "him", "his", "himself"})
# coins are money of a fixed value the expression writes as a constant ("3 dimes" is 3 * 0.1): renamed,
# the constant would stay the old coin's
_COINS = frozenset({"penny", "nickel", "dime", "quarter"})
_NOT_SWAPPED = frozenset({"dollar", "percent", "year"}) | _COINS | {entity_key(u) for u in UNIT_WORDS}


@dataclass(frozen=True)
class Entity:
    kind: str  # "name" or "noun"
    key: str  # the name, or the folded noun (entities.entity_key)
    singular: str = ""  # noun surfaces to write (a name is written as its key)
    plural: str = ""
    classifiers: frozenset = frozenset()  # Chinese: the count classifiers the pool uses with the noun


def nouns_of(problem: Problem) -> set[str]:
    """Folded counted nouns of the problem that may be swapped: never units, money (coins too) or percent, nor a noun
    with an "of" complement ("pieces of clothing"). Chinese: the noun after a count classifier (个:苹果 -> 苹果)."""
    if problem.language == "zh":
        return {n for n in map(zh.count_noun, read(problem).quantity_entities) if n}
    return {e for e in read(problem).quantity_entities if e and ":" not in e and e not in _NOT_SWAPPED
            and e.isalpha()}


_TITLES = frozenset({"Mr", "Mrs", "Ms", "Dr", "Miss", "Uncle", "Aunt", "Grandma", "Grandpa", "Coach", "Prof"})


def _bound_mention(tokens: Sequence[str], i: int, kind: str) -> bool:
    """A mention the swap cannot rewrite alone: a name after a title ("Mrs. Hilt"), a noun inside a
    compound or after a modifier ("book case", "mystery books": the new noun would not fit them), a noun
    with a bare "of" complement ("pieces of candy": "cupcakes of candy" is no candy)."""
    before = tokens[i - 1] if i > 0 else ""
    before2 = tokens[i - 2] if i > 1 else ""
    if kind == "name":
        return before in _TITLES or (before == "." and before2 in _TITLES)
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    after2 = tokens[i + 2] if i + 2 < len(tokens) else ""
    modifier = before.isalpha() and before.islower() and before not in _FUNCTION
    compound = after.isalpha() and after.islower() and after not in _FUNCTION and not _inflected_verb(after)
    complement = after == "of" and after2.isalpha() and after2.islower() and after2 not in _FUNCTION
    return modifier or compound or complement


def _inflected_verb(word: str) -> bool:
    """"costs", "weighs", "baked": a verb written with an ending, so the noun before it is its subject
    ("each cookie costs 2"), not the first half of a compound ("cookie jar")."""
    return lemma(word) != word and bool(getLemma(word, upos="VERB", lemmatize_oov=False))


def pronoun_gender(tokens: Sequence[str]) -> str | None:
    lower = {t.lower() for t in tokens}
    female, male = bool(lower & _FEMALE), bool(lower & _MALE)
    return "f" if female and not male else "m" if male and not female else ("both" if female else None)


@dataclass
class PoolEntities:
    """The alternatives, surfaces and genders the pool shows."""

    alternatives: dict[tuple[str, str], set[str]]  # (kind, key) -> other keys sharing an environment
    surfaces: dict[str, tuple[str, str]]  # noun key -> (singular, plural) as written in the pool
    gender: dict[str, str]  # name -> "f" / "m" (the lexicon, else the original one-name problems' pronouns, if they agree)
    classifiers: dict[str, set[str]] = None  # Chinese noun -> count classifiers seen with it ("个", "本")
    takes: dict[str, frozenset[str]] = None  # selective verb -> nouns the original problems give it (licence.py)

    def entity(self, kind: str, key: str) -> Entity:
        if kind == "noun" and _is_cjk(key):
            return Entity("noun", key, classifiers=frozenset((self.classifiers or {}).get(key, ())))
        if kind == "name" or _is_cjk(key):
            return Entity("name", key)
        one, many = self.surfaces.get(key, (key, key) if key in INVARIANT else (key, plural(key)))
        return Entity("noun", key, one, many)


def _has_content(env: Sequence[str]) -> bool:
    return any(t.isalpha() and t.lower() not in _FUNCTION and t[:1].islower() for t in env)


def pool_entities(problems: Sequence[Problem], lexicon_gender: dict[str, str] | None = None) -> PoolEntities:
    by_env: dict[tuple, set[str]] = defaultdict(set)
    classifiers: dict[str, set[str]] = defaultdict(set)
    seen_forms: dict[str, dict[bool, str]] = defaultdict(dict)
    votes: dict[str, set[str]] = defaultdict(set)
    for problem in problems:
        if problem.language == "zh":
            _zh_environments(problem, by_env, votes)
            for entity in read(problem).quantity_entities:
                if zh.count_noun(entity):
                    unit, noun = entity.split(":", 1)
                    classifiers[noun].add(unit)
            continue
        if problem.language != "en":
            continue
        nouns, names = nouns_of(problem), names_in(problem.tokens)
        # SD's decomposed parts join two problems' clauses ("Betty has 12 oranges ... how many rides could
        # he go on?"), so their pronouns say nothing of a name's gender.
        if len(names) == 1 and problem.provenance.round == 0 and problem.provenance.operator != "sd_decomposition":
            (name,), g = tuple(names), pronoun_gender(problem.tokens)
            if g in ("f", "m"):
                votes[name].add(g)
        units = clause_units(problem)
        for c in range(len(units.spans)):
            tokens, _ = skeleton(units, c)
            base = [t.removesuffix("'s") for t in tokens]
            masked = tuple("<name>" if b in names or b.lower() in SINGULAR_PRONOUNS else t for b, t in zip(base, tokens))
            for i, b in enumerate(base):
                if b in names:
                    kind, key = "name", b
                elif b.isalpha() and b.islower() and entity_key(b) in nouns:
                    kind, key = "noun", entity_key(b)
                    seen_forms[key].setdefault(singular(b) == b, b)
                else:
                    continue
                env = masked[:i] + ("<0>",) + masked[i + 1:]
                if _has_content(env):
                    by_env[(kind, env)].add(key)
    alternatives: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (kind, _), keys in by_env.items():
        for key in keys:
            alternatives[(kind, key)] |= keys - {key}
    surfaces = {key: ((key, key) if key in INVARIANT else
                      (f.get(True, singular(f.get(False, key))), f.get(False, plural(f.get(True, key)))))
                for key, f in seen_forms.items()}
    return PoolEntities(dict(alternatives), surfaces, _genders(votes, lexicon_gender or {}), dict(classifiers),
                        attested(problems))


def _is_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _zh_environments(problem: Problem, by_env: dict, votes: dict) -> None:
    """Chinese environments: each clause's words, numbers left out, names and 他/她 written ``<name>``,
    the entity (a name or a counted noun) written ``<0>``; a content word must remain."""
    tokens = tuple(problem.tokens)
    nouns, names = nouns_of(problem), zh.names_in(tokens)
    if len(names) == 1 and problem.provenance.round == 0:
        g = zh.pronoun_gender(tokens)
        if g in ("f", "m"):
            votes[next(iter(names))].add(g)
    ws = zh.words(tokens)
    for start, end in clause_units(problem).spans:
        clause = [w for w in ws if start <= w.start < end and w.flag not in ("m", "x")]
        masked = tuple("<name>" if w.text in names or w.text in zh.PRONOUNS_F | zh.PRONOUNS_M else w.text for w in clause)
        for i, w in enumerate(clause):
            kind = "name" if w.text in names else "noun" if w.text in nouns - zh.GENERAL_NOUNS else None
            if kind is None:
                continue
            env = masked[:i] + ("<0>",) + masked[i + 1:]
            if any(_specific(x) for k, x in enumerate(clause) if k != i and masked[k] != "<name>"):
                by_env[(kind, ("zh",) + env)].add(w.text)


# Words any counted thing can fill in ("有个<0>", "一共有个<0>", "平均每个<0>", "每个<0>的价格是"): an
# environment made only of these licenses 座位 ~ 杯子 and 小组 ~ 篮球, so it licenses nothing.
_ANY_THING = frozenset("有 是 共有 一共 一共有 总共 还有 平均 每个 价格 价钱 单价 重 需要 要 用 买 卖 多 少 剩 剩下 还剩".split())


def _specific(word: "zh.Word") -> bool:
    """A content word that says something of the entity beyond "there are N of them" or "each costs"."""
    return zh.is_content(word) and word.text not in _ANY_THING and word.text not in zh.ATTRIBUTES


def _genders(votes: dict[str, set[str]], lexicon: dict[str, str]) -> dict[str, str]:
    """The lexicon's genders, then every other name whose one-name problems of the original pool agree on
    its pronouns. A name the data calls both (MAWPS: "Harold ... He" and "Harold ... her class") stays
    unknown, so a swap to or from it is refused where a pronoun would have to agree. Augmented problems
    do not vote: a kept swap with a wrong pronoun would otherwise license more of them."""
    out = dict(lexicon)
    for name, said in votes.items():
        if name not in out and len(said) == 1:
            out[name] = next(iter(said))
    return out


def _matches(token: str, old: Entity) -> bool:
    base = token.removesuffix("'s")
    if old.kind == "name":
        return base == old.key
    return base.isalpha() and entity_key(base) == old.key


def _rewrite(token: str, new: Entity) -> str:
    possessive = token.endswith("'s")
    base = token.removesuffix("'s")
    if new.kind == "name":
        word = new.key
    else:
        word = new.singular if singular(base) == base.lower() else new.plural
        if base[:1].isupper():
            word = word.capitalize()
    return word + ("'s" if possessive else "")


def swap_entity(problem: Problem, old: Entity, new: Entity, operator: str, detail: str, round_: int,
                gender: dict[str, str] | None = None, takes: dict[str, frozenset[str]] | None = None) -> Problem | str:
    """``problem`` with every mention of ``old`` written as ``new``; same expression. Returns the new
    problem, or the reason it is refused. With ``takes`` (English nouns), a noun that is the object of a
    selective verb is replaced only by one the pool shows with that verb (licence.py)."""
    if problem.language == "zh":
        return _swap_zh(problem, old, new, operator, detail, round_, gender or {})
    tokens = problem.tokens
    if not any(_matches(t, old) for t in tokens):
        return "swap_entity_not_found"
    if any(_matches(t, new) for t in tokens):
        return "swap_target_already_in_problem"  # two entities would become one
    if old.kind == "name":
        said = pronoun_gender(tokens)
        genders = gender or {}
        if said is not None and genders.get(new.key) != genders.get(old.key, said if said != "both" else None):
            return "swap_name_gender_unknown_or_differs"
    qty = set(problem.quantity_positions())
    if any(_matches(t, old) and _bound_mention(tokens, i, old.kind) for i, t in enumerate(tokens) if i not in qty):
        return "swap_mention_bound_to_its_words"
    if old.kind == "noun" and takes is not None:
        refusal = verb_refusal(problem, old.key, new.key, takes)
        if refusal:
            return refusal  # "Sara grew 43 pencils": no original problem grows pencils
    out = [(_rewrite(t, new) if i not in qty and _matches(t, old) else t) for i, t in enumerate(tokens)]
    slots = [Slot(pos, j, q.value, q.surface) for j, (pos, q) in enumerate(zip(problem.quantity_positions(),
                                                                               problem.quantities))]
    return assemble(out, slots, problem.expression, problem.language, (problem.id,), operator, detail, round_,
                    problem.provenance.source)


_PERSON_CLASSIFIERS = frozenset("人 名 位".split())
_PERSON_ENDS = tuple("生员友人工师民者孩兵")
_GROUP_ENDS = tuple("组队班级")


_TITLES_ZH = ("老师", "师傅", "大妈", "大爷", "大伯", "叔叔", "阿姨", "爷爷", "奶奶", "校长", "医生")
_NAME_THEN_THING = frozenset("花星旗")


def _title(name: str) -> str:
    """The role a Chinese name carries: its title (老师, 师傅, 大妈, ...) or "" for a plain name (小明, 王明). A
    swap keeps it: what a teacher or a worker does (批改作文, 加工零件, 贷款) is not what a child does."""
    return next((t for t in _TITLES_ZH if name.endswith(t)), "")


_COLOURS = frozenset("红黄蓝白黑绿紫灰粉橙彩")


def _noun_kind(entity: Entity) -> str:
    """"person" (counted with 人/名/位, or 学生, 队员, 小朋友), "group" (小组, 小队, 班级), "plant" (梨树, 树苗),
    "colour" (红球) or "thing": a swap keeps the kind, since what a text says of people (投沙包, 参加比赛, 每人)
    does not fit balls or groups, 27棵苹果 is no orchard and 10个乒乓球 no colour among 黑球 and 白球."""
    if entity.key.endswith(_GROUP_ENDS):
        return "group"
    if entity.key.endswith(("树", "苗", "花", "草")):
        return "plant"
    if len(entity.key) == 2 and entity.key[0] in _COLOURS:
        return "colour"  # 红球 among 黑球 and 白球: a 乒乓球 is no colour
    if entity.classifiers & _PERSON_CLASSIFIERS or entity.key.endswith(_PERSON_ENDS) or entity.key == "同学":
        return "person"
    return "thing"


def _head_counts_alone(rest: str, head: str) -> bool:
    """A character of the noun stands alone as a count word or a label elsewhere ("每组", "各班", "丙班")."""
    return any(det + head in rest for det in "每各这那两几甲乙丙丁")


def _quoted(text: str, start: int, tokens: Sequence[str]) -> bool:
    """The token at ``start`` sits between “ and ” (a title or a slogan, not a person)."""
    before = "".join(tokens[:start])
    return before.count("“") > before.count("”")


def _swap_zh(problem: Problem, old: Entity, new: Entity, operator: str, detail: str, round_: int,
             gender: dict[str, str]) -> Problem | str:
    """The Chinese swap: every word equal to ``old`` rewritten; refused when the old characters also sit
    inside another word ("苹果树"), so no trace of the old entity can survive."""
    tokens = tuple(problem.tokens)
    mentions = {w.start: w for w in zh.words(tokens) if w.text == old.key}
    text = "".join(tokens)
    if not mentions:
        return "swap_entity_not_found"
    if new.key in text:
        return "swap_target_already_in_problem"
    if text.count(old.key) != len(mentions):
        return "swap_mention_bound_to_its_words"
    rest = text.replace(old.key, "□")
    if old.kind == "noun" and len(old.key) > 1 and (any(_head_counts_alone(rest, ch) for ch in old.key)
                                                    or old.key.endswith("树") and old.key[:-1] in rest):
        return "swap_mention_bound_to_its_words"  # "7个小组，每组4瓶", "丙班" for 班级, "每棵梨树收梨40千克"
    if old.kind == "noun" and len(new.key) > 1 and any(_head_counts_alone(rest, ch) for ch in new.key):
        return "swap_classifier_does_not_fit"  # "240个铅笔盒，每箱5盒", "12个班，每班有8个班级"
    if old.kind == "noun" and _noun_kind(old) != _noun_kind(new):
        return "swap_kind_differs"  # "有5个篮球投沙包" for 同学, "12个小队参加比赛" for 小朋友
    if old.kind == "name" and _title(old.key) != _title(new.key):
        return "swap_name_role_differs"  # 王老师 -> 小强 "批改48篇作文", 小明 -> 王大妈 "体重是36千克"
    if old.kind == "name" and any(m.end < len(tokens) and tokens[m.end] in _NAME_THEN_THING for m in mentions.values()):
        return "swap_mention_bound_to_its_words"  # "小红花" is a paper flower, not 小红
    if old.kind == "name" and any(old.key.endswith(t) and text.count(t) > len(mentions) for t in _TITLES_ZH):
        return "swap_mention_bound_to_its_words"  # "李老师 ... 老师应付多少元": the title alone stays 李老师's
    if old.kind == "name" and any(w.start > 0 and tokens[w.start - 1] in ("小", "老") for w in mentions.values()):
        return "swap_mention_bound_to_its_words"  # "小丁丁": the name is inside a nickname
    if old.kind == "name" and any(_quoted(text, w.start, tokens) for w in mentions.values()):
        return "swap_mention_bound_to_its_words"  # "“我是遵纪守法小明星”": a name inside a title
    if new.key in zh.GENERAL_NOUNS or old.key in zh.GENERAL_NOUNS:
        return "swap_general_noun"  # "水果和苹果": a kind beside one of its members
    if old.kind == "noun" and new.classifiers:
        used = {e.split(":", 1)[0] for e in read(problem).quantity_entities + (read(problem).question_entity,)
                if e and e.endswith(":" + old.key)}
        if not used <= new.classifiers:
            return "swap_classifier_does_not_fit"  # "6本练习本" -> "6本铅笔盒": the pool counts 铅笔盒 with 个
    if old.kind == "name":
        said = zh.pronoun_gender(tokens)
        if said is not None and gender.get(new.key) != gender.get(old.key, said if said != "both" else None):
            return "swap_name_gender_unknown_or_differs"
    out, new_pos, i = [], {}, 0
    while i < len(tokens):
        if i in mentions:
            out.extend(new.key)
            i = mentions[i].end
            continue
        new_pos[i] = len(out)
        out.append(tokens[i])
        i += 1
    if "".join(out) != text.replace(old.key, new.key):
        return "swap_mention_bound_to_its_words"  # the words did not cover every occurrence of the old text
    slots = [Slot(new_pos[pos], j, q.value, q.surface) for j, (pos, q) in enumerate(zip(problem.quantity_positions(),
                                                                                       problem.quantities))]
    return assemble(out, slots, problem.expression, problem.language, (problem.id,), operator, detail, round_,
                    problem.provenance.source)
