"""What every dataset reader shares: the read result with its counted skips, the raw record, building
records into Problems, and reading a JSON file without a traceback.

The rule (issue #16): a record that fails is a counted skip with its reason, never the end of the file.
Each reader does its per-record work through :func:`per_record`, so whatever a malformed record raises
there is a :class:`ProblemError` naming the record; only a file that is not in the format at all (not
JSON, a record without its fields) raises :class:`DataFormatError`, naming the file and the record.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence

from mwp.expr import BinOp, Expr, ExpressionError, Num, shorten
from mwp.problem import Problem, ProblemError, build_problem
from mwp.text import detect_language


# NUL and the other C0 controls but tab, newline and carriage return: binary junk, never a problem's text.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


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

    def skip(self, record_id: str, err: ProblemError) -> None:
        self.skipped[err.reason] += 1
        self.skipped_examples.append(SkippedRecord(record_id, err.reason, str(err)))


class RawRecord(NamedTuple):
    """One record as a format gives it, before it becomes a Problem."""

    record_id: str
    text: str
    equation: str | Expr
    answer: Any
    split: str | None = None
    error: ProblemError | None = None  # a skip the reader found before build_problem


# The skips of a text in the other language than its format reads: Chinese characters where English is read; an
# English word and no Chinese character where Chinese is read (Math23K's texts without a Chinese character are
# arithmetic written out, without a word).
NOT_ENGLISH, NOT_CHINESE = "text_not_english", "text_not_chinese"
_WRONG_LANGUAGE = {NOT_ENGLISH: ("Chinese", "English", "Chinese data such as Math23K: format math23k"),
                   NOT_CHINESE: ("English", "Chinese", "English data such as MAWPS: format mawps")}
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def _wrong_language(text: str, language: str | None, source: str) -> ProblemError | None:
    """The skip of ``text`` in a format that reads ``language``, or None when the text may be in it."""
    found = detect_language(text)
    if language == "en" and found == "zh":  # English tokenizing would split it into nonsense
        reason = NOT_ENGLISH
    elif language == "zh" and found == "en" and _LATIN_WORD.search(text):  # read character by character
        reason = NOT_CHINESE
    else:
        return None
    what, reads, _ = _WRONG_LANGUAGE[reason]
    return ProblemError(reason, f"the text is {what}, and the {source} format reads {reads}: {shorten(repr(text))}")


def build_all(records: Iterable[RawRecord], source: str, language: str | None = None) -> ReadResult:
    """Build every record with :func:`build_problem`, counting skips; ids must be unique."""
    result = ReadResult(problems=[], source=source)
    seen: set[str] = set()
    for rec in records:
        try:
            if rec.error is not None:
                raise rec.error
            if not isinstance(rec.text, str) or not isinstance(rec.equation, (str, BinOp, Num)):
                raise ProblemError("bad_record", f"text or equation is not a string: {shorten(repr(rec.text))}, {shorten(repr(rec.equation))}")
            control = _CONTROL_RE.search(rec.text)
            if control:
                raise ProblemError("bad_record", f"text holds the control character U+{ord(control.group()):04X} "
                                                 f"at {control.start()}: {shorten(repr(rec.text))}")
            if rec.split is not None and not isinstance(rec.split, str):
                raise ProblemError("bad_record", f"split {shorten(repr(rec.split))} is not a string")
            if rec.record_id in seen:
                raise ProblemError("duplicate_id", f"id {rec.record_id!r} occurs more than once")
            wrong = _wrong_language(rec.text, language, source)
            if wrong is not None:
                raise wrong
            problem = build_problem(rec.record_id, rec.text, rec.equation, rec.answer, source, language)
        except ProblemError as err:
            result.skip(rec.record_id, err)
            continue
        except ExpressionError as err:  # build_problem converts these; a guard, so none ends the file
            result.skip(rec.record_id, ProblemError(err.reason, str(err)))
            continue
        seen.add(rec.record_id)
        result.problems.append(problem)
        if rec.split is not None:
            result.splits[problem.id] = rec.split
    return result


def per_record(records: Sequence[Any], make: Callable[[int, Any], RawRecord],
               name: Callable[[int, Any], str]) -> Iterator[RawRecord]:
    """``make(i, record)`` for each record; a :class:`ProblemError` it raises becomes a skipped
    RawRecord named ``name(i, record)``. A :class:`DataFormatError` (the file is not in the format)
    goes through."""
    for i, rec in enumerate(records):
        try:
            yield make(i, rec)
        except ProblemError as err:
            yield RawRecord(name(i, rec), "", "", None, error=err)


def record_id(value: Any, index: int) -> str:
    """A record's id as text: a string or a number; anything else is a ``bad_record`` skip."""
    if isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return shorten(str(value), 200)
    raise ProblemError("bad_record", f"record #{index}: id {shorten(repr(value))} is not a string or a number")


