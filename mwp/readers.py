"""Dataset readers: one per file format, each turning raw records into Problems with a counted,
never silent, report of what it skipped and why.

A record that is well-formed but unusable (an equation that does not evaluate, a number missing from
the text, an answer that disagrees) is skipped with a reason, and so is a malformed one (a text that is
not a string, an id that is a list, a number of 5,000 digits, NaN): whatever a record raises in its
reader's per-record work is a counted skip naming the record, never the end of the file. A file that is
not in the format at all (not JSON or not UTF-8, a record without its fields) raises
:class:`DataFormatError` naming the file and record. The shared machinery is in :mod:`mwp.records`,
the ASDiv reader in :mod:`mwp.asdiv` (both re-exported here).
"""
from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from mwp.asdiv import asdiv_answer, asdiv_equation, read_asdiv  # noqa: F401 (re-exported)
from mwp.expr import (Expr, ExpressionError, Num, Qty, answers_match, evaluate, format_number, from_prefix, iter_nodes,
                      leaf_from_token, shorten)
from mwp.parse import MAX_EXPRESSION_TOKENS, parse_number
from mwp.problem import Problem, ProblemError, require_quantity
from mwp.records import (DataFormatError, RawRecord, ReadResult, SkippedRecord, build_all,  # noqa: F401
                         id_or_index, join_sentences, json_kind, json_loads, jsonl_lines, load_json, per_record,
                         record_id, records_of, require_problems, required, text_field)

FORMATS = ("builtin", "mawps", "math23k", "svamp", "asdiv", "csv", "jsonl", "problems")


def read_mawps(path) -> ReadResult:
    """MAWPS JSON: ``[{"id", "original_text", "equation" ("x=..." or "X=..."), "ans"}]``."""
    path = Path(path)
    recs = records_of(path, load_json(path))
    return build_all(per_record(recs, lambda i, r: RawRecord(
        record_id(required(path, r, i, "id"), i), required(path, r, i, "original_text", "id"),
        required(path, r, i, "equation", "id"), required(path, r, i, "ans", "id")), id_or_index("id")), "mawps", "en")


def read_math23k(path) -> ReadResult:
    """Math23K JSON (a list, or the original stream of objects): ``{"id", "original_text",
    "equation", "ans", "split"}``; Chinese, tokenized by character. Splits go to ``ReadResult.splits``."""
    path = Path(path)
    data = load_json(path)
    recs = records_of(path, [data] if isinstance(data, dict) else data)  # a stream of one object
    return build_all(per_record(recs, lambda i, r: RawRecord(
        record_id(required(path, r, i, "id"), i), required(path, r, i, "original_text", "id"),
        required(path, r, i, "equation", "id"), required(path, r, i, "ans", "id"), r.get("split")),
        id_or_index("id")), "math23k", "zh")


def read_svamp(path) -> ReadResult:
    """SVAMP JSON: ``[{"ID", "Body", "Question", "Equation", "Answer", "Type"}]``; the text is the
    body followed by the question, the equation an infix expression without ``x=``."""
    path = Path(path)
    recs = records_of(path, load_json(path))

    def make(i: int, r: dict) -> RawRecord:
        body = text_field(required(path, r, i, "Body", "ID"), "Body")
        question = text_field(required(path, r, i, "Question", "ID"), "Question")
        return RawRecord(record_id(required(path, r, i, "ID"), i), join_sentences(body, question),
                         required(path, r, i, "Equation", "ID"), required(path, r, i, "Answer", "ID"))

    return build_all(per_record(recs, make, id_or_index("ID")), "svamp", "en")


_PLACEHOLDER_RE = re.compile(r"\bnumber(\d{1,6})\b")  # six digits at most: int() of any length is no limit


