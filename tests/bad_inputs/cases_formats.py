"""Bad-input cases of the data readers, one function per format: ``compaug data describe`` on malformed
MAWPS, Math23K, SVAMP, ASDiv, CSV, JSONL and compaug's own problem files, and the built-in corpus's options."""
from __future__ import annotations

from corpus import BIG, HUGE, case, describe, jdump, put, skipped

# ---------------------------------------------------------------- shared good data

GOOD_ROWS = [(f"g{i:02d}", f"Tom has {a} apples and buys {b} more. How many apples does he have?", f"x={a}+{b}", a + b)
             for i, (a, b) in enumerate([(3, 4), (5, 8), (6, 11), (12, 7), (9, 14), (21, 5), (13, 6), (15, 17),
                                         (23, 9), (31, 2), (8, 27), (19, 16)], start=1)]


def good_jsonl() -> str:
    return "".join(jdump({"id": i, "text": t, "equation": e, "answer": a}) + "\n" for i, t, e, a in GOOD_ROWS)


def common() -> None:
    put("common/good.jsonl", good_jsonl())  # 12 usable problems, none a seed of SD's rule table
    put("common/few.jsonl", "".join(good_jsonl().splitlines(keepends=True)[:3]))  # 3: too few for a run's sets
    put("common/one.jsonl", good_jsonl().splitlines(keepends=True)[0])
    put("common/not_json.json", "Tom has 3 apples.\n")
    put("common/empty_list.json", "[]")
    put("common/a_folder/README", "a folder where a file is expected\n")
    put("common/latin1.json", '{"name": "caf\xe9"}'.encode("latin-1"))
    put("common/good_split.json", jdump({"method": "comdiv", "train": [r[0] for r in GOOD_ROWS[:9]],
                                         "test": [r[0] for r in GOOD_ROWS[9:]]}))


# ---------------------------------------------------------------- MAWPS, Math23K, SVAMP (JSON)

def mawps_rec(rid, text, equation, ans):
    return {"id": rid, "original_text": text, "equation": equation, "ans": ans}


M1 = mawps_rec(1, "Tom has 3 apples and buys 4 more. How many apples does he have?", "x=3+4", 7)
M2 = mawps_rec(2, "Ann has 12 pens and gives away 5. How many pens are left?", "x=12-5", 7)


