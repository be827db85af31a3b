"""Operations 1 and 2 of paper 003 (section 3, Figure 3) as semantic operators.

Operation 1 pairs a statement s'_i of q' with a problem q whose question asks for what s'_i states:
the question of q and s'_i share their environment once the quantity and the interrogative are left
out ("How many peaches?" and "There are 36 peaches," share "_ peaches", Figure 3a), i.e. they count
the same entity (entities.py: singular and plural folded), and, where both name one, the same holder.
q's narrative takes the place of s'_i; q's expression takes the place of the quantity of s'_i in e'.
English holdings pair beyond an equal predicate ("has 24 oranges stored in boxes" with "How many oranges
will Melissa have?"; "bakes 62 tarts" with a narrative that opens "bakes 66 tarts" and asks what is
left): holding.py. An English donor whose question says the same of another noun, which the pool shows as
the statement's noun's alternative, is told of that noun by operation 2's swap first ("How many blocks does
Wanda have in all?" donates to "Lucy has 290 crayons."): ``_swapped_donor``.
Operation 2 swaps one entity of q (a name or a counted noun) for an alternative the pool shows in a
common environment, everywhere in q, question included (swap.py); the expression is kept.
Sampling is seeded, a few candidates per problem, never a pairwise comparison of problems.
The splice and the pair tests every operation-1 route shares are in compose.py; Chinese problems about named
numbers (甲数, 一个数) compose by zh_numbers.py, Chinese statements of a thing's measure ("一根铁丝长120米",
"小刚的体重是28千克") by zh_attributes.py.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Sequence

from mwp.problem import Problem
from tasks.augment.base import AugmentConfig, CandidateBatch, Units, clause_units, rng_for
from tasks.augment import zh, zh_attributes, zh_numbers
from tasks.augment.compose import (ContentWords, book, donor_ok, is_rate, near_duplicate, operation1, rated,
                                   used_quantity_in_clause)
from tasks.augment.entities import (SINGULAR_PRONOUNS, UNRESOLVED, agree, asks_about_used_entity, has_abbreviation,
                                    lexicon_genders, names_in, neutral, predicate, question_span, read)
from tasks.augment.en_conditional import declarative_donor
from tasks.augment.en_refusal import asks_what_came_before, en_refusal
from tasks.augment.en_rename import CONVENTIONAL_GENDERS, gendered_rename, told_apart
from tasks.augment.holding import (acquires_what_is_held, asks_what_the_event_made, entity_adjectives, event_core,
                                   holding_modifier, host_refusal, introduced_as_known, is_holding_question, opening,
                                   refers_to_dropped)
from tasks.augment.swap import nouns_of, pool_entities, swap_entity
from tasks.augment.zh_refusal import ZH_ATTEMPTS, zh_clause_refusal, zh_refusal
from tasks.augment.zh_self import zh_incoherent


def _protagonist_rename(host: Problem, clause_end: int, holder: str | None, donor: Problem, asked_of: str | None,
                        genders: dict[str, str]) -> tuple | None | str:
    """How the donor's narrative fits the host's holder: None (nothing to rename), (old, new) to rename
    the donor's protagonist, or a refusal reason."""
    lang = donor.language
    narrative_names = names_in(donor.tokens[:clause_units(donor).spans[-1][0]], lang)
    pronouns = zh.PRONOUNS_F | zh.PRONOUNS_M if lang == "zh" else SINGULAR_PRONOUNS
    pronouns_after = any(t.lower() in pronouns for t in host.tokens[clause_end:])
    if narrative_names - {asked_of} and pronouns_after and (
            lang == "zh" or not told_apart(narrative_names - {asked_of}, host.tokens[clause_end:], genders)):
        return "op1_donor_names_someone_else"  # the host's "he"/"she" after it would become ambiguous
    narrative_clauses = clause_units(donor).spans[:-1]
    last = ("" if lang == "zh" else " ").join(donor.tokens[slice(*narrative_clauses[-1])]) if narrative_clauses else ""
    if last.lower().startswith("if ") or last.split()[:1] == ["If"] or last.startswith(("如果", "若", "假如")):
        return "op1_donor_narrative_ends_in_a_condition"  # "If he sold 4 of them," needs its question
    if holder is None or holder == asked_of:
        return None
    if asked_of is None or UNRESOLVED in (holder, asked_of):
        return "op1_holder_differs"  # the host says whose it is; the donor's question does not
    host_names, donor_names = names_in(host.tokens, lang), names_in(donor.tokens, lang)
    if holder in donor_names or asked_of in host_names:
        return "op1_holder_differs"  # renaming would merge two people
    if lang == "zh" and len(holder) != len(asked_of):
        return "op1_holder_differs"  # a Chinese rename keeps the character count (quantities stay put)
    if lang != "zh":  # English: gender matters only where a pronoun refers to the renamed person
        return gendered_rename(host, holder, donor.tokens[:clause_units(donor).spans[-1][0]], asked_of, genders)
    gender_of = zh.pronoun_gender
    said_host, said_donor = gender_of(host.tokens), gender_of(donor.tokens)
    if "both" in (said_host, said_donor):
        return "op1_holder_gender_differs"
    host_gender = genders.get(holder) or said_host
    donor_gender = genders.get(asked_of) or said_donor
    if said_donor and host_gender != said_donor or said_host and donor_gender != said_host \
            or host_gender and donor_gender and host_gender != donor_gender:
        return "op1_holder_gender_differs"  # "Katherine has 2 caps. He buys 41 more."
    return asked_of, holder


