"""Dataset readers: one per file format, each turning raw records into Problems with a counted,
never silent, report of what it skipped and why.

A record that is well-formed but unusable (an equation that does not evaluate, a number missing from
the text, an answer that disagrees) is skipped with a reason. A file that is not in the format at all
(not JSON, a record without its fields) raises :class:`DataFormatError` naming the file and record.
"""
from __future__ import annotations

import csv
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple

from mwp.expr import BinOp, Expr, ExpressionError, Num, from_prefix, leaf_from_token
from mwp.parse import parse_number
from mwp.problem import Problem, ProblemError, build_problem

FORMATS = ("builtin", "mawps", "math23k", "svamp", "asdiv", "csv", "jsonl", "problems")


class DataFormatError(ValueError):
    """The file is not in the expected format; the message names the file and the record."""


class SkippedRecord(NamedTuple):
    record_id: str
    reason: str
    message: str


@dataclass
class ReadResult:
    problems: list[Problem]
    skipped: Counter = field(default_factory=Counter)  # reason -> number of records
    skipped_examples: list[SkippedRecord] = field(default_factory=list)  # every skipped record
    splits: dict[str, str] = field(default_factory=dict)  # problem id -> split name, when the data has one
    source: str = ""  # format name
    duplicates: dict[str, str] = field(default_factory=dict)  # dropped id -> id of its kept twin

    @property
    def total(self) -> int:
        """Records read: usable plus skipped."""
        return len(self.problems) + sum(self.skipped.values())


class RawRecord(NamedTuple):
    """One record as a format gives it, before it becomes a Problem."""

    record_id: str
    text: str
    equation: "str | Expr"
    answer: Any
    split: str | None = None
    error: ProblemError | None = None  # a skip the reader found before build_problem (ASDiv remainders)


def build_all(records: Iterable[RawRecord], source: str, language: str | None = None) -> ReadResult:
    """Build every record with :func:`build_problem`, counting skips; ids must be unique."""
    result = ReadResult(problems=[], source=source)
    seen: set[str] = set()
    for rec in records:
        try:
            if rec.error is not None:
                raise rec.error
            if not isinstance(rec.text, str) or not isinstance(rec.equation, (str, BinOp, Num)):
                raise ProblemError("bad_record", f"text or equation is not a string: {rec.text!r}, {rec.equation!r}")
            if rec.record_id in seen:
                raise ProblemError("duplicate_id", f"id {rec.record_id!r} occurs more than once")
            problem = build_problem(rec.record_id, rec.text, rec.equation, rec.answer, source, language)
        except ProblemError as err:
            result.skipped[err.reason] += 1
            result.skipped_examples.append(SkippedRecord(rec.record_id, err.reason, str(err)))
            continue
        seen.add(rec.record_id)
        result.problems.append(problem)
        if rec.split is not None:
            result.splits[problem.id] = rec.split
    return result


# ---------------------------------------------------------------- helpers for raw files


def _load_json(path: Path) -> Any:
    """A JSON document, or a stream of concatenated JSON objects (the original Math23K file)."""
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as first_err:
        decoder, pos, items = json.JSONDecoder(), 0, []
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                break
            try:
                item, pos = decoder.raw_decode(text, pos)
            except json.JSONDecodeError:
                raise DataFormatError(f"{path}: not JSON: {first_err}") from first_err
            items.append(item)
        return items


def _records(path: Path, data: Any) -> list[dict]:
    if not isinstance(data, list):
        raise DataFormatError(f"{path}: expected a list of records, got {type(data).__name__}")
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise DataFormatError(f"{path}: record #{i} is a {type(rec).__name__}, not an object")
    return data


def _field(path: Path, rec: dict, index: int, name: str, id_key: str | None = None) -> Any:
    if name not in rec:
        rid = rec.get(id_key, f"#{index}") if id_key else f"#{index}"
        raise DataFormatError(f"{path}: record {rid} (#{index}) has no field {name!r}")
    return rec[name]


def _join_sentences(*parts: str) -> str:
    """Join text parts so each part stays its own sentence (a body without a final stop gets one)."""
    out = []
    for part in (p.strip() for p in parts if p and p.strip()):
        if out and out[-1][-1] not in ".?!。？！,，":
            out[-1] += "."
        out.append(part)
    return " ".join(out)


# ---------------------------------------------------------------- readers