def toolkit_equation(prefix: str, numbers: list[str]) -> Expr:
    """A prefix equation with ``numberK`` placeholders (``* number0 number1``) as a tree of the
    numbers' values; other operands are constants. At most MAX_EXPRESSION_TOKENS tokens."""

    def leaf(tok: str) -> Expr:
        m = _PLACEHOLDER_RE.fullmatch(tok)
        if not m:
            return leaf_from_token(tok)
        k = int(m.group(1))
        if k >= len(numbers):
            raise ProblemError("number_missing_from_text", f"{tok} but only {len(numbers)} numbers")
        return Num(parse_number(numbers[k]), numbers[k])

    tokens = prefix.split()
    if len(tokens) > MAX_EXPRESSION_TOKENS:
        raise ProblemError("expression_too_long", f"equation of {len(tokens)} tokens (limit {MAX_EXPRESSION_TOKENS})")
    try:
        return from_prefix(tokens, leaf)
    except ExpressionError as err:
        raise ProblemError(err.reason, f"equation {prefix[:80]!r}: {err}") from err


def read_toolkit_csv(path) -> ReadResult:
    """The MWP-toolkit CSV: columns ``Question`` (with ``number0``, ``number1`` placeholders),
    ``Numbers`` (space-separated), ``Equation`` (prefix over the placeholders), ``Answer``; an ``id``
    column is used when present, else the row number."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:  # -sig: spreadsheets write a BOM
            reader = csv.DictReader(fh)
            if reader.fieldnames is None:
                raise DataFormatError(f"{path}: empty file (no CSV header)")
            missing = {"Question", "Numbers", "Equation", "Answer"} - set(reader.fieldnames)
            if missing:
                raise DataFormatError(f"{path}: missing CSV columns {sorted(missing)}")
            rows = list(reader)
    except (csv.Error, UnicodeDecodeError) as err:  # a NUL byte, a field over csv's size limit, not UTF-8
        raise DataFormatError(f"{path}: not a CSV file of the toolkit: {err}") from err

    def raw() -> Iterator[RawRecord]:
        for i, row in enumerate(rows, start=1):
            rid = (row.get("id") or row.get("ID") or str(i)).strip()
            if None in row.values():
                raise DataFormatError(f"{path}: row {i} has fewer fields than the header")
            if None in row:  # csv.DictReader's key for the fields beyond the header's
                raise DataFormatError(f"{path}: row {i} has more fields than the header (a comma outside quotes?)")
            numbers = row["Numbers"].split()
            text = _PLACEHOLDER_RE.sub(
                lambda m: numbers[int(m.group(1))] if int(m.group(1)) < len(numbers) else m.group(0),
                row["Question"])
            try:
                yield RawRecord(rid, text, toolkit_equation(row["Equation"], numbers), row["Answer"])
            except ProblemError as err:
                yield RawRecord(rid, text, row["Equation"], row["Answer"], error=err)

    return build_all(raw(), "csv")


_LANGUAGES = ("en", "zh")


def read_jsonl(path) -> ReadResult:
    """Users' own data: one ``{"id", "text", "equation", "answer"}`` object a line (optional
    ``language`` ``en``/``zh`` and ``split``)."""
    path = Path(path)
    lines: list[tuple[int, dict]] = []
    for line_no, line in jsonl_lines(path):
        rec = json_loads(line, f"{path}:{line_no}")
        if not isinstance(rec, dict):
            raise DataFormatError(f"{path}:{line_no}: expected an object")
        missing = {"id", "text", "equation", "answer"} - set(rec)
        if missing:
            raise DataFormatError(f"{path}:{line_no}: record {str(rec.get('id', '?'))[:80]!r} lacks {sorted(missing)}")
        lines.append((line_no, rec))
    languages = {rec["language"] for _, rec in lines if rec.get("language") in _LANGUAGES}
    if len(languages) > 1:
        raise DataFormatError(f"{path}: records mix languages {sorted(languages)}")

    def make(_: int, item: tuple[int, dict]) -> RawRecord:
        line_no, rec = item
        if "language" in rec and rec["language"] not in _LANGUAGES:
            raise ProblemError("bad_record", f"line {line_no}: language {str(rec['language'])[:40]!r} is not en or zh")
        if not isinstance(rec["equation"], str):
            raise ProblemError("bad_record", f"line {line_no}: equation is not a string: {shorten(repr(rec['equation']))}")
        return RawRecord(record_id(rec["id"], line_no), text_field(rec["text"], f"line {line_no}: text"),
                         rec["equation"], rec["answer"], rec.get("split"))

    def name(_: int, item: tuple[int, dict]) -> str:
        try:
            return record_id(item[1]["id"], item[0])
        except ProblemError:
            return f"line {item[0]}"

    return build_all(per_record(lines, make, name), "jsonl", languages.pop() if languages else None)


_PROBLEM_FIELDS = {"id", "sentences", "quantities", "expression", "answer"}


def read_problems(path) -> ReadResult:
    """compaug's own problem records (what every step writes: ``compaug sd`` output, a run's pools),
    from one ``.jsonl`` file or every ``*.jsonl`` file of a folder (SD writes train.jsonl and
    test.jsonl; a split.json beside them names the sides). A line that is not a JSON object with the
    record's fields is a DataFormatError; a record with bad values is a ``bad_record`` skip."""
    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise DataFormatError(f"{path}: no .jsonl files")
    result = ReadResult(problems=[], source="problems")
    seen: set[str] = set()
    for file in files:
        for line_no, line in jsonl_lines(file):
            data = json_loads(line, f"{file}:{line_no}")
            if not isinstance(data, dict):
                raise DataFormatError(f"{file}:{line_no}: not a problem record: {json_kind(data)}, not an object")
            if not _PROBLEM_FIELDS <= set(data):
                raise DataFormatError(f"{file}:{line_no}: not a problem record: no field "
                                      f"{', '.join(repr(f) for f in sorted(_PROBLEM_FIELDS - set(data)))}")
            try:
                problem = Problem.from_dict(data)
                check_stored_problem(problem)
            except ProblemError as err:
                result.skip(f"{file.name}:{line_no}", err)
                continue
            if problem.id in seen:
                result.skip(problem.id, ProblemError("duplicate_id", f"{file}: id seen before"))
                continue
            seen.add(problem.id)
            result.problems.append(problem)
    return result