def _swapped_donor(donor: Problem, old: str, new: str, entities) -> tuple | str:
    """An English donor asking for noun ``old``, told of ``new`` by operation 2's swap (every mention, the
    verb licence, no merge with a noun it already has): (problem, units, reading, opening, predicate asked),
    the problem keeping the donor's id, or the swap's refusal reason."""
    out = swap_entity(donor, entities.entity("noun", old), entities.entity("noun", new), "geca_op1", "", 0,
                      entities.gender, entities.takes)
    if isinstance(out, str):
        return out
    out = replace(out, id=donor.id, provenance=donor.provenance)
    u, reading = clause_units(out), read(out, elided=True)
    if reading.question_entity != new:
        return "question_not_read_as_the_new_noun"
    q_start, q_end = u.spans[-1]
    return (out, u, reading, opening(out, u.spans[:-1], u.qty_pos, reading),
            predicate(out.tokens, q_start, q_end, new, out.language))


def _donor_inconsistent(problem: Problem, u: Units, reading, elided: bool = False) -> str | None:
    """A donor's question must be about its own narrative: the entity it asks for is counted by a quantity
    its expression uses, and the person it names is named there ("Adam fills 5 bags with bananas. How
    many plums does Olivia have?" donates nothing: SD's decomposed parts can read like that)."""
    if not asks_about_used_entity(problem, elided) or problem.language != "zh" and introduced_as_known(problem, reading):
        return "op1_donor_question_not_about_its_narrative"
    asked_of = reading.question_holder
    if asked_of is not None and asked_of != UNRESOLVED:
        if asked_of not in names_in(problem.tokens[:u.spans[-1][0]], problem.language):
            return "op1_donor_question_names_someone_not_in_its_narrative"
    return None