def read_mawps(path) -> ReadResult:
    """MAWPS JSON: ``[{"id", "original_text", "equation" ("x=..." or "X=..."), "ans"}]``."""
    path = Path(path)
    recs = _records(path, _load_json(path))
    raw = (RawRecord(str(_field(path, r, i, "id")), _field(path, r, i, "original_text", "id"),
                     _field(path, r, i, "equation", "id"), _field(path, r, i, "ans", "id"))
           for i, r in enumerate(recs))
    return build_all(raw, "mawps", "en")


def read_math23k(path) -> ReadResult:
    """Math23K JSON (a list, or the original stream of objects): ``{"id", "original_text",
    "equation", "ans", "split"}``; Chinese, tokenized by character. Splits go to ``ReadResult.splits``."""
    path = Path(path)
    recs = _records(path, _load_json(path))
    raw = (RawRecord(str(_field(path, r, i, "id")), _field(path, r, i, "original_text", "id"),
                     _field(path, r, i, "equation", "id"), _field(path, r, i, "ans", "id"), r.get("split"))
           for i, r in enumerate(recs))
    return build_all(raw, "math23k", "zh")


def read_svamp(path) -> ReadResult:
    """SVAMP JSON: ``[{"ID", "Body", "Question", "Equation", "Answer", "Type"}]``; the text is the
    body followed by the question, the equation an infix expression without ``x=``."""
    path = Path(path)
    recs = _records(path, _load_json(path))
    raw = (RawRecord(str(_field(path, r, i, "ID")),
                     _join_sentences(_field(path, r, i, "Body", "ID"), _field(path, r, i, "Question", "ID")),
                     _field(path, r, i, "Equation", "ID"), _field(path, r, i, "Answer", "ID"))
           for i, r in enumerate(recs))
    return build_all(raw, "svamp", "en")


_REMAINDER_RE = re.compile(r"\d\s*r\s*\d", re.IGNORECASE)
_LEADING_NUMBER_RE = re.compile(r"\s*\$?\s*(-?(?:\d+\s+\d+/\d+|\d[\d,]*(?:\.\d+)?(?:/\d+)?%?|\.\d+%?))")


def asdiv_answer(text: str) -> str:
    """The number an ASDiv answer starts with: ``9 (apples)`` -> ``9``; a mixed ``1 1/2`` -> ``1+1/2``.
    Raises :class:`ProblemError` (``remainder`` or ``bad_answer``) otherwise."""
    if _REMAINDER_RE.search(text):
        raise ProblemError("remainder", f"answer {text!r} has a remainder")
    m = _LEADING_NUMBER_RE.match(text)
    if not m:
        raise ProblemError("bad_answer", f"answer {text!r} does not start with a number")
    rest = text[m.end():].strip()
    if rest and not rest.startswith("("):
        raise ProblemError("bad_answer", f"answer {text!r} is not one number with a unit")
    number = m.group(1).replace(",", "")
    if " " in number:  # mixed number "1 1/2"
        whole, frac = number.split()
        number = f"{whole}+{frac}"
    return number


def asdiv_equation(formula: str) -> str:
    """``7+2=9`` -> ``x=7+2``: the left side computes the answer on the right. A formula with a
    remainder (``248/16=15 r8``) is skipped; one with x is passed on to be solved."""
    if _REMAINDER_RE.search(formula):
        raise ProblemError("remainder", f"formula {formula!r} has a remainder")
    parts = formula.split("=")
    if len(parts) == 2 and not re.search(r"[xX]", formula):
        lhs, rhs = parts
        try:
            parse_number(rhs)
        except ExpressionError:
            return formula
        return "x=" + lhs
    return formula


def read_asdiv(path) -> ReadResult:
    """ASDiv XML: ``<Problem ID=..><Body/><Question/><Solution-Type/><Answer>9 (apples)</Answer>
    <Formula>7+2=9</Formula></Problem>``."""
    import xml.etree.ElementTree as ET

    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as err:
        raise DataFormatError(f"{path}: not XML: {err}") from err
    elements = list(root.iter("Problem"))
    if not elements and root.tag != "Problem":
        raise DataFormatError(f"{path}: no <Problem> elements")

    def child(el, index: int, tag: str) -> str:
        node = el.find(tag)
        if node is None:
            raise DataFormatError(f"{path}: problem {el.get('ID', '#' + str(index))} (#{index}) has no <{tag}>")
        return (node.text or "").strip()

    def raw() -> Iterator[RawRecord]:
        for i, el in enumerate(elements):
            rid = el.get("ID") or f"#{i}"
            text = _join_sentences(child(el, i, "Body"), child(el, i, "Question"))
            formula, answer = child(el, i, "Formula"), child(el, i, "Answer")
            try:
                yield RawRecord(rid, text, asdiv_equation(formula), asdiv_answer(answer))
            except ProblemError as err:
                yield RawRecord(rid, text, formula, answer, error=err)

    return build_all(raw(), "asdiv", "en")


