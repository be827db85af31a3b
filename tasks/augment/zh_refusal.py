"""Why a Chinese composition (operation 1) is refused, if it is: Chinese clauses often leave their subject
to the clause before, so a statement may be replaced by another problem's narrative only where the text
shows that both are about one thing (geca.py calls this after the entity and predicate have matched)."""
from __future__ import annotations

import re
from typing import Sequence

from mwp.problem import Problem
from tasks.augment import zh
from tasks.augment.base import Units, clause_units


def zh_refusal(host: Problem, u: Units, c: int, entity: str, states: frozenset[str], donor: Problem,
               narrative: Sequence[str], holder: str | None, asked_of: str | None) -> str | None:
    """Chinese clauses often leave their subject to the clause before, so a composition is licensed only
    when the statement names what it measures (a noun in its predicate: "这根铁丝长8米", never "长8米"),
    the host's next clause does not lean on it ("比女生多(1/4)"), both sides name the same holder or
    none, and the donor's narrative is about something the host mentions (a shared noun)."""
    tokens = tuple(host.tokens)
    if "%" in states or "".join(tokens[slice(*u.spans[c])]).count("%"):
        return "op1_zh_statement_is_a_ratio"  # "男生比女生少10%": a relation, not an amount
    donor_question = "".join(donor.tokens[clause_units(donor).spans[-1][0]:])
    if "另" in donor_question:
        return "op1_zh_donor_asks_about_a_second_thing"  # "另一根长多少米": its narrative opens with the first
    if not zh.has_noun(states, tokens) and not _counts_a_thing(entity):
        return "op1_zh_statement_names_no_thing"
    if c + 1 < len(u.spans) and zh.continues(tokens, *u.spans[c + 1]):
        return "op1_zh_next_clause_leans_on_the_statement"
    if c > 0 and zh.introduces(narrative):
        return "op1_zh_donor_introduces_a_second_thing"  # "一种商品打0.8销售，一件商品降价20%后是320元"
    if c > 0 and zh.continues(tokens, *u.spans[c]):
        return "op1_zh_statement_leans_on_the_clause_before"  # "其中女生有130人"
    host_places, donor_places = zh.places(host.tokens), zh.places(narrative)
    if donor_places - host_places:
        return "op1_zh_donor_in_another_place"  # 果园's pear trees into 公园's, 鼓号队 into 合唱队
    host_groups = zh.groups(tokens) | class_labels(tokens)
    if host_groups and (zh.groups(narrative) | class_labels(narrative)) - host_groups:
        return "op1_zh_donor_names_another_group"  # 五年级 in a problem about 四年级, 5(1)班 into 六年级(1)班
    if c + 1 < len(u.spans) - 1 and len(clause_units(donor).spans) > 2 and zh.introduces(tokens[slice(*u.spans[c + 1])]):
        return "op1_zh_next_clause_introduces_another_thing"  # "..., 一辆汽车3小时行了216千米" after two cars' story
    others = zh.names_in(tuple(narrative)) - {asked_of}
    if others and zh.names_in(tokens) - set(zh.names_in(tuple(tokens[slice(*u.spans[c])]))) - others:
        return "op1_zh_donor_names_someone_else"  # 小明 reads the book, then the host's 王丽 reads "the" rest
    if (holder is None) != (asked_of is None):
        return "op1_holder_differs"
    if not zh.nouns_of_text(narrative) & zh.nouns_of_text(host.tokens):
        return "op1_zh_donor_about_another_thing"
    # The donor's narrative may repeat only what the replaced statement says: a word it shares with the
    # host's other clauses ("上衣", "现在", "出售") would state a second value of one thing.
    narrative_said = zh.said_words(narrative, clause_units(donor).spans[:-1])
    rest_said = zh.said_words(host.tokens, [span for k, span in enumerate(u.spans) if k != c])
    if (narrative_said & rest_said) - states:
        return "op1_zh_donor_restates_the_host"
    return None


def _counts_a_thing(entity: str) -> bool:
    """The counted entity itself names the thing ("小明有45张邮票" -> ``张:邮票``): the statement says what it
    measures even with no other noun, unlike "长1000米" (``米``) or "原价200元"."""
    return ":" in entity and entity.split(":", 1)[1] not in zh.ATTRIBUTES


_CLASS_LABEL = re.compile(r"[0-9一二三四五六七八九十]+(?:年级)?[(（][0-9一二三四五六七八九十]+[)）]班|[一二三四五六]年级")


def class_labels(tokens: Sequence[str]) -> set[str]:
    """Labels of a class or grade in the text ("5(1)班", "六年级(1)班", "四年级"), digits and numerals alike."""
    return set(_CLASS_LABEL.findall("".join(tokens)))