def geca_op1(problems: Sequence[Problem], cfg: AugmentConfig, seed: int, round_: int) -> CandidateBatch:
    """For each host q' (seeded order): a statement clause s'_i holding exactly one used quantity of a
    known entity, and a donor q whose question asks for that same entity (paper 003 Figure 3a: "How many
    peaches?" and "There are 36 peaches," share the environment "_ peaches"), for the same holder where
    both name one. Statements that give a rate ("each box holds ...") and donors asking for one are left
    out: the donor's narrative computes an amount."""
    batch = CandidateBatch()
    rng = rng_for(seed, round_, "geca_op1")
    units = [clause_units(p) for p in problems]
    # Hosts, like donors, read "How many are left?" as the one entity of their text (entities.py); the
    # consistency checks read op1's candidates so, and refuse one whose composed text no longer has one entity.
    readings = [read(p, elided=True) for p in problems]
    # As donors, English problems whose question opens "If C, ..." are told "C. How many ...?" (en_conditional.py).
    told = {d: t for d, t in enumerate(map(declarative_donor, problems)) if t is not None}
    donor_problems = [told.get(d, p) for d, p in enumerate(problems)]
    donor_units = [clause_units(t) if d in told else units[d] for d, t in enumerate(donor_problems)]
    donor_readings = [read(t, elided=True) for t in donor_problems]  # "How many are left?" donates (entities.py)
    # A holder's gender where a rename rewrites pronouns: the lexicon, the pool's pronouns, then plain conventions
    entities = pool_entities(problems, lexicon_genders())
    genders = {**CONVENTIONAL_GENDERS, **entities.gender}
    # Donors by (entity, what the question says of it): a host statement looks up its own pair, so only
    # donors whose question asks for what the statement states are ever drawn.
    donors: dict[tuple[str, frozenset[str]], list[int]] = defaultdict(list)
    holding_donors: dict[str, list[int]] = defaultdict(list)  # English questions asking what is held (holding.py)
    asks: dict[int, frozenset[str]] = {}
    openings: dict[int, tuple | None] = {}  # English donors: (entity, predicate, holder) of their first clause
    kind: dict[int, frozenset[str]] = {}  # English donors: the words naming the asked entity's kind ("bottle")
    number_donors: list[zh_numbers.NumberDonor] = []  # Chinese questions asking for a number itself (zh_numbers.py)
    for d, (problem, u, reading) in enumerate(zip(donor_problems, donor_units, donor_readings)):
        if problem.language == "zh" and donor_ok(problem, u) and question_span(problem) == u.spans[-1] \
                and zh_numbers.asked(problem, u) is not None:
            name = zh_numbers.asked(problem, u)
            reason = zh_numbers.donor_refusal(problem, u, name)
            if reason:
                batch.rejected[reason] += 1
            else:
                number_donors.append(zh_numbers.NumberDonor(d, name))
            continue
        if not donor_ok(problem, u) or reading.question_entity is None or has_abbreviation(problem.tokens):
            continue
        if question_span(problem) != u.spans[-1]:
            batch.rejected["op1_question_not_last"] += 1  # "...多少天？已知...": the narrative is not before it
            continue
        q_start, q_end = u.spans[-1]
        if not is_rate(problem, q_start, q_end):
            reason = _donor_inconsistent(problem, u, reading, elided=True) or zh_incoherent(problem, u, reading, "donor")
            if reason:
                batch.rejected[reason] += 1
                continue
            if problem.language != "zh" and asks_what_came_before(problem.tokens[q_start:q_end]):
                batch.rejected["op1_donor_asks_what_came_before"] += 1  # "Now she has 2778. How many did she start with?"
                continue
            if problem.language != "zh" and "change" in (t.lower() for t in problem.tokens[q_start:q_end]):
                # "... with a $ 20 bill. How much change did she get?": money given back, which the
                # host's "she got 7 dollars" would count as money gained
                batch.rejected["op1_donor_asks_for_change"] += 1
                continue
            asks[d] = predicate(problem.tokens, q_start, q_end, reading.question_entity, problem.language)
            donors[(reading.question_entity, asks[d] - neutral(problem.language)[0])].append(d)
            if problem.language != "zh":
                openings[d] = opening(problem, u.spans[:-1], u.qty_pos, reading)
                kind[d] = entity_adjectives(problem.tokens, q_start, q_end, reading.question_entity)
                if is_holding_question(asks[d] - kind[d], neutral("en")[0]):  # "How many bottle caps does X have?"
                    holding_donors[reading.question_entity].append(d)
    # English donors by what their question says alone: one asking the same of another noun is told of the
    # host's noun by operation 2's swap (_swapped_donor), where the pool shows the two nouns as alternatives.
    by_states: dict[frozenset[str], list[int]] = defaultdict(list)
    for (entity, states), ds in donors.items():
        by_states[states] += [d for d in ds if donor_problems[d].language == "en" and entity in nouns_of(problems[d])]
    swaps: dict[tuple[int, str], tuple | str] = {}  # (donor, host noun) -> the donor told of it, or why not
    # Chinese questions asking a thing's measure ("这根绳子长多少米"): the statements they answer count no thing
    attribute_donors = zh_attributes.index_donors(donor_problems, donor_units, batch)
    attribute_rng = rng_for(seed, round_, "geca_op1_attributes")  # its own draws: the entity route's are unchanged
    entities_asked = {entity for entity, _ in donors} | {
        alt for entity, _ in donors for alt in entities.alternatives.get(("noun", entity), ())}
    made_texts = {q.key() for q in problems}  # texts already made: a copy takes no place under a cap (compose.book)
    words = ContentWords()
    order = list(range(len(problems)))
    rng.shuffle(order)
    for p in order:
        if batch.full(cfg):
            break
        host, u, reading = problems[p], units[p], readings[p]
        made: set[tuple[int, int]] = set()  # (clause, donor) pairs drawn for this host (bench/op1_refusals.py reads it)
        lang = host.language
        host_start = len(batch.candidates)  # the per-problem cap counts what every route makes of this host
        if has_abbreviation(host.tokens):
            batch.rejected["op1_abbreviation_cuts_a_clause"] += 1
            continue
        if question_span(host) != u.spans[-1]:
            batch.rejected["op1_question_not_last"] += 1  # a reordered problem asks first: no narrative to splice into
            continue
        numbers = [(c, n) for c in range(len(u.spans) - 1) for n in [zh_numbers.host_clause(host, u, c)] if n] \
            if lang == "zh" else []
        if numbers:  # "甲数是35，...": the entity reader sees nothing counted; compose by the number (zh_numbers.py)
            zh_numbers.compose(problems, p, u, numbers, number_donors, cfg, rng, batch, made_texts, words, round_)
            continue
        measures = zh_attributes.host_clauses(host, u) if lang == "zh" and attribute_donors else []
        measured = bool(measures) and zh_attributes.compose(  # "一条绳子长5米": a thing's measure (zh_attributes.py)
            problems, p, u, measures, attribute_donors, cfg, attribute_rng, batch, made_texts, words, round_, host_start)
        if _donor_inconsistent(host, u, reading, elided=True):
            batch.rejected["op1_host_question_not_about_its_narrative"] += 1  # a composition would inherit it
            continue
        refused = zh_incoherent(host, u, reading, "host")
        if refused:
            batch.rejected[refused] += 1  # "爸爸的体重是60千克，...，爸爸的体重=多少千克？"
            continue
        clauses = []
        for c in range(len(u.spans) - 1):
            slot = used_quantity_in_clause(host, u, c)
            if slot is None:
                continue
            entity = reading.quantity_entities[slot]
            if entity is None or entity not in entities_asked or is_rate(host, *u.spans[c]):
                continue
            start, end = u.spans[c]
            if sum(start <= pos < end for pos in u.qty_pos) != 1:
                continue  # "on Monday he worked 8 hours and on Tuesday 2 hours": one clause, two amounts
            states = predicate(host.tokens, start, end, entity, lang)
            exact = donors.get((entity, states - neutral(lang)[1]), [])
            modifier = holding_modifier(host.tokens, start, end, u.qty_pos[slot], entity) if lang != "zh" else None
            core = event_core(host.tokens, start, end, u.qty_pos[slot], entity) \
                if lang != "zh" and not exact and modifier is None else None  # a holding's modifier is handled below
            if core is not None and refers_to_dropped(host.tokens, end, core[1]):
                batch.rejected["op1_host_refers_to_the_dropped_modifier"] += 1  # "on the beach" ... "on the beach"
            elif core is not None:  # "reads 216 pages of the comic book" for "How many pages does Luke read?"
                states = core[0]
                exact = donors.get((entity, states - neutral(lang)[1]), [])
            refused = host_refusal(host, u.spans, reading, c, entity) if lang != "zh" else \
                zh_clause_refusal(host, u, c, entity, states)
            if refused:
                batch.rejected[refused] += 1  # a spliced host: "Lucy bakes 30 buns. Bob buys 20 more buns. ... Bob"
                continue
            own_kind = entity_adjectives(host.tokens, start, end, entity) if lang != "zh" else frozenset()
            held = [d for d in holding_donors.get(entity, ()) if d not in exact and openings[d]
                    and openings[d][:2] == (entity, states)  # "bakes 66 tarts. The family eats 4." for "bakes 62 tarts"
                    and kind[d] == own_kind]  # never "How many green balloons?" for "Amy has 17 balloons"
            if modifier is not None and refers_to_dropped(host.tokens, end, modifier):
                batch.rejected["op1_host_refers_to_the_dropped_modifier"] += 1  # "at a school" ... "at the school"
            elif modifier is not None or lang != "zh" and acquires_what_is_held(host, u.spans, reading, states) \
                    and entity not in reading.quantity_entities[:slot]:  # after "had 27 cards", "has 72" reads as a total
                held += [d for d in holding_donors.get(entity, ()) if d not in exact and d not in held
                         and kind[d] == own_kind]  # "51 bottle caps": questions about bottle caps only
            swapped = [d for d in by_states.get(states - neutral(lang)[1], ()) if lang == "en"
                       and entity in entities.alternatives.get(("noun", donor_readings[d].question_entity), ())
                       and kind[d] == own_kind]  # "How many apples did Joan pick?" told of pears
            pool = exact + held + swapped
            if pool:
                clauses.append((c, entity, states, pool, set(held), set(swapped), own_kind))
            else:
                batch.rejected["op1_question_asks_another_thing"] += 1  # "how many were left" for "sold N"
        if not clauses:
            if not measured:
                batch.rejected["op1_no_statement_with_a_donor"] += 1
            continue
        before = host_start  # the cap counts candidates made (AugmentConfig), not pairs tried
        for _ in range(ZH_ATTEMPTS * cfg.per_problem_cap if lang == "zh" else 4 * cfg.per_problem_cap):
            if len(batch.candidates) - before >= cfg.per_problem_cap:
                break
            c, entity, states, pool, held, swapped, own_kind = clauses[rng.randrange(len(clauses))]
            d = pool[rng.randrange(len(pool))]
            if d == p or (c, d) in made:
                continue
            made.add((c, d))
            donor, donor_u, donor_reading, first, asked = donor_problems[d], donor_units[d], donor_readings[d], \
                openings.get(d), asks.get(d)
            if d in swapped:
                if (d, entity) not in swaps:
                    swaps[d, entity] = _swapped_donor(donor, donor_reading.question_entity, entity, entities)
                if isinstance(swaps[d, entity], str):
                    batch.rejected["op1_donor_swap_" + swaps[d, entity].removeprefix("swap_")] += 1
                    continue
                donor, donor_u, donor_reading, first, asked = swaps[d, entity]
            if d not in held and not agree(states, asked, lang):
                batch.rejected["op1_question_asks_another_thing"] += 1  # "how many were left" for "sold N"
                continue
            if near_duplicate(words(host), words(donor)):
                batch.rejected["op1_donor_near_duplicate"] += 1  # the narrative would repeat the host's
                continue
            start, end = u.spans[c]
            narrative = donor.tokens[:donor_u.spans[-1][0]]
            if rated(host, narrative) & rated(host, host.tokens[:start] + host.tokens[end:]):
                batch.rejected["op1_conflicting_rates"] += 1  # "each candle costs 2" ... "each candle costs 6"
                continue
            holder, asked_of = reading.clause_holders[c], donor_reading.question_holder
            if asked_of is None and len(names_in(narrative)) == 1 and lang != "zh" and \
                    donor_reading.clause_holders[0] in names_in(narrative):
                asked_of = next(iter(names_in(narrative)))  # "Randy has 78 blocks. ... How many blocks are left?"
            if d in held and (first is None or first[0] != entity or first[2] != asked_of) or first and \
                    first[0] == entity and asked_of in names_in(narrative) and first[2] in names_in(narrative) - {asked_of}:
                batch.rejected["op1_donor_question_not_about_its_opening"] += 1  # "Peter bakes ... Joan buys ... Joan"
                continue
            if d in held and lang != "zh" and asks_what_the_event_made(host, u.spans, reading, states - own_kind):
                batch.rejected["op1_host_asks_what_the_event_made"] += 1  # "grew 4, rabbits ate 3" for "... did they grow"
                continue
            if lang != "zh":
                refusal = en_refusal(host, u, c, donor, narrative)
                if refusal:
                    batch.rejected[refusal] += 1
                    continue
            if lang == "zh":
                refusal = zh_refusal(host, u, c, entity, states, donor, narrative, holder, asked_of)
                if refusal:
                    batch.rejected[refusal] += 1
                    continue
            rename = _protagonist_rename(host, end, holder, donor, asked_of, genders)
            if isinstance(rename, str):
                batch.rejected[rename] += 1
                continue
            detail = (f"clause={c} donor={donor.id} entity={entity!r} holder={holder or asked_of or '-'} "
                      f"predicate={sorted(states)}")
            if rename:
                detail += f" renamed={rename[0]}->{rename[1]}"
                detail += f" pronouns->{rename[2]}" if len(rename) > 2 and rename[2] else ""
            if d in held:
                detail += " holding"
            if d in told:
                detail += " condition-told"
            if d in swapped:
                detail += f" donor-swapped={donor_readings[d].question_entity}->{entity}"
            book(operation1(host, u, c, donor, donor_u, detail, round_, rename), batch, made_texts)
    return batch


