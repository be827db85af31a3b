"""Operation 1 (English) composes where it used to refuse: a donor's protagonist renamed to the host's holder
whatever their genders when no pronoun refers to them, pronouns rewritten with the name, a holderless
donor question told of its narrative's one person, "has saved" read as "saves", and an event statement's
place or "of" phrase dropped. Spliced or dangling pairings stay refused, each by its reason."""
from fractions import Fraction

from mwp.expr import to_prefix
from mwp.problem import build_problem
from tasks.augment.base import AugmentConfig
from tasks.augment.en_rename import swap_pronouns
from tasks.augment.entities import predicate
from tasks.augment.geca import geca_op1
from tasks.augment.verify import verify

CFG = AugmentConfig()


def _compose(host_text, host_eq, host_answer, donor_text, donor_eq, donor_answer):
    host = build_problem("h", host_text, host_eq, host_answer, "toy")
    donor = build_problem("d", donor_text, donor_eq, donor_answer, "toy")
    batch = geca_op1([host, donor], CFG, seed=0, round_=1)
    kept, _ = verify(batch.candidates)
    return [c for c in kept if c.provenance.parents == ("h", "d")], batch.rejected


def test_a_holderless_donor_question_is_told_of_its_narratives_one_person_and_renamed():
    (new,), _ = _compose("There are 48 students in the class of Alice. 2 new students join the class. "
                         "How many students are in the class now?", "x=48+2", 50,
                         "The students of Karen sit in 3 groups. Each group has 4 students. "
                         "How many students are in the class?", "x=3*4", 12)
    assert new.text == ("The students of Alice sit in 3 groups. Each group has 4 students. 2 new students join "
                        "the class. How many students are in the class now?")
    assert " ".join(to_prefix(new.expression)) == "+ * N0 N1 N2" and new.answer == Fraction(14)
    assert "renamed=Karen->Alice" in new.provenance.detail


def test_names_of_two_genders_rename_when_no_pronoun_refers_to_them():
    (new,), _ = _compose("Keith has saved 306 dollars. Mark gives Keith 5 dollars. "
                         "How many dollars does Keith have now?", "x=306+5", 311,
                         "Sophia saves 18 dollars every week. Sophia saves for 17 weeks. "
                         "How many dollars does Sophia save?", "x=18*17", 306)
    assert new.text == ("Keith saves 18 dollars every week. Keith saves for 17 weeks. Mark gives Keith 5 dollars. "
                        "How many dollars does Keith have now?")
    assert " ".join(to_prefix(new.expression)) == "+ * N0 N1 N2" and new.answer == Fraction(311)


def test_has_saved_says_what_saves_says():
    def said(text):
        tokens = text.split()
        return predicate(tokens, 0, len(tokens), "dollar")
    assert said("Keith has saved 306 dollars .") == said("How many dollars does Sophia save ?") == {"save"}
    assert said("Roger had spent 20 dollars .") == {"spend"}
    assert said("How many apples does he have left ?") >= {"have", "left"}  # "have left" stays a holding


def test_the_pronouns_of_the_donor_narrative_follow_the_new_name():
    (new,), _ = _compose("Mary has 72 cards. 61 are eaten by a hippopotamus. How many cards will Mary have?",
                         "x=72-61", 11,
                         "Kevin starts with 70 cards. He finds another 47. How many cards does Kevin end with?",
                         "x=70+47", 117)
    assert new.text == ("Mary starts with 70 cards. She finds another 47. 61 are eaten by a hippopotamus. "
                        "How many cards will Mary have?")
    assert " ".join(to_prefix(new.expression)) == "- + N0 N1 N2" and new.answer == Fraction(56)
    assert "renamed=Kevin->Mary pronouns->f" in new.provenance.detail
    assert swap_pronouns("Her dad gave her 5 dimes and she kept her own .".split(), "m") == \
        "His dad gave him 5 dimes and he kept his own .".split()


def test_an_event_statement_drops_its_of_phrase_for_a_donor_asking_what_was_read():
    (new,), _ = _compose("Luke reads 216 pages of the comic book. Later Luke reads 21 more pages. "
                         "How many pages does Luke read in all?", "x=216+21", 237,
                         "Lucy reads 19 pages every day. Lucy reads for 10 days. How many pages does Lucy read?",
                         "x=19*10", 190)
    assert new.text == ("Luke reads 19 pages every day. Luke reads for 10 days. Later Luke reads 21 more pages. "
                        "How many pages does Luke read in all?")
    assert " ".join(to_prefix(new.expression)) == "+ * N0 N1 N2" and new.answer == Fraction(211)