def json_file_cases(fmt: str, good: list[dict], id_key: str, fields: list[str]) -> None:
    """The file-level cases every JSON format shares."""
    d = fmt
    text = jdump(good)
    describe(fmt, "empty", "empty file", put(f"{d}/empty.json", b""), 2, f"{{cases}}/{d}/empty.json: empty file")
    describe(fmt, "blank", "only white space", put(f"{d}/blank.json", " \n\t\n"), 2, f"{{cases}}/{d}/blank.json: empty file")
    describe(fmt, "not_json", "not JSON", put(f"{d}/not_json.json", "Tom has 3 apples. How many?\n"), 2,
             f"{{cases}}/{d}/not_json.json: not JSON: Expecting value: line 1 column 1")
    describe(fmt, "truncated", "truncated JSON", put(f"{d}/truncated.json", text[: len(text) // 2]), 2,
             f"{{cases}}/{d}/truncated.json: not JSON:")
    describe(fmt, "top_string", "wrong top-level type", put(f"{d}/top_string.json", '"records"'), 2,
             f"{{cases}}/{d}/top_string.json: expected a list of records, got a string")
    describe(fmt, "top_null", "wrong top-level type", put(f"{d}/top_null.json", "null"), 2,
             f"{{cases}}/{d}/top_null.json: expected a list of records, got null")
    describe(fmt, "top_number", "wrong top-level type", put(f"{d}/top_number.json", "42"), 2,
             f"{{cases}}/{d}/top_number.json: expected a list of records, got a number")
    describe(fmt, "list_of_strings", "records not objects", put(f"{d}/list_of_strings.json", '["a", "b"]'), 2,
             f"{{cases}}/{d}/list_of_strings.json: record #0 is a string, not an object")
    describe(fmt, "nested_lists", "records not objects", put(f"{d}/nested_lists.json", jdump([good])), 2,
             f"{{cases}}/{d}/nested_lists.json: record #0 is a list, not an object")
    describe(fmt, "empty_list", "no records", put(f"{d}/empty_list.json", "[]"), 2,
             f"{{cases}}/{d}/empty_list.json: no records")
    describe(fmt, "deep", "nested too deeply", put(f"{d}/deep.json", "[" * 3000 + "]" * 3000), 2,
             f"{{cases}}/{d}/deep.json: JSON nested too deeply")
    describe(fmt, "latin1", "non-UTF-8 bytes", put(f"{d}/latin1.json", text.replace("apples", "pommes \xe0").replace("pens", "stylos \xe0").encode("latin-1")
                                                  if fmt != "math23k" else text.encode("gbk")), 2,
             f"{{cases}}/{d}/latin1.json: not UTF-8 text")
    describe(fmt, "bom", "UTF-8 byte order mark (accepted)", put(f"{d}/bom.json", "\ufeff" + text), 0,
             [f"usable: {len(good)} of {len(good)} records", "skipped: 0"])
    describe(fmt, "folder", "a folder instead of a file", f"{{cases}}/{d}", 2,
             f"{{cases}}/{d}: a folder, not a {fmt} file")
    describe(fmt, "missing", "no such file", f"{{cases}}/{d}/missing.json", 2, f"{{cases}}/{d}/missing.json: no such file")
    for name in fields:
        rec = {k: v for k, v in good[1].items() if k != name}
        rid = good[1][id_key] if name != id_key else "#1"
        describe(fmt, f"no_{name.lower()}", "missing field", put(f"{d}/no_{name.lower()}.json", jdump([good[0], rec])), 2,
                 f"{{cases}}/{d}/no_{name.lower()}.json: record {rid} (#1) has no field '{name}'")


def record_case(fmt: str, name: str, kind: str, records: list[dict], reason: str, example: str) -> None:
    """A file of a good record and a bad one: exit 0, the bad one a counted skip with its reason."""
    describe(fmt, name, kind, put(f"{fmt}/{name}.json", jdump(records)), 0, skipped(len(records), reason, example))


def mawps() -> None:
    json_file_cases("mawps", [M1, M2], "id", ["id", "original_text", "equation", "ans"])
    bad = lambda **kw: {**M2, **kw}  # noqa: E731
    cases = [
        ("text_number", "wrong field type", bad(original_text=17), "bad_record", "    2: text or equation is not a string: 17"),
        ("text_null", "wrong field type", bad(original_text=None), "bad_record", "    2: text or equation is not a string: None"),
        ("id_list", "wrong field type", bad(id=[2]), "bad_record", "    #1: record #1: id [2] is not a string or a number"),
        ("id_object", "wrong field type", bad(id={"n": 2}), "bad_record", "    #1: record #1: id {'n': 2} is not a string"),
        ("equation_number", "wrong field type", bad(equation=7), "bad_record", "    2: text or equation is not a string"),
        ("equation_list", "wrong field type", bad(equation=["x=12-5"]), "bad_record", "    2: text or equation is not a string"),
        ("unbalanced", "equation does not parse", bad(equation="x=(12-5"), "unbalanced_brackets", "    2: "),
        ("garbage", "equation does not parse", bad(equation="x=12 pens-5"), "unknown_symbol", "    2: "),
        ("equation_empty", "equation does not parse", bad(equation=""), "unparsable_equation", "    2: "),
        ("two_equals", "equation does not parse", bad(equation="x=12-5=7=8"), "unparsable_equation", "    2: "),
        ("mismatch", "value differs from the answer", bad(ans=8), "answer_mismatch",
         "    2: equation 'x=12-5' gives 7, answer is 8"),
        ("rounded_wrong", "value differs from the answer", bad(equation="x=12/5", ans=2.5), "answer_mismatch",
         "    2: equation 'x=12/5' gives 2.4, answer is 2.5"),
        ("number_missing", "number missing from the text", bad(equation="x=12-9", ans=3), "number_missing_from_text",
         "    2: number 9 is not in the text"),
        ("constants_only", "label uses no quantity", bad(equation="x=100-60", ans=40), "label_uses_no_quantity",
         "    2: equation 'x=100-60' uses none of the text's numbers"),
        ("division_by_zero", "division by zero", bad(equation="x=12/(5-5)", ans=0), "division_by_zero", "    2: "),
        ("huge_answer", "huge number", None, "number_too_large", "    2: answer 9999"),
        ("huge_quantity", "huge number", bad(original_text=f"Ann has {BIG} pens and gives away 5. How many are left?",
                                             equation=f"x={BIG}-5", ans=f"{BIG[:-1]}2"), "number_too_large", "    2: "),
        ("exponent_answer", "huge number", bad(ans="1e999999999"), "bad_answer", "    2: answer '1e999999999' is not a number"),
        ("power", "huge number", bad(equation="x=12^99999", ans=7), "evaluation_error",
         "    2: equation 'x=12^99999': power outside the float range"),
        ("nan", "NaN", None, "bad_answer", "    2: answer nan is not a finite number"),
        ("infinity", "inf", None, "bad_answer", "    2: answer inf is not a finite number"),
        ("answer_word", "wrong field type", bad(ans="seven"), "bad_answer", "    2: answer 'seven' is not a number"),
        ("answer_null", "wrong field type", bad(ans=None), "bad_answer", "    2: answer None is not a number"),
        ("answer_bool", "wrong field type", bad(ans=True), "bad_answer", "    2: answer True is not a number"),
        ("long_chain", "too long", bad(equation="x=" + "+".join(["5"] * 2000), ans=10000), "expression_too_long", "    2: "),
        ("deep_brackets", "too long", bad(equation="x=" + "(" * 400 + "12-5" + ")" * 400), "expression_too_long", "    2: "),
        ("cubic", "equation too hard", bad(equation="x*x*x=343"), "equation_too_hard", "    2: "),
        ("fractional_power", "equation too hard", bad(equation="x^0.5=12-5", ans=49), "equation_too_hard",
         "    2: x under a fractional or computed power"),
        ("no_real_root", "equation without a solution", bad(equation="x*x+12=5"), "equation_not_solvable",
         "    2: 0 solutions for x"),
        ("no_solution", "equation without a solution", bad(equation="x+12=x+5"), "equation_not_solvable", "    2: "),
        ("duplicate_id", "duplicate id", bad(id=1), "duplicate_id", "    1: id '1' occurs more than once"),
        ("duplicate_problem", "duplicate problem", bad(id=2, original_text=M1["original_text"], equation="x=3+4"),
         "duplicate_problem", "    2: same text and expression as '1'"),
    ]
    for name, kind, rec, reason, example in cases:
        if name == "huge_answer":
            text = jdump([M1, bad(ans=None)]).replace('"ans": null', f'"ans": {HUGE}')
            describe("mawps", name, kind, put(f"mawps/{name}.json", text), 0, skipped(2, reason, example))
        elif name in ("nan", "infinity"):
            text = jdump([M1, bad(ans=None)]).replace('"ans": null', '"ans": ' + ("NaN" if name == "nan" else "Infinity"))
            describe("mawps", name, kind, put(f"mawps/{name}.json", text), 0, skipped(2, reason, example))
        else:
            record_case("mawps", name, kind, [M1, rec], reason, example)
    describe("mawps", "all_bad", "every record bad", put("mawps/all_bad.json", jdump([{**M1, "ans": 8}, {**M2, "equation": "x=(12"}])),
             2, "{cases}/mawps/all_bad.json: no usable problems: all 2 records skipped (answer_mismatch 1, "
                "unbalanced_brackets 1); first: record 1: equation 'x=3+4' gives 7, answer is 8")


Z1 = {"id": "1", "original_text": "小明有3个苹果，又买了5个，一共有多少个？", "equation": "x=3+5", "ans": "8", "split": "train"}
Z2 = {"id": "2", "original_text": "一本书120页，看了40%，还剩多少页？", "equation": "x=120*[1-40%]", "ans": "72", "split": "test"}


def math23k() -> None:
    json_file_cases("math23k", [Z1, Z2], "id", ["id", "original_text", "equation", "ans"])
    stream = "\n".join(jdump(r) for r in (Z1, Z2))
    describe("math23k", "stream_truncated", "truncated JSON (stream of objects)", put("math23k/stream_truncated.json", stream[:-20]),
             2, "{cases}/math23k/stream_truncated.json: not JSON:")
    describe("math23k", "stream_of_one", "one object, the original stream format (accepted)",
             put("math23k/stream_of_one.json", jdump(Z1)), 0, ["usable: 1 of 1 records"])
    bad = lambda **kw: {**Z2, **kw}  # noqa: E731
    cases = [
        ("split_list", "wrong field type", bad(split=["test"]), "bad_record", "    2: split ['test'] is not a string"),
        ("text_number", "wrong field type", bad(original_text=120), "bad_record", "    2: text or equation is not a string"),
        ("unit_in_equation", "equation does not parse", bad(equation="x=120页*[1-40%]"), "unknown_symbol", "    2: "),
        ("unbalanced", "equation does not parse", bad(equation="x=120*[1-40%"), "unbalanced_brackets", "    2: "),
        ("mismatch", "value differs from the answer", bad(ans="73"), "answer_mismatch", "    2: equation 'x=120*[1-40%]' gives 72"),
        ("mixed_number_wrong", "value differs from the answer", bad(ans="71((1)/(2))"), "answer_mismatch", "    2: "),
        ("answer_word", "wrong field type", bad(ans="七十二"), "bad_answer", "    2: answer '七十二' is not a number"),
        ("number_missing", "number missing from the text", bad(equation="x=120*[1-45%]", ans="66"),
         "number_missing_from_text", "    2: number 45% is not in the text"),
        ("constants_only", "label uses no quantity", bad(equation="x=100-60", ans="40"), "label_uses_no_quantity",
         "    2: equation 'x=100-60' uses none of the text's numbers"),
        ("division_by_zero", "division by zero", bad(equation="x=120/(40%-0.4)", ans="0"), "division_by_zero", "    2: "),
        ("huge_answer", "huge number", bad(ans=HUGE), "number_too_large", "    2: "),
    ]
    for name, kind, rec, reason, example in cases:
        record_case("math23k", name, kind, [Z1, rec], reason, example)
    describe("math23k", "all_bad", "every record bad", put("math23k/all_bad.json", jdump([{**Z1, "ans": "9"}, {**Z2, "ans": "x"}])),
             2, "{cases}/math23k/all_bad.json: no usable problems: all 2 records skipped")


S1 = {"ID": "chal-1", "Body": "Jack had 8 pens. Mary had 5 pens", "Question": "How many more pens does Jack have?",
      "Equation": "( 8.0 - 5.0 )", "Answer": 3.0, "Type": "Subtraction"}
S2 = {"ID": "chal-2", "Body": "Each box holds 6 eggs. Sam has 4 boxes", "Question": "How many eggs does Sam have?",
      "Equation": "( 6.0 * 4.0 )", "Answer": 24.0, "Type": "Multiplication"}


def svamp() -> None:
    json_file_cases("svamp", [S1, S2], "ID", ["ID", "Body", "Question", "Equation", "Answer"])
    bad = lambda **kw: {**S2, **kw}  # noqa: E731
    cases = [
        ("body_null", "wrong field type", bad(Body=None), "bad_record", "    chal-2: Body is not a string: None"),
        ("question_number", "wrong field type", bad(Question=7), "bad_record", "    chal-2: Question is not a string: 7"),
        ("id_list", "wrong field type", bad(ID=["chal-2"]), "bad_record", "    #1: record #1: id ['chal-2'] is not a string"),
        ("equation_number", "wrong field type", bad(Equation=24), "bad_record", "    chal-2: text or equation is not a string"),
        ("unbalanced", "equation does not parse", bad(Equation="( 6.0 * 4.0"), "unbalanced_brackets", "    chal-2: "),
        ("mismatch", "value differs from the answer", bad(Answer=25.0), "answer_mismatch",
         "    chal-2: equation '( 6.0 * 4.0 )' gives 24, answer is 25.0"),
        ("number_missing", "number missing from the text", bad(Equation="( 6.0 * 9.0 )", Answer=54.0),
         "number_missing_from_text", "    chal-2: number 9.0 is not in the text"),
        ("constants_only", "label uses no quantity", bad(Equation="( 100.0 - 60.0 )", Answer=40.0),
         "label_uses_no_quantity", "    chal-2: equation '( 100.0 - 60.0 )' uses none of the text's numbers"),
        ("division_by_zero", "division by zero", bad(Equation="( 6.0 / ( 4.0 - 4.0 ) )", Answer=0),
         "division_by_zero", "    chal-2: "),
        ("answer_inf_text", "inf", bad(Answer="inf"), "bad_answer", "    chal-2: answer 'inf' is not a number"),
        ("answer_nan_text", "NaN", bad(Answer="nan"), "bad_answer", "    chal-2: answer 'nan' is not a number"),
        ("power", "huge number", bad(Equation="( 6.0 ^ 99999.0 )", Answer=1.0), "evaluation_error",
         "    chal-2: equation '( 6.0 ^ 99999.0 )': power outside the float range"),
    ]
    for name, kind, rec, reason, example in cases:
        record_case("svamp", name, kind, [S1, rec], reason, example)
    describe("svamp", "all_bad", "every record bad", put("svamp/all_bad.json", jdump([{**S1, "Body": 3}, {**S2, "Answer": "many"}])),
             2, "{cases}/svamp/all_bad.json: no usable problems: all 2 records skipped (bad_record 1, bad_answer 1)")


# ---------------------------------------------------------------- ASDiv (XML)

def asdiv_problem(pid: str, body: str, question: str, answer: str, formula: str, without: str = "") -> str:
    parts = {"Body": body, "Question": question, "Solution-Type": "Addition", "Answer": answer, "Formula": formula}
    inner = "".join(f"<{tag}>{text}</{tag}>" for tag, text in parts.items() if tag != without)
    return f'<Problem ID="{pid}" Grade="1" Source="http://example">{inner}</Problem>'


A1 = ("nluds-1", "Seven red apples and two green apples are in the basket.", "How many apples are in the basket?",
      "9 (apples)", "7+2=9")
A2 = ("nluds-2", "Ellen has 6 marbles. She gives 2 to Tom.", "How many marbles does Ellen have now?", "4 (marbles)", "6-2=4")


def asdiv_doc(*problems: str, declaration: str = '<?xml version="1.0" encoding="utf-8"?>') -> str:
    return f"{declaration}<Machine-Reading-Corpus-File><ProblemSet>{''.join(problems)}</ProblemSet></Machine-Reading-Corpus-File>"


def asdiv() -> None:
    good = asdiv_doc(asdiv_problem(*A1), asdiv_problem(*A2))
    d = "asdiv"
    rows = [
        ("empty", "empty file", b"", 2, "{cases}/asdiv/empty.xml: not XML: no element found"),
        ("not_xml", "not XML", "Seven apples and two apples.\n", 2, "{cases}/asdiv/not_xml.xml: not XML: syntax error"),
        ("truncated", "truncated XML", good[: len(good) // 2], 2, "{cases}/asdiv/truncated.xml: not XML:"),
        ("json", "another format (JSON)", jdump([M1]), 2, "{cases}/asdiv/json.xml: not XML"),
        ("no_problems", "no records", asdiv_doc(), 2, "{cases}/asdiv/no_problems.xml: no <Problem> elements"),
        ("latin1_undeclared", "non-UTF-8 bytes", asdiv_doc(asdiv_problem(*A1)).replace("apples", "pommes \xe0").encode("latin-1"),
         2, "{cases}/asdiv/latin1_undeclared.xml: not XML: not well-formed (invalid token)"),
        ("latin1_declared", "non-UTF-8 bytes, declared (accepted)",
         asdiv_doc(asdiv_problem(*A1), declaration='<?xml version="1.0" encoding="ISO-8859-1"?>').replace(
             "basket", "basket \xe0").encode("latin-1"), 0, ["usable: 1 of 1 records"]),
        ("bom", "UTF-8 byte order mark (accepted)", "\ufeff" + good, 0, ["usable: 2 of 2 records"]),
        ("entity_bomb", "entity expansion", '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
         + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(8))
         + ']><Machine-Reading-Corpus-File><ProblemSet><Problem ID="x"><Body>&i;</Body></Problem></ProblemSet>'
         "</Machine-Reading-Corpus-File>", 2, "{cases}/asdiv/entity_bomb.xml: not XML: limit on input amplification factor"),
        ("external_entity", "external entity", '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
         '<Machine-Reading-Corpus-File><ProblemSet><Problem ID="x"><Body>&e;</Body></Problem></ProblemSet>'
         "</Machine-Reading-Corpus-File>", 2, "{cases}/asdiv/external_entity.xml: not XML: undefined entity"),
    ]
    for name, kind, content, exit, fragment in rows:
        describe(d, name, kind, put(f"{d}/{name}.xml", content), exit, fragment)
    describe(d, "folder", "a folder instead of a file", "{cases}/asdiv", 2, "{cases}/asdiv: a folder, not a asdiv file")
    describe(d, "missing", "no such file", "{cases}/asdiv/missing.xml", 2, "{cases}/asdiv/missing.xml: no such file")
    for tag in ("Body", "Question", "Answer", "Formula"):
        describe(d, f"no_{tag.lower()}", "missing field",
                 put(f"{d}/no_{tag.lower()}.xml", asdiv_doc(asdiv_problem(*A1), asdiv_problem(*A2, without=tag))), 2,
                 f"{{cases}}/asdiv/no_{tag.lower()}.xml: problem nluds-2 (#1) has no <{tag}>")
    pid, body, question, answer, formula = A2
    records = [
        ("remainder", "remainder", asdiv_problem(pid, body, question, answer, "6/4=1 r2"), "remainder",
         "    nluds-2: formula '6/4=1 r2' has a remainder"),
        ("two_answers", "several answers", asdiv_problem(pid, body, question, "4 (marbles); 2 (marbles)", formula),
         "bad_answer", "    nluds-2: answer '4 (marbles); 2 (marbles)' is not one number with a unit"),
        ("answer_word", "answer not a number", asdiv_problem(pid, body, question, "four", formula), "bad_answer",
         "    nluds-2: answer 'four' does not start with a number"),
        ("formula_empty", "equation does not parse", asdiv_problem(pid, body, question, answer, ""),
         "unparsable_equation", "    nluds-2: empty formula ''"),
        ("formula_unbalanced", "equation does not parse", asdiv_problem(pid, body, question, answer, "(6-2=4"),
         "unbalanced_brackets", "    nluds-2: formula '(6-2=4'"),
        ("formula_colon", "equation does not parse", asdiv_problem(pid, body, question, answer, "6:2"),
         "unknown_symbol", "    nluds-2: formula '6:2'"),
        ("mismatch", "value differs from the answer", asdiv_problem(pid, body, question, "5 (marbles)", formula),
         "answer_mismatch", "    nluds-2: equation 'x=6-2' gives 4"),
        ("number_missing", "number missing from the text", asdiv_problem(pid, body, question, "15 (marbles)", "6+9=15"),
         "number_missing_from_text", "    nluds-2: number 9 is not in the text"),
        ("constants_only", "label uses no quantity", asdiv_problem(pid, body, question, "40 (marbles)", "100-60=40"),
         "label_uses_no_quantity", "    nluds-2: equation 'x=100-60' uses none of the text's numbers"),
        ("division_by_zero", "division by zero", asdiv_problem(pid, body, question, "0 (marbles)", "6/(2-2)=0"),
         "division_by_zero", "    nluds-2: "),
        ("huge_number", "huge number", asdiv_problem(pid, body, question, answer, "x=" + HUGE), "expression_too_long",
         "    nluds-2: formula of 5002 characters"),
        ("x_in_step", "equation does not parse", asdiv_problem(pid, body, question, answer, "6-2=4; x+4=8"),
         "unparsable_equation", "    nluds-2: formula '6-2=4; x+4=8': x inside a step of several"),
    ]
    for name, kind, problem, reason, example in records:
        describe(d, name, kind, put(f"{d}/{name}.xml", asdiv_doc(asdiv_problem(*A1), problem)), 0, skipped(2, reason, example))
    describe(d, "all_bad", "every record bad", put(f"{d}/all_bad.xml", asdiv_doc(
        asdiv_problem(A1[0], A1[1], A1[2], "10 (apples)", A1[4]), asdiv_problem(pid, body, question, "many", formula))),
        2, "{cases}/asdiv/all_bad.xml: no usable problems: all 2 records skipped")


# ---------------------------------------------------------------- MWP-toolkit CSV

CSV_HEADER = "id,Question,Numbers,Equation,Answer\n"
C1 = "q1,Tom has number0 apples and buys number1 more . How many apples ?,3 5,+ number0 number1,8\n"
C2 = "q2,Ann has number0 pens and gives away number1 . How many are left ?,12 5,- number0 number1,7\n"


def toolkit_csv() -> None:
    d = "csv"
    rows = [
        ("empty", "empty file", b"", 2, "{cases}/csv/empty.csv: empty file (no CSV header)"),
        ("header_only", "no records", CSV_HEADER, 2, "{cases}/csv/header_only.csv: no records"),
        ("no_answer_column", "missing field", "id,Question,Numbers,Equation\nq1,Tom has number0 .,3,number0\n", 2,
         "{cases}/csv/no_answer_column.csv: missing CSV columns ['Answer']"),
        ("json", "another format (JSON)", jdump([M1]), 2, "{cases}/csv/json.csv: missing CSV columns"),
        ("short_row", "row with fewer fields", CSV_HEADER + C1 + "q2,Ann has number0 pens .,12\n", 2,
         "{cases}/csv/short_row.csv: row 2 has fewer fields than the header"),
        ("long_row", "row with more fields (unquoted comma)", CSV_HEADER + C1 +
         "q2,Ann has number0 pens, and gives away number1 . How many ?,12 5,- number0 number1,7\n", 2,
         "{cases}/csv/long_row.csv: row 2 has more fields than the header"),
        ("nul_byte", "NUL byte", (CSV_HEADER + C1 + "q2,Ann has\x00 number0 pens .,12,number0,12\n"), 0,
         skipped(2, "bad_record", "    q2: text holds the control character U+0000 at 7")),
        ("latin1", "non-UTF-8 bytes", (CSV_HEADER + C1.replace("apples", "pommes \xe0")).encode("latin-1"), 2,
         "{cases}/csv/latin1.csv: not a CSV file of the toolkit: 'utf-8' codec can't decode"),
        ("bom", "UTF-8 byte order mark (accepted)", "\ufeff" + CSV_HEADER + C1 + C2, 0, ["usable: 2 of 2 records"]),
        ("unclosed_quote", "truncated (open quote)", CSV_HEADER + C1 + 'q2,"Ann has number0 pens ., 12,number0,12\n', 2,
         "{cases}/csv/unclosed_quote.csv: row 2 has fewer fields than the header"),
    ]
    for name, kind, content, exit, fragment in rows:
        describe("csv", name, kind, put(f"{d}/{name}.csv", content), exit, fragment)
    describe("csv", "folder", "a folder instead of a file", "{cases}/csv", 2, "{cases}/csv: a folder, not a csv file")
    describe("csv", "missing", "no such file", "{cases}/csv/missing.csv", 2, "{cases}/csv/missing.csv: no such file")
    records = [
        ("placeholder_beyond", "number missing from the text", "q2,Ann has number0 pens .,12,- number0 number5,7",
         "number_missing_from_text", "    q2: number5 but only 1 numbers"),
        ("constants_only", "label uses no quantity", "q2,Ann has number0 pens .,12,- 100 60,40",
         "label_uses_no_quantity", "    q2: equation '100-60' uses none of the text's numbers"),
        ("numbers_words", "wrong field type", "q2,Ann has number0 pens and number1 more .,twelve 5,+ number0 number1,17",
         "unparsable_equation", "    q2: equation '+ number0 number1': not a number: 'twelve'"),
        ("infix_equation", "equation does not parse", "q2,Ann has number0 pens and number1 more .,12 5,number0 + number1,17",
         "unparsable_equation", "    q2: equation 'number0 + number1': trailing tokens"),
        ("equation_empty", "equation does not parse", "q2,Ann has number0 pens .,12,,12", "unparsable_equation",
         "    q2: equation '': prefix expression ends early"),
        ("mismatch", "value differs from the answer", "q2,Ann has number0 pens and number1 more .,12 5,+ number0 number1,18",
         "answer_mismatch", "    q2: equation '12+5' gives 17, answer is '18'"),
        ("answer_word", "answer not a number", "q2,Ann has number0 pens and number1 more .,12 5,+ number0 number1,many",
         "bad_answer", "    q2: answer 'many' is not a number"),
        ("division_by_zero", "division by zero", "q2,Ann has number0 pens .,12,/ number0 0,0", "division_by_zero", "    q2: equation '12/0': division by zero"),
        ("huge_number", "huge number", f"q2,Ann has number0 pens .,{HUGE},+ number0 1,8", "number_too_large", "    q2: "),
        ("huge_placeholder", "huge number", "q2,Ann has number0 pens .,12,+ number0 number99999999,8", "unknown_symbol", "    q2: "),
        ("duplicate_id", "duplicate id", "q1,Ann has number0 pens and number1 more .,12 5,+ number0 number1,17",
         "duplicate_id", "    q1: id 'q1' occurs more than once"),
    ]
    for name, kind, row, reason, example in records:
        describe("csv", name, kind, put(f"{d}/{name}.csv", CSV_HEADER + C1 + row + "\n"), 0, skipped(2, reason, example))
    describe("csv", "all_bad", "every record bad", put(f"{d}/all_bad.csv", CSV_HEADER + C1.replace(",8\n", ",9\n")
                                                     + C2.replace(",7\n", ",x\n")), 2,
             "{cases}/csv/all_bad.csv: no usable problems: all 2 records skipped")


# ---------------------------------------------------------------- users' JSONL

J1 = {"id": "a", "text": "Tom has 3 apples and buys 4 more. How many apples does he have?", "equation": "x=3+4", "answer": 7}
J2 = {"id": "b", "text": "Ann has 12 pens and gives away 5. How many pens are left?", "equation": "x=12-5", "answer": 7}


def lines(*records) -> str:
    return "".join((r if isinstance(r, str) else jdump(r)) + "\n" for r in records)


def jsonl() -> None:
    d = "jsonl"
    rows = [
        ("empty", "empty file", b"", 2, "{cases}/jsonl/empty.jsonl: no records"),
        ("blank", "only white space", "\n \n\t\n", 2, "{cases}/jsonl/blank.jsonl: no records"),
        ("not_json_line", "not JSON", lines(J1, "{id: b}"), 2, "{cases}/jsonl/not_json_line.jsonl:2: not JSON"),
        ("truncated", "truncated JSON", lines(J1) + jdump(J2)[:30], 2, "{cases}/jsonl/truncated.jsonl:2: not JSON"),
        ("json_list", "another format (a JSON list)", jdump([J1, J2]), 2, "{cases}/jsonl/json_list.jsonl:1: expected an object"),
        ("line_string", "wrong top-level type", lines(J1, '"b"'), 2, "{cases}/jsonl/line_string.jsonl:2: expected an object"),
        ("no_answer", "missing field", lines(J1, {k: v for k, v in J2.items() if k != "answer"}), 2,
         "{cases}/jsonl/no_answer.jsonl:2: record 'b' lacks ['answer']"),
        ("no_id", "missing field", lines(J1, {k: v for k, v in J2.items() if k != "id"}), 2,
         "{cases}/jsonl/no_id.jsonl:2: record '?' lacks ['id']"),
        ("mixed_languages", "mixed languages", lines({**J1, "language": "en"}, {**J2, "language": "zh"}), 2,
         "{cases}/jsonl/mixed_languages.jsonl: records mix languages ['en', 'zh']"),
        ("latin1", "non-UTF-8 bytes", lines(J1, J2).replace("apples", "pommes \xe0").encode("latin-1"), 2,
         "{cases}/jsonl/latin1.jsonl: not UTF-8 text"),
        ("bom", "UTF-8 byte order mark (accepted)", "\ufeff" + lines(J1, J2), 0, ["usable: 2 of 2 records"]),
        ("deep", "nested too deeply", lines(J1, "[" * 3000 + "]" * 3000), 2, "{cases}/jsonl/deep.jsonl:2: JSON nested too deeply"),
    ]
    for name, kind, content, exit, fragment in rows:
        describe("jsonl", name, kind, put(f"{d}/{name}.jsonl", content), exit, fragment)
    describe("jsonl", "folder", "a folder instead of a file", "{cases}/jsonl", 2, "{cases}/jsonl: a folder, not a jsonl file")
    describe("jsonl", "missing", "no such file", "{cases}/jsonl/missing.jsonl", 2, "{cases}/jsonl/missing.jsonl: no such file")
    bad = lambda **kw: {**J2, **kw}  # noqa: E731
    records = [
        ("text_number", "wrong field type", bad(text=12), "bad_record", "    b: line 2: text is not a string: 12"),
        ("text_list", "wrong field type", bad(text=["Ann has 12 pens", "and gives away 5."]), "bad_record",
         "    b: line 2: text is not a string: ['Ann has 12 pens'"),
        ("text_null", "wrong field type", bad(text=None), "bad_record", "    b: line 2: text is not a string: None"),
        ("equation_number", "wrong field type", bad(equation=7), "bad_record", "    b: line 2: equation is not a string: 7"),
        ("id_object", "wrong field type", bad(id={"k": 1}), "bad_record", "    line 2: record #2: id {'k': 1} is not a string"),
        ("language_fr", "wrong field value", bad(language="fr"), "bad_record", "    b: line 2: language 'fr' is not en or zh"),
        ("split_list", "wrong field type", bad(split=["test"]), "bad_record", "    b: split ['test'] is not a string"),
        ("answer_infinity", "inf", None, "bad_answer", "    b: answer inf is not a finite number"),
        ("answer_nan", "NaN", None, "bad_answer", "    b: answer nan is not a finite number"),
        ("mismatch", "value differs from the answer", bad(answer=8), "answer_mismatch", "    b: equation 'x=12-5' gives 7, answer is 8"),
        ("number_missing", "number missing from the text", bad(equation="x=12-9", answer=3), "number_missing_from_text",
         "    b: number 9 is not in the text"),
        ("constants_only", "label uses no quantity", bad(equation="x=100-60", answer=40), "label_uses_no_quantity",
         "    b: equation 'x=100-60' uses none of the text's numbers"),
        ("unparsable", "equation does not parse", bad(equation="x=12-"), "unparsable_equation", "    b: "),
        ("division_by_zero", "division by zero", bad(equation="x=12/(5-5)", answer=0), "division_by_zero", "    b: "),
        ("huge_answer", "huge number", bad(answer="9" * 40), "number_too_large", "    b: "),
        ("duplicate_id", "duplicate id", bad(id="a"), "duplicate_id", "    a: id 'a' occurs more than once"),
    ]
    for name, kind, rec, reason, example in records:
        if rec is None:
            text = lines(J1, bad(answer=None)).replace('"answer": null', '"answer": ' + ("NaN" if name == "answer_nan" else "Infinity"))
        else:
            text = lines(J1, rec)
        describe("jsonl", name, kind, put(f"{d}/{name}.jsonl", text), 0, skipped(2, reason, example))
    describe("jsonl", "all_bad", "every record bad", put(f"{d}/all_bad.jsonl", lines({**J1, "answer": 8}, {**J2, "text": 5})), 2,
             "{cases}/jsonl/all_bad.jsonl: no usable problems: all 2 records skipped (answer_mismatch 1, bad_record 1)")


# ---------------------------------------------------------------- compaug's own problem records

P1 = {"id": "p1", "sentences": [["Sara", "bakes", "66", "tarts", "."], ["The", "family", "eats", "20", "of", "the", "tarts", "."],
                                ["How", "many", "tarts", "are", "left", "?"]],
      "quantities": [["66", 0, 2, "66"], ["20", 1, 3, "20"]], "expression": ["-", "N0", "N1"], "answer": "46", "language": "en",
      "provenance": {"source": "builtin", "parents": [], "operator": "original", "round": 0, "detail": ""}}
P2 = {**P1, "id": "p2", "sentences": [["Jack", "bakes", "7", "trays", "."], ["Each", "tray", "holds", "10", "tarts", "."],
                                      ["How", "many", "tarts", "?"]],
      "quantities": [["7", 0, 2, "7"], ["10", 1, 3, "10"]], "expression": ["*", "N0", "N1"], "answer": "70"}


def problems() -> None:
    d = "problems"
    rows = [
        ("empty", "empty file", b"", 2, "{cases}/problems/empty.jsonl: no records"),
        ("not_json_line", "not JSON", lines(P1, "{p2}"), 2, "{cases}/problems/not_json_line.jsonl:2: not JSON"),
        ("line_list", "wrong top-level type", lines(P1, [P2]), 2,
         "{cases}/problems/line_list.jsonl:2: not a problem record: a list, not an object"),
        ("no_answer", "missing field", lines(P1, {k: v for k, v in P2.items() if k != "answer"}), 2,
         "{cases}/problems/no_answer.jsonl:2: not a problem record: no field 'answer'"),
        ("other_format", "another format (jsonl of the users' kind)", lines(J1), 2,
         "{cases}/problems/other_format.jsonl:1: not a problem record: no field 'expression', 'quantities', 'sentences'"),
        ("latin1", "non-UTF-8 bytes", lines(P1, P2).replace("tarts", "tartes \xe0").encode("latin-1"), 2,
         "{cases}/problems/latin1.jsonl: not UTF-8 text"),
        ("bom", "UTF-8 byte order mark (accepted)", "\ufeff" + lines(P1, P2), 0, ["usable: 2 of 2 records"]),
    ]
    for name, kind, content, exit, fragment in rows:
        describe(d, name, kind, put(f"{d}/{name}.jsonl", content), exit, fragment)
    put(f"{d}/no_jsonl_folder/README", "a folder without .jsonl files\n")
    describe(d, "no_jsonl_folder", "a folder without records", "{cases}/problems/no_jsonl_folder", 2,
             "{cases}/problems/no_jsonl_folder: no .jsonl files")
    put(f"{d}/folder_with_bad_file/train.jsonl", lines(P1))
    put(f"{d}/folder_with_bad_file/test.jsonl", lines(P2)[:40])
    describe(d, "folder_with_bad_file", "a folder with a truncated file", "{cases}/problems/folder_with_bad_file", 2,
             "{cases}/problems/folder_with_bad_file/test.jsonl:1: not JSON")
    describe(d, "missing", "no such file", "{cases}/problems/missing.jsonl", 2, "{cases}/problems/missing.jsonl: no such file")
    bad = lambda **kw: {**P2, **kw}  # noqa: E731
    records = [
        ("slot_beyond", "slot out of range", bad(expression=["*", "N0", "N5"]), "bad_record",
         "    bad.jsonl:2: expression uses N5 but the text has 2 quantities"),
        ("answer_mismatch", "value differs from the answer", bad(answer="71"), "answer_mismatch",
         "    bad.jsonl:2: expression * N0 N1 gives 70, answer is 71"),
        ("quantity_position", "quantity not in the text", bad(quantities=[["7", 0, 2, "7"], ["10", 4, 3, "10"]]), "bad_record",
         "    bad.jsonl:2: quantity 1 (10) at sentence 4, token 3: no such token"),
        ("constants_only", "label uses no quantity", bad(expression=["-", "100", "60"], answer="40"),
         "label_uses_no_quantity", "    bad.jsonl:2: equation '- 100 60' uses none of the text's numbers"),
        ("language_fr", "wrong field value", bad(language="fr"), "bad_record", "    bad.jsonl:2: language 'fr' is not en or zh"),
        ("id_list", "wrong field type", bad(id=["p2"]), "bad_record", "    bad.jsonl:2: not a problem record: TypeError: id ['p2']"),
        ("sentences_string", "wrong field type", bad(sentences="Jack bakes 7 trays."), "bad_record",
         "    bad.jsonl:2: not a problem record: TypeError: a sentence is not a list of strings"),
        ("expression_not_prefix", "expression does not parse", bad(expression=["*", "N0"]), "bad_record",
         "    bad.jsonl:2: not a problem record:"),
        ("answer_exponent", "huge number", bad(answer="1e999999999"), "bad_record", "    bad.jsonl:2: not a problem record:"),
        ("quantity_infinity", "inf", None, "bad_record", "    bad.jsonl:2: not a problem record:"),
        ("division_by_zero", "division by zero", bad(expression=["/", "N0", "-", "N1", "N1"]), "division_by_zero",
         "    bad.jsonl:2: expression / N0 - N1 N1: division by zero"),
        ("duplicate_id", "duplicate id", bad(id="p1"), "duplicate_id", "    p1: "),
    ]
    for name, kind, rec, reason, example in records:
        example = example.replace("bad.jsonl", f"{name}.jsonl")
        if rec is None:
            text = lines(P1, bad(quantities="Q")).replace('"quantities": "Q"', '"quantities": [[Infinity, 0, 2, "7"], ["10", 1, 3, "10"]]')
        else:
            text = lines(P1, rec)
        describe(d, name, kind, put(f"{d}/{name}.jsonl", text), 0, skipped(2, reason, example))
    describe(d, "all_bad", "every record bad", put(f"{d}/all_bad.jsonl", lines({**P1, "answer": "45"}, {**P2, "language": 3})), 2,
             "{cases}/problems/all_bad.jsonl: no usable problems: all 2 records skipped")


def builtin() -> None:
    row = "data describe: builtin"
    case("describe/builtin/with_path", row, "a path for generated data", ["data", "describe", "{cases}/mawps/bom.json"], 2,
         "the builtin corpus takes no PATH (give --format for the data file {cases}/mawps/bom.json)")
    case("describe/builtin/size_zero", row, "bad parameter", ["data", "describe", "--size", "0"], 2, "--size must be at least 1, got 0")
    case("describe/builtin/size_negative", row, "bad parameter", ["data", "describe", "--size", "-3"], 2,
         "--size must be at least 1, got -3")
    case("describe/builtin/size_word", row, "bad parameter", ["data", "describe", "--size", "many"], 2,
         "argument --size: invalid int value: 'many'")
    case("describe/builtin/unknown_format", row, "bad parameter", ["data", "describe", "--format", "gsm8k", "{cases}/mawps/bom.json"],
         2, "argument --format: invalid choice: 'gsm8k'")
    case("describe/builtin/no_path", row, "missing parameter", ["data", "describe", "--format", "mawps"], 2,
         "--format mawps needs a PATH")