def geca_op2(problems: Sequence[Problem], cfg: AugmentConfig, seed: int, round_: int) -> CandidateBatch:
    """For each q (seeded order): one of its entities (a name, or a counted noun) and an alternative the
    pool shows in a common environment (swap.py); every mention of the entity, question included,
    becomes the alternative. Units, money and cue words are never swapped."""
    batch = CandidateBatch()
    rng = rng_for(seed, round_, "geca_op2")
    entities = pool_entities(problems, lexicon_genders())
    order = list(range(len(problems)))
    rng.shuffle(order)
    for p in order:
        if batch.full(cfg):
            break
        problem = problems[p]
        names = names_in(problem.tokens, problem.language)
        present = nouns_of(problem) | names
        options = [((kind, key), sorted(alts - present))
                   for kind, keys in (("noun", sorted(nouns_of(problem))), ("name", sorted(names)))
                   for key in keys for alts in [entities.alternatives.get((kind, key), set())]]
        options = [o for o in options if o[1]]
        if not options:
            batch.rejected["op2_no_alternative"] += 1
            continue
        made: set[tuple[str, str]] = set()
        for _ in range(4 * cfg.per_problem_cap):
            if len(made) >= cfg.per_problem_cap:
                break
            (kind, key), alts = options[rng.randrange(len(options))]
            new = alts[rng.randrange(len(alts))]
            if (key, new) in made:
                continue
            made.add((key, new))
            if problem.language == "zh" and (key in new or new in key):
                batch.rejected["op2_swap_target_overlaps_entity"] += 1  # 苹果 -> 苹果树: the old text would stay
                continue
            old_entity, new_entity = entities.entity(kind, key), entities.entity(kind, new)
            detail = f"{kind}: {key} -> {new}"
            out = swap_entity(problem, old_entity, new_entity, "geca_op2", detail, round_, entities.gender,
                              entities.takes)
            if isinstance(out, str):
                batch.rejected["op2_" + out] += 1
            else:
                batch.candidates.append(out)
    return batch