_PLACEHOLDER_RE = re.compile(r"\bnumber(\d+)\b")


def toolkit_equation(prefix: str, numbers: list[str]) -> Expr:
    """A prefix equation with ``numberK`` placeholders (``* number0 number1``) as a tree of the
    numbers' values; other operands are constants."""

    def leaf(tok: str) -> Expr:
        m = re.fullmatch(r"number(\d+)", tok)
        if not m:
            return leaf_from_token(tok)
        k = int(m.group(1))
        if k >= len(numbers):
            raise ProblemError("number_missing_from_text", f"{tok} but only {len(numbers)} numbers")
        return Num(parse_number(numbers[k]), numbers[k])

    try:
        return from_prefix(prefix.split(), leaf)
    except ExpressionError as err:
        raise ProblemError(err.reason, f"equation {prefix!r}: {err}") from err


def read_toolkit_csv(path) -> ReadResult:
    """The MWP-toolkit CSV: columns ``Question`` (with ``number0``, ``number1`` placeholders),
    ``Numbers`` (space-separated), ``Equation`` (prefix over the placeholders), ``Answer``; an ``id``
    column is used when present, else the row number."""
    path = Path(path)
    with open(path, encoding="utf-8-sig", newline="") as fh:  # -sig: spreadsheets write a BOM
        reader = csv.DictReader(fh)
        missing = {"Question", "Numbers", "Equation", "Answer"} - set(reader.fieldnames or ())
        if missing:
            raise DataFormatError(f"{path}: missing CSV columns {sorted(missing)}")
        rows = list(reader)

    def raw() -> Iterator[RawRecord]:
        for i, row in enumerate(rows, start=1):
            rid = (row.get("id") or row.get("ID") or str(i)).strip()
            if None in row.values():
                raise DataFormatError(f"{path}: row {i} has fewer fields than the header")
            numbers = row["Numbers"].split()
            text = _PLACEHOLDER_RE.sub(
                lambda m: numbers[int(m.group(1))] if int(m.group(1)) < len(numbers) else m.group(0),
                row["Question"])
            try:
                yield RawRecord(rid, text, toolkit_equation(row["Equation"], numbers), row["Answer"])
            except ProblemError as err:
                yield RawRecord(rid, text, row["Equation"], row["Answer"], error=err)

    return build_all(raw(), "csv")


def read_jsonl(path) -> ReadResult:
    """Users' own data: one ``{"id", "text", "equation", "answer"}`` object a line (optional
    ``language`` ``en``/``zh`` and ``split``)."""
    path = Path(path)
    raw: list[RawRecord] = []
    languages: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataFormatError(f"{path}:{line_no}: not JSON: {err}") from err
            if not isinstance(rec, dict):
                raise DataFormatError(f"{path}:{line_no}: expected an object")
            missing = {"id", "text", "equation", "answer"} - set(rec)
            if missing:
                raise DataFormatError(f"{path}:{line_no}: record {rec.get('id', '?')!r} lacks {sorted(missing)}")
            if "language" in rec:
                languages.add(rec["language"])
            raw.append(RawRecord(str(rec["id"]), str(rec["text"]), str(rec["equation"]), rec["answer"], rec.get("split")))
    if len(languages) > 1:
        raise DataFormatError(f"{path}: records mix languages {sorted(languages)}")
    return build_all(raw, "jsonl", languages.pop() if languages else None)


def read_problems(path) -> ReadResult:
    """compaug's own problem records (what every step writes: ``compaug sd`` output, a run's pools),
    from one ``.jsonl`` file or every ``*.jsonl`` file of a folder (SD writes train.jsonl and
    test.jsonl; a split.json beside them names the sides). A malformed line is a DataFormatError."""
    from mwp.problem import read_problems_jsonl

    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise DataFormatError(f"{path}: no .jsonl files")
    result = ReadResult(problems=[], source="problems")
    seen: set[str] = set()
    for file in files:
        try:
            problems = read_problems_jsonl(file)
        except ValueError as err:
            raise DataFormatError(str(err)) from err
        for problem in problems:
            if problem.id in seen:
                result.skipped["duplicate_id"] += 1
                result.skipped_examples.append(SkippedRecord(problem.id, "duplicate_id", f"{file}: id seen before"))
                continue
            seen.add(problem.id)
            result.problems.append(problem)
    return result