def id_or_index(key: str) -> Callable[[int, Any], str]:
    """A namer for :func:`per_record`: the record's ``key`` field when it is a usable id, else ``#i``."""
    def name(index: int, rec: Any) -> str:
        try:
            return record_id(rec.get(key), index) if isinstance(rec, dict) and key in rec else f"#{index}"
        except ProblemError:
            return f"#{index}"
    return name


def json_text(path: Path) -> str:
    """The file's text; a UTF-8 byte order mark (Windows tools write one) is dropped."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise DataFormatError(f"{path}: not UTF-8 text: {err}") from err


def jsonl_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of each non-blank line; :class:`DataFormatError` if the file is not UTF-8.
    A byte order mark before the first line is dropped."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            for line_no, line in enumerate(fh, 1):
                if line.strip():
                    yield line_no, line
    except UnicodeDecodeError as err:
        raise DataFormatError(f"{path}: not UTF-8 text: {err}") from err


def _json_int(text: str) -> int | str:
    """JSON integers as ints, except those Python refuses to convert (over 4,300 digits): kept as text,
    so the record holding one is skipped by its reader (``number_too_large``) instead of the file failing."""
    return int(text) if len(text) <= 4000 else text


def json_loads(text: str, where: str) -> Any:
    """One JSON document; :class:`DataFormatError` naming ``where`` if it is not one."""
    try:
        return json.loads(text, parse_int=_json_int)
    except RecursionError as err:
        raise DataFormatError(f"{where}: JSON nested too deeply") from err
    except ValueError as err:  # JSONDecodeError included
        raise DataFormatError(f"{where}: not JSON: {err}") from err


def load_json(path: Path) -> Any:
    """A JSON document, or a stream of concatenated JSON objects (the original Math23K file)."""
    text = json_text(path)
    if not text.strip():
        raise DataFormatError(f"{path}: empty file")
    try:
        return json_loads(text, str(path))
    except DataFormatError as first_err:
        decoder, pos, items = json.JSONDecoder(parse_int=_json_int), 0, []
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                break
            try:
                item, pos = decoder.raw_decode(text, pos)
            except (ValueError, RecursionError):
                raise first_err from None
            items.append(item)
        return items


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words (``an object``, not ``dict``)."""
    kinds = ((bool, "true or false"), (dict, "an object"), (list, "a list"), (str, "a string"), (int, "a number"),
             (float, "a number"), (type(None), "null"))
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def records_of(path: Path, data: Any) -> list[dict]:
    if not isinstance(data, list):
        raise DataFormatError(f"{path}: expected a list of records, got {json_kind(data)}")
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise DataFormatError(f"{path}: record #{i} is {json_kind(rec)}, not an object")
    return data


def require_problems(result: ReadResult, where: Any) -> ReadResult:
    """``result`` when it holds a usable problem. Otherwise :class:`DataFormatError` naming ``where``
    (the file), how many records it read and why each was skipped, with the first skipped record:
    a file with nothing to work on is an error, never an empty run."""
    for reason, (what, reads, instead) in _WRONG_LANGUAGE.items():
        wrong = result.skipped.get(reason, 0)
        if wrong > len(result.problems):  # the wrong format for the file, most likely
            raise DataFormatError(f"{where}: {wrong} of {result.total} records hold {what} text, which the "
                                  f"{result.source} format reads as {reads} ({instead})")
    if result.problems:
        return result
    if not result.total:
        raise DataFormatError(f"{where}: no records")
    reasons = ", ".join(f"{reason} {n}" for reason, n in result.skipped.most_common())
    first = result.skipped_examples[0]
    raise DataFormatError(f"{where}: no usable problems: all {result.total} records skipped ({reasons}); "
                          f"first: record {first.record_id}: {shorten(first.message, 160)}")


def required(path: Path, rec: dict, index: int, name: str, id_key: str | None = None) -> Any:
    """``rec[name]``; a record without it means the file is not in the format (DataFormatError)."""
    if name not in rec:
        rid = rec.get(id_key, f"#{index}") if id_key else f"#{index}"
        raise DataFormatError(f"{path}: record {shorten(str(rid))} (#{index}) has no field {name!r}")
    return rec[name]


def text_field(value: Any, what: str) -> str:
    """A text field of a record; a ``bad_record`` skip when it is not a string."""
    if not isinstance(value, str):
        raise ProblemError("bad_record", f"{what} is not a string: {shorten(repr(value))}")
    return value


def join_sentences(*parts: str) -> str:
    """Join text parts so each part stays its own sentence (a body without a final stop gets one)."""
    out = []
    for part in (p.strip() for p in parts if p and p.strip()):
        if out and out[-1][-1] not in ".?!。？！,，":
            out[-1] += "."
        out.append(part)
    return " ".join(out)
