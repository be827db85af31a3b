"""English renaming of a donor's protagonist for operation 1 (geca.py): the donor's narrative is told of the
host's holder, so the name changes everywhere in the narrative and, where the narrative's pronouns say
another gender than the holder's, the pronouns change with it.

A gender matters only where a pronoun of the new text refers to the renamed person. A narrative without
singular pronouns ("Sara bakes 58 cookies. The family eats 12 of the cookies.") takes any holder's name;
one with pronouns of one gender takes a holder of that gender as it is ("Kevin starts with 7 cards. He
finds another 47." for Jason) and a holder of the other gender with its pronouns rewritten ("Jennifer
starts with 7 cards. She finds another 47."), provided no pronoun of the narrative follows another person's
name (whose "her" would it be?) and the holder's gender is known (the names lexicon, the pool's or the host's
own pronouns, or the conventions of common given names).
"""
from __future__ import annotations

from typing import Sequence

from mwp.problem import Problem
from tasks.augment.entities import _FUNCTION, names_in
from tasks.augment.swap import pronoun_gender

# Given names whose gender convention is plain, for telling the gender of a host's holder in a rename only
# (never a name to swap in: the substitution lexicon is mwp/resources/names.txt). The lexicon and the pool's own
# pronouns come first (geca.py); names MAWPS itself gives both genders ("Joe", "Lexie") are left out.
_CONVENTIONAL = {
    "m": "Aaron Abe Albert Andrew Anthony Arthur Benjamin Bobby Brian Bruce Cade Carlos Charles Christopher Clarence "
         "Cody Craig Daniel Dave Douglas Dylan Edward Enrique Eric Erik Ernest Eugene Frank Gary Gerald Gordon Harry "
         "Irwin Jeff Jeffrey Jerry Jim Jose Joseph Joshua Juan Kaleb Kenny Kevin Larry Lawrence Louis Martin "
         "Marvin Matthew Nathan Ned Nicholas Omar Oscar Paco Patrick Phillip Ralph Roger Ron Russell Ryan Scott Sean "
         "Shawn Spencer Stanley Steve Steven Todd Tony Victor Vince Vincent Walter Wayne William Zach Zachary",
    "f": "Allyson Amanda Angela Anita Ann Anne Annie Ashley Becky Bianca Brenda Bridget Carla Carol Carolyn Carrie "
         "Cheryl Chloe Christine Cindy Connie Debby Debra Diane Dina Doris Dorothy Elisa Elise Ella Erin Evelyn Eve "
         "Faye Frances Geraldine Gloria Haley Hannah Heather Helen Iesha Isabel Janet Jazmin Jennifer Joyce Karin "
         "Kathryn Kathy Katherine Kendra Kristi Kylie Lauren Lillian Linda Lindsey Lizette Louise Madison Mandy "
         "Marie Marilyn Marlee Marta Martha Mildred Minerva Nina Norma Paige Pamela Patricia Paula Rebecca Rosa Ruth "
         "Samantha Sandra Sarah Sharon Shirley Susan Suzie Teresa Tess Tessa Theresa Tori Trisha Vanessa Virginia "
         "Wanda Wendy",
}
CONVENTIONAL_GENDERS = {name: g for g, names in _CONVENTIONAL.items() for name in names.split()}

_SINGULAR = frozenset("he she him her his hers himself herself".split())
_TO_FEMALE = {"he": "she", "him": "her", "his": "her", "himself": "herself"}
_TO_MALE = {"she": "he", "hers": "his", "herself": "himself"}


def gendered_rename(host: Problem, holder: str, narrative: Sequence[str], asked_of: str,
                    genders: dict[str, str]) -> tuple[str, str, str | None] | str:
    """(old name, new name, gender the narrative's pronouns are rewritten to or None), or a refusal:
    ``op1_holder_gender_differs`` (the narrative's pronouns say both genders, or another gender while it
    names someone else too), ``op1_holder_gender_unknown`` (the narrative has pronouns and nothing says
    the holder's gender)."""
    said = pronoun_gender(narrative)
    if said is None:
        return asked_of, holder, None
    if said == "both":
        return "op1_holder_gender_differs"
    host_said = pronoun_gender(host.tokens)
    if host_said in ("f", "m") and genders.get(holder) not in (None, host_said):
        # The host's own "He gets 16 more" for a Harold the pool's pronouns call female: trust neither
        return "op1_holder_gender_differs"
    holder_gender = genders.get(holder) or (host_said if host_said in ("f", "m") else None)
    if holder_gender is None:
        return "op1_holder_gender_unknown"
    if holder_gender == said:
        return asked_of, holder, None
    if not _pronouns_before_others(narrative, asked_of):
        return "op1_holder_gender_differs"  # "Tom gave Ann 3. He ..." : the rewritten pronoun could be Ann's
    return asked_of, holder, holder_gender


def _pronouns_before_others(narrative: Sequence[str], protagonist: str) -> bool:
    """Every singular pronoun of the narrative comes before its first name other than the protagonist's, so each
    can only be the protagonist's ("Anna starts with 5 candies. She gets 86 more from Larry."); a pronoun after
    another name ("Tom gave Ann 3. He ...") could be that person's once rewritten."""
    others = [i for i, t in enumerate(narrative) if names_in([t]) - {protagonist}]
    pronouns = [i for i, t in enumerate(narrative) if t.lower() in _SINGULAR]
    return not others or not pronouns or max(pronouns) < min(others)


def swap_pronouns(tokens: Sequence[str], gender: str) -> list[str]:
    """The tokens with their singular third-person pronouns written in ``gender`` ("f" or "m"), case kept.
    "her" becomes "his" before a word it determines ("her bank") and "him" otherwise ("gave her 5")."""
    out = []
    for i, tok in enumerate(tokens):
        low = tok.lower()
        if gender == "f":
            new = _TO_FEMALE.get(low)
        elif low == "her":
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            new = "his" if nxt.isalpha() and nxt.lower() not in _FUNCTION else "him"
        else:
            new = _TO_MALE.get(low)
        out.append(tok if new is None else new.capitalize() if tok[:1].isupper() else new)
    return out


def told_apart(others: set[str], later: Sequence[str], genders: dict[str, str]) -> bool:
    """The host's pronouns after the inserted narrative cannot stand for the other people it names: every
    other name has a known gender and the pronouns say the other one ("Harry starts with 75 apples. He
    gives 52 to Emily. He buys 5 more.": "He" is Harry, never Emily)."""
    said = pronoun_gender(later)
    return said in ("f", "m") and all(genders.get(name) not in (None, said) for name in others)
