"""Language-aware tokenization and sentence splitting, with every number kept as one token.

English is split into words and punctuation; Chinese into characters (numbers, Latin words and
fractions such as ``(1/2)`` stay whole). Sentences end at ``. ? !`` (and their full-width forms);
clauses end there and at ``, ;`` too (the unit the augmentation operators and SD work on).
"""
from __future__ import annotations

import re

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
# In English text "-11" written without a space is a negative number ("the difference between -11 and").
_EN_TOKEN_RE = re.compile(rf"(?<![\w)])-(?:{NUMBER_PATTERN})|{NUMBER_PATTERN}|[A-Za-z]+(?:'[A-Za-z]+)?|\S", re.UNICODE)
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