def check_stored_problem(problem: Problem) -> None:
    """A stored record is checked like any other: its language, each quantity at a token of its
    sentences, each slot of the expression a quantity, at least one slot, and the answer the
    expression's value. :class:`ProblemError` otherwise (``bad_record``, ``label_uses_no_quantity``,
    ``answer_mismatch``)."""
    if problem.language not in _LANGUAGES:
        raise ProblemError("bad_record", f"language {shorten(repr(problem.language))} is not en or zh")
    for i, q in enumerate(problem.quantities):
        if not (0 <= q.sentence < len(problem.sentences) and 0 <= q.token < len(problem.sentences[q.sentence])):
            raise ProblemError("bad_record", f"quantity {i} ({shorten(q.surface)}) at sentence {q.sentence}, token "
                                             f"{q.token}: no such token")
    slots = [node.index for node in iter_nodes(problem.expression) if isinstance(node, Qty)]
    beyond = [s for s in slots if not 0 <= s < len(problem.quantities)]
    if beyond:
        raise ProblemError("bad_record", f"expression uses N{beyond[0]} but the text has {len(problem.quantities)} quantities")
    require_quantity(problem.expression, repr(shorten(" ".join(problem.prefix()))))
    try:
        value = evaluate(problem.expression, problem.values)
    except ExpressionError as err:
        raise ProblemError(err.reason, f"expression {shorten(' '.join(problem.prefix()))}: {err}") from err
    if not answers_match(value, problem.answer):
        raise ProblemError("answer_mismatch", f"expression {shorten(' '.join(problem.prefix()))} gives "
                                              f"{format_number(value)[:40]}, answer is {format_number(problem.answer)[:40]}")


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
    check_source_path(fmt, path)
    return drop_duplicates(READERS[fmt](path))


def check_source_path(fmt: str, path: Any) -> None:
    """The data file of ``fmt`` exists and is a file (a folder only for ``problems``):
    FileNotFoundError or :class:`DataFormatError` naming it otherwise."""
    path = Path(path)
    if path.is_dir() and fmt != "problems":
        raise DataFormatError(f"{path}: a folder, not a {fmt} file (only --format problems reads a folder)")
    if not (path.is_file() or path.is_dir()):
        raise FileNotFoundError(f"{path}: no such file")


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