def test_pairings_that_would_read_wrong_stay_refused_by_reason():
    kevin = ("Kevin starts with 70 cards. He finds another 47. How many cards does Kevin end with?", "x=70+47", 117)
    # Pronouns and a holder whose gender nothing says.
    made, rejected = _compose("Zorblax has 72 cards. 61 are eaten by a hippopotamus. How many cards will Zorblax have?",
                              "x=72-61", 11, *kevin)
    assert made == [] and rejected["op1_holder_gender_unknown"] == 1
    # Pronouns of another gender in a narrative that names someone else too: whose would "she" be?
    made, rejected = _compose("Mary has 72 cards. 61 are eaten by a hippopotamus. How many cards will Mary "
                              "have?", "x=72-61", 11, "Kevin starts with 70 cards. Ann gives him 47. How many cards "
                              "does Kevin end with?", "x=70+47", 117)
    assert made == [] and rejected["op1_holder_gender_differs"] == 1
    # The dropped phrase is referred to later ("of the book").
    made, rejected = _compose("Luke reads 216 pages of the comic book. Later Luke reads 21 more pages of the book. "
                              "How many pages does Luke read in all?", "x=216+21", 237,
                              "Lucy reads 19 pages every day. Lucy reads for 10 days. How many pages does Lucy read?",
                              "x=19*10", 190)
    assert made == [] and rejected["op1_host_refers_to_the_dropped_modifier"] >= 1
    # A restated event for a host that asks what the event made: "grew 9, rabbits ate 3" is not what was grown.
    made, rejected = _compose("Jason grew 23 watermelons and 18 turnips. Nancy grew 5 watermelons. How many "
                              "watermelons did they grow in total?", "x=23+5", 28,
                              "Sam grew 9 watermelons. The rabbits ate 3 watermelons. How many watermelons does Sam "
                              "have left?", "x=9-3", 6)
    assert made == [] and rejected["op1_host_asks_what_the_event_made"] >= 1
    # A donor whose narrative ends inside its question's sentence ("When he got ..., how much ..."; a leading "If" is told
    # as a statement: test_op1_conditions.py).
    made, rejected = _compose("Henry had 20 dollars. He spent 5 dollars on a book. How many dollars does Henry have "
                              "now?", "x=20-5", 15,
                              "Frank had 11 dollars. At the store he spent 3 dollars. When he got another 14 dollars, "
                              "how many dollars does Frank have now?", "x=11-3+14", 22)
    assert made == [] and rejected["op1_donor_question_shares_its_sentence"] >= 1
    # A donor narrative with a second person, for a host that asks what "they" have: the new person would count.
    made, rejected = _compose("Joan has 10 books. Tom has 38 books. How many books do they have together?",
                              "x=10+38", 48,
                              "Sandy has 8 dozen books. Fred has 5 times more books than Sandy. How many books does "
                              "Fred have?", "x=8*12*5", 480)
    assert all("clause=1" not in c.provenance.detail for c in made) and rejected["op1_donor_adds_someone_to_they"] >= 1


def test_starts_with_and_a_common_noun_holder_are_holdings():
    (new,), _ = _compose("Carol starts with 42 blocks. She gives 5 to Harold. How many blocks does Carol end with?",
                         "x=42-5", 37,
                         "Randy has 78 blocks. He uses 19 blocks to build a tower. How many blocks are left?",
                         "x=78-19", 59)
    assert new.text == ("Carol has 78 blocks. She uses 19 blocks to build a tower. She gives 5 to Harold. "
                        "How many blocks does Carol end with?")
    assert " ".join(to_prefix(new.expression)) == "- - N0 N1 N2" and new.answer == Fraction(54)
    (new,), _ = _compose("A florist had 11 roses. She sold 2 roses. How many roses does she have now?", "x=11-2", 9,
                         "Sara has 30 roses. She cuts 5 more roses. How many roses does Sara have?", "x=30+5", 35)
    assert new.text == ("Sara has 30 roses. She cuts 5 more roses. She sold 2 roses. How many roses does she have now?")
    assert new.answer == Fraction(33)
    # "they" after a common-noun holder: the new narrative's Sara would not be who "they" are.
    made, _ = _compose("The cafeteria had 86 roses. If they used 20 roses, how many roses would they have?",
                       "x=86-20", 66,
                       "Sara has 30 roses. She cuts 5 more roses. How many roses does Sara have?", "x=30+5", 35)
    assert made == []


