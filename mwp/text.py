"""Language-aware tokenization and sentence splitting, with every number kept as one token.

English is split into words and punctuation; Chinese into characters (numbers, Latin words and
fractions such as ``(1/2)`` stay whole). Sentences end at ``. ? !`` (and their full-width forms);
clauses end there and at ``, ;`` too (the unit the augmentation operators and SD work on).
"""
from __future__ import annotations

import re
from fractions import Fraction

# A number token: fraction in brackets "(1/2)", plain fraction "3/4", decimal/int with optional
# thousands separators and percent sign.
NUMBER_PATTERN = r"\(\d+/\d+\)|\d+/\d+(?![\d.])|\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|\d+(?:\.\d+)?%?|\.\d+%?"
_NUMBER_RE = re.compile(rf"-?(?:{NUMBER_PATTERN})")
# Number words English problems use as quantities ("Nancy has 9 five dollars bills"); "one" is left
# out on purpose: it is far more often a pronoun ("one of them") than a quantity.
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split()) if i >= 2}
NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                     "ninety": 90, "hundred": 100})
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
# "thirty-six" is one token and one quantity (36), not 30 and 6.
NUMBER_WORDS.update({f"{t}-{u}": 20 + 10 * i + j for i, t in enumerate(_TENS) for j, u in enumerate(_UNITS, 1)})
_COMPOUND_CARDINAL = rf"(?i:{'|'.join(_TENS)})-(?i:{'|'.join(_UNITS)})(?![A-Za-z])"
# Number words that are quantities only where the equation uses their value and no number written in
# digits gives it: "twice"/"half"/"a dozen" are quantities in SVAMP and ASDiv equations (``*2``,
# ``*0.5``, ``*12``), but a text also uses them in passing. "one" is not among them: where an equation
# uses 1 it is nearly always the whole or a step ("1 - 0.58", "10 * (10 - 1)"), not the word's "one"
# (in MAWPS all three records where it would have matched), and 1 is a constant anyway.
CONDITIONAL_NUMBER_WORDS = {"twice": Fraction(2), "thrice": Fraction(3), "double": Fraction(2), "triple": Fraction(3),
                            "half": Fraction(1, 2), "dozen": Fraction(12), "thousand": Fraction(1000)}
# In English text "-11" written without a space is a negative number ("the difference between -11 and").
_EN_TOKEN_RE = re.compile(rf"(?<![\w)])-(?:{NUMBER_PATTERN})|{NUMBER_PATTERN}|(?<![A-Za-z]){_COMPOUND_CARDINAL}|"
                          rf"[A-Za-z]+(?:'[A-Za-z]+)?|\S", re.UNICODE)
_ZH_TOKEN_RE = re.compile(rf"{NUMBER_PATTERN}|[A-Za-z]+|\S", re.UNICODE)
_SENTENCE_END = {".", "?", "!", "。", "？", "！", "．"}
CLAUSE_END = frozenset({",", ";", "，", "；", *_SENTENCE_END})
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
_FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９％（）", "0123456789%()")


def detect_language(text: str) -> str:
    """``zh`` when the text holds CJK characters, else ``en``."""
    return "zh" if _CJK_RE.search(text) else "en"


def is_number_token(token: str) -> bool:
    return _NUMBER_RE.fullmatch(token) is not None


def tokenize(text: str, language: str = "en") -> list[str]:
    text = text.translate(_FULLWIDTH_DIGITS)
    pattern = _ZH_TOKEN_RE if language == "zh" else _EN_TOKEN_RE
    tokens = pattern.findall(text)
    if language != "zh":
        return tokens
    # "．" between digits is a decimal point in Math23K ("3．5"): the regex has already split it.
    return _merge_fullwidth_decimals(tokens)


def _merge_fullwidth_decimals(tokens: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if (tokens[i] == "．" and out and out[-1].isdigit() and i + 1 < len(tokens)
                and re.fullmatch(r"\d+%?", tokens[i + 1])):
            out[-1] = out[-1] + "." + tokens[i + 1]
            i += 2
            continue
        out.append(tokens[i])
        i += 1
    return out


def split_sentences(tokens: list[str]) -> list[list[str]]:
    """Split a token list at sentence-final punctuation; a trailing fragment is its own sentence."""
    sentences: list[list[str]] = []
    current: list[str] = []
    for tok in tokens:
        current.append(tok)
        if tok in _SENTENCE_END:
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return [s for s in sentences if any(t not in _SENTENCE_END for t in s)] or [tokens]


def clause_spans(tokens: list[str]) -> list[tuple[int, int]]:
    """(start, end) of every clause of ``tokens``: cut after ``, ;`` and sentence-final punctuation
    (and their full-width forms); punctuation alone ("?!", ", .") joins the clause before it."""
    spans: list[tuple[int, int]] = []
    start = 0
    for i, tok in enumerate(tokens):
        if tok in CLAUSE_END:
            if any(t not in CLAUSE_END for t in tokens[start:i + 1]):
                spans.append((start, i + 1))
                start = i + 1
            elif spans:
                spans[-1] = (spans[-1][0], i + 1)
                start = i + 1
    if start < len(tokens):
        if any(t not in CLAUSE_END for t in tokens[start:]) or not spans:
            spans.append((start, len(tokens)))
        else:
            spans[-1] = (spans[-1][0], len(tokens))
    return spans


def detokenize(tokens: list[str], language: str = "en") -> str:
    if language == "zh":
        return "".join(tokens)
    text = " ".join(tokens)
    return re.sub(r" ([.,?!;:%'])", r"\1", text)


def conditional_number_word(tokens: list[str] | tuple[str, ...], index: int) -> Fraction | None:
    """The value of ``tokens[index]`` when it is a number word that counts as a quantity only where the
    equation uses its value (:data:`CONDITIONAL_NUMBER_WORDS`), else None."""
    return CONDITIONAL_NUMBER_WORDS.get(tokens[index].lower())