READERS: dict[str, Callable[[Any], ReadResult]] = {
    "mawps": read_mawps,
    "math23k": read_math23k,
    "svamp": read_svamp,
    "asdiv": read_asdiv,
    "csv": read_toolkit_csv,
    "jsonl": read_jsonl,
    "problems": read_problems,
}


def drop_duplicates(result: ReadResult) -> ReadResult:
    """Exact duplicates (normalized text and expression, :meth:`Problem.key`) dropped, the first kept;
    each drop is a counted skip (``duplicate_problem``) naming its twin, and ``result.duplicates``
    maps it to the kept id (a split file with twins on both sides can then be reported)."""
    kept: dict[str, str] = {}
    unique = []
    for problem in result.problems:
        twin = kept.setdefault(problem.key(), problem.id)
        if twin != problem.id:
            result.skipped["duplicate_problem"] += 1
            result.skipped_examples.append(SkippedRecord(problem.id, "duplicate_problem",
                                                         f"same text and expression as {twin!r}"))
            result.duplicates[problem.id] = twin
        else:
            unique.append(problem)
    result.problems = unique
    return result


def load_dataset(fmt: str, path=None, **builtin_options: Any) -> ReadResult:
    """Read ``path`` in format ``fmt`` (one of :data:`FORMATS`); ``builtin`` generates the embedded
    corpus (``builtin_options`` go to :func:`mwp.builtin.generate_corpus`) and takes no path. Exact
    duplicates are dropped before anything else sees the problems (:func:`drop_duplicates`)."""
    if fmt == "builtin":
        if path is not None:
            raise ValueError("the builtin corpus is generated, it takes no path")
        from mwp.builtin import generate_corpus

        return drop_duplicates(ReadResult(problems=generate_corpus(**builtin_options), source="builtin"))
    if fmt not in READERS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if builtin_options:
        raise ValueError(f"options {sorted(builtin_options)} apply only to the builtin corpus")
    if path is None:
        raise ValueError(f"format {fmt!r} needs a path")
    if not (Path(path).is_file() or (fmt == "problems" and Path(path).is_dir())):
        raise FileNotFoundError(f"{path}: no such file")
    return drop_duplicates(READERS[fmt](path))


@dataclass(frozen=True)
class DataSpec:
    """Which problems a run reads: a file (or a ``problems`` folder) in one of :data:`FORMATS`, or the
    built-in corpus of ``builtin_size`` problems; ``limit`` keeps the first N usable problems."""

    format: str = "builtin"
    path: Path | None = None  # not for builtin
    builtin_size: int = 3000  # problems the built-in corpus generates
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"unknown format {self.format!r}; expected one of {', '.join(FORMATS)}")
        if self.format == "builtin" and self.path is not None:
            raise ValueError("the builtin corpus is generated, it takes no path")
        if self.format != "builtin" and self.path is None:
            raise ValueError(f"format {self.format!r} needs a path")
        if self.builtin_size < 1 or (self.limit is not None and self.limit < 1):
            raise ValueError("builtin_size and limit must be positive")

    def read(self) -> ReadResult:
        """Every record of the source, usable or skipped (``limit`` not applied)."""
        if self.format == "builtin":
            return load_dataset("builtin", n=self.builtin_size)
        return load_dataset(self.format, self.path)

    def load(self) -> tuple[ReadResult, list[Problem]]:
        """The read result (usable and skipped records) and the problems a run uses (``limit`` applied)."""
        result = self.read()
        return result, (result.problems[: self.limit] if self.limit else list(result.problems))


def summary(result: ReadResult, examples: int = 20) -> dict[str, Any]:
    """What ``compaug data describe --json`` prints: counts, skip reasons, languages, the histogram
    of expression depths, the number of distinct templates (and split sizes when the data has them)."""
    from mwp.expr import depth, template

    depths = Counter(depth(p.expression) for p in result.problems)
    return {
        "format": result.source,
        "usable": len(result.problems),
        "total": result.total,
        "skipped": dict(result.skipped.most_common()),
        "skipped_examples": [rec._asdict() for rec in result.skipped_examples[:examples]],
        "languages": dict(Counter(p.language for p in result.problems).most_common()),
        "depth_histogram": {str(d): depths[d] for d in sorted(depths)},
        "templates": len({template(p.expression) for p in result.problems}),
        "splits": dict(Counter(result.splits.values()).most_common()),
    }