def test_host_pronouns_after_a_narrative_naming_someone_of_the_other_gender_are_not_ambiguous():
    (new,), _ = _compose("Harry starts with 79 apples. He buys 5 more. How many apples does Harry end with?",
                         "x=79+5", 84,
                         "Tom starts with 75 apples. He gives 52 to Mary. How many apples does Tom end with?",
                         "x=75-52", 23)
    assert new.text == ("Harry starts with 75 apples. He gives 52 to Mary. He buys 5 more. "
                        "How many apples does Harry end with?")
    assert new.answer == Fraction(28)
    # The other person is a man: "He buys 5 more" could be Fred's.
    made, rejected = _compose("Harry starts with 79 apples. He buys 5 more. How many apples does Harry end with?",
                              "x=79+5", 84, "Tom starts with 75 apples. He gives 52 to Fred. How many apples does "
                              "Tom end with?", "x=75-52", 23)
    assert made == [] and rejected["op1_donor_names_someone_else"] >= 1


def test_the_per_problem_cap_counts_candidates_made_not_pairs_tried():
    host = build_problem("h", "Harry has 30 pears. He eats 4 pears. How many pears does Harry have now?", "x=30-4", 26,
                         "toy")
    good = [build_problem(f"g{i}", f"Tom has {10 + i} pears. He buys {i + 1} more pears. How many pears does Tom "
                                   f"have?", f"x={10 + i}+{i + 1}", 11 + 2 * i, "toy") for i in range(4)]
    refused = [build_problem(f"r{i}", f"Tom has {20 + i} pears. When he buys {i + 1} more pears, how many pears "
                                      f"does Tom have?", f"x={20 + i}+{i + 1}", 21 + 2 * i, "toy") for i in range(6)]
    batch = geca_op1([host] + good + refused, AugmentConfig(per_problem_cap=3), seed=0, round_=1)
    assert batch.rejected["op1_donor_question_shares_its_sentence"] >= 1  # tried pairs that were refused ...
    assert len([c for c in batch.candidates if c.provenance.parents[0] == "h"]) == 3  # ... do not use up the cap


def test_a_donor_value_that_breaks_the_hosts_order_or_time_is_refused():
    # 33 - 26 = 7 books are left, and the host goes on "If he sold 19 of them".
    made, rejected = _compose("Tom had 25 books. If he sold 19 of them and used the money he earned to buy 38 new "
                              "books, how many books would Tom have?", "x=25+38-19", 44,
                              "Joan decided to sell all of her old books. She gathered up 33 books to sell. She sold "
                              "26 books in a yard sale. How many books does Joan have now?", "x=33-26", 7)
    assert made == [] and rejected["op1_host_takes_more_than_the_donor_gives"] >= 1
    # "in January" ... "By March": the later clause leans on the replaced statement's time.
    made, rejected = _compose("Roger had 45 dollars in January. By March he had spent 20 dollars. How many dollars "
                              "does Roger have now?", "x=45-20", 25,
                              "Carl had 91 dollars. He spent 41 dollars on clothes. How many dollars does Carl have "
                              "now?", "x=91-41", 50)
    assert all("clause=0" not in c.provenance.detail for c in made)
    assert rejected["op1_later_clause_leans_on_the_statements_time"] >= 1


def test_a_statement_of_coming_by_the_entity_takes_a_holding_donor_when_the_host_asks_what_is_held():
    (new,), _ = _compose("Wayne collects 9 blocks. Wayne's father gives Wayne 6 more. How many blocks does Wayne have?",
                         "x=9+6", 15,
                         "Tom has 4 blocks. Theresa gives Tom 79 more. How many blocks does Tom have?", "x=4+79", 83)
    assert new.text == ("Wayne has 4 blocks. Theresa gives Wayne 79 more. Wayne's father gives Wayne 6 more. "
                        "How many blocks does Wayne have?")
    assert new.answer == Fraction(89)
    # The host asks what was collected: a narrative ending in what is held is not that.
    made, _ = _compose("Wayne collects 9 blocks. Wayne's father gives Wayne 6 more. How many blocks did Wayne collect?",
                       "x=9+6", 15,
                       "Tom has 4 blocks. Theresa gives Tom 79 more. How many blocks does Tom have?", "x=4+79", 83)
    assert made == []
