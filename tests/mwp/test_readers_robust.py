"""Every reader on hand-made files with malformed records between good ones (issue #16): the good
records still load, each bad one is a counted skip with its reason and its name, never the end of the
file. Then ASDiv formulas: units, several steps, implicit multiplication."""
import json
from fractions import Fraction

import pytest

from mwp.builtin import generate_corpus
from mwp.problem import write_jsonl
from mwp.readers import DataFormatError, load_dataset

GOOD_EN = {"text": "Tom has 3 apples and buys 4 more. How many apples?", "equation": "x=3+4", "answer": 7}
GOOD_EN2 = {"text": "Ann has 12 pens and gives away 5. How many pens are left?", "equation": "x=12-5", "answer": 7}
HUGE = "9" * 5000  # beyond Python's 4,300-digit int conversion


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def skips(result):
    return {s.record_id: s.reason for s in result.skipped_examples}


def mawps_record(rid, rec, **changes):
    row = {"id": rid, "original_text": rec["text"], "equation": rec["equation"], "ans": rec["answer"]}
    row.update(changes)
    return row


def test_mawps_bad_records_between_good_ones(tmp_path):
    rows = [
        mawps_record(1, GOOD_EN),
        mawps_record(2, GOOD_EN, ans=None),  # replaced below by a 5,000-digit JSON integer
        mawps_record(3, GOOD_EN, equation="x=" + "+".join(["3"] * 6000)),  # a flat chain of 6,000 terms
        mawps_record([4], GOOD_EN),  # an id that is a list
        mawps_record(5, GOOD_EN, original_text=17),  # a text that is a number
        mawps_record(6, GOOD_EN, ans=float("nan")),  # json.dumps writes NaN, json.loads reads it
        mawps_record(7, GOOD_EN, equation="x*x*x=27"),  # degree 3
        mawps_record(8, GOOD_EN, original_text="Tom has " + "7" * 400 + ".5 apples and 4 more. How many?",
                     equation="x=" + "7" * 400 + ".5+4"),  # a 400-digit quantity
        mawps_record(9, GOOD_EN2),
    ]
    text = json.dumps(rows).replace('"ans": null', f'"ans": {HUGE}')
    result = load_dataset("mawps", write(tmp_path / "m.json", text))
    assert [p.id for p in result.problems] == ["1", "9"]
    assert skips(result) == {"2": "number_too_large", "3": "expression_too_long", "#3": "bad_record",
                             "5": "bad_record", "6": "bad_answer", "7": "equation_too_hard",
                             "8": "number_too_large"}
    assert result.total == 9


def test_math23k_bad_records_in_the_original_stream(tmp_path):
    rows = [
        {"id": "1", "original_text": "小明有3个苹果，又买了5个，一共有多少个？", "equation": "x=3+5", "ans": "8", "split": "train"},
        {"id": "2", "original_text": "小明有3个苹果，又买了5个，一共有多少个？", "equation": "x=" + "(" * 500 + "3" + ")" * 500,
         "ans": "3", "split": "train"},
        {"id": "3", "original_text": "小明有3个苹果，又买了5个，一共有多少个？", "equation": "x=3+5", "ans": "8", "split": ["a"]},
        {"id": "4", "original_text": "一本书120页，看了40%，还剩多少页？", "equation": "x=120*[1-40%]", "ans": "72", "split": "test"},
    ]
    text = "\n".join(json.dumps(r, ensure_ascii=False, indent=1) for r in rows)  # objects one after another
    result = load_dataset("math23k", write(tmp_path / "m.json", text))
    assert [p.id for p in result.problems] == ["1", "4"] and result.splits == {"1": "train", "4": "test"}
    assert skips(result) == {"2": "expression_too_long", "3": "bad_record"}


def test_svamp_bad_records_between_good_ones(tmp_path):
    def row(rid, body="Jack had 8 pens. Mary had 5 pens", equation="( 8.0 - 5.0 )", answer=3.0):
        return {"ID": rid, "Body": body, "Question": "How many more pens does Jack have?",
                "Equation": equation, "Answer": answer, "Type": "Subtraction"}

    rows = [row("a"), row("b", body=None), row("c", answer="inf"), row("d", equation="( 8.0 - 5.0 ) ^ 99999"),
            row("e", body="Jack had 9 pens. Mary had 5 pens", equation="( 9.0 - 5.0 )", answer=4)]
    result = load_dataset("svamp", write(tmp_path / "s.json", json.dumps(rows)))
    assert [p.id for p in result.problems] == ["a", "e"]
    assert skips(result) == {"b": "bad_record", "c": "bad_answer", "d": "evaluation_error"}


def asdiv_problem(pid, body, question, answer, formula):
    return (f'<Problem ID="{pid}" Grade="2" Source="http://example"><Body>{body}</Body><Question>{question}</Question>'
            f"<Solution-Type>X</Solution-Type><Answer>{answer}</Answer><Formula>{formula}</Formula></Problem>")


def asdiv_file(tmp_path, *problems):
    body = "".join(problems)
    return write(tmp_path / "a.xml", f'<?xml version="1.0" encoding="utf-8"?><Machine-Reading-Corpus-File>'
                                     f"<ProblemSet>{body}</ProblemSet></Machine-Reading-Corpus-File>")


def test_asdiv_bad_records_between_good_ones(tmp_path):
    path = asdiv_file(
        tmp_path,
        asdiv_problem("g1", "Seven red apples and two green apples are in the basket.", "How many apples?", "9 (apples)", "7+2=9"),
        asdiv_problem("b1", "Tom has 3 apples.", "How many?", "3 (apples)", "x=" + HUGE),
        asdiv_problem("b2", "Tom has 3 apples.", "How many?", "3 (apples)",  # each step doubles: 2047 nodes
                      "; ".join(f"{2**k}+{2**k}={2**(k + 1)}" for k in range(10))),
        asdiv_problem("b3", "Tom has 3 apples.", "How many?", "3 (apples); 4 (pears)", "3=3"),
        asdiv_problem("g2", "Tom had 3.5 dollars and found 1.25 dollars.", "How much does he have?", "4.75 (dollars)",
                      "3.5+1.25=4.75"),
    )
    result = load_dataset("asdiv", path)
    assert [p.id for p in result.problems] == ["g1", "g2"]
    assert skips(result) == {"b1": "expression_too_long", "b2": "expression_too_long", "b3": "bad_answer"}


def test_toolkit_csv_bad_records_between_good_ones(tmp_path):
    text = (
        "id,Question,Numbers,Equation,Answer\n"
        "q1,Tom has number0 apples and buys number1 more . How many apples ?,3 5,+ number0 number1,8\n"
        f"q2,Tom has number0 apples . How many ?,3,+ number{HUGE} number0,8\n"
        f"q3,Tom has number0 apples . How many ?,3,{' '.join(['+'] * 3000 + ['number0'] * 3001)},9003\n"
        f"q4,Tom has number0 apples . How many ?,{HUGE},+ number0 1,8\n"
        "q5,Tom has number0 apples . How many ?,3,+ number0 1e999999999,8\n"
        "q6,Ann has number0 pens and number1 pencils . How many ?,2 6,+ number0 number1,8\n"
    )
    result = load_dataset("csv", write(tmp_path / "t.csv", text))
    assert [p.id for p in result.problems] == ["q1", "q6"]
    assert skips(result) == {"q2": "unknown_symbol", "q3": "expression_too_long", "q4": "number_too_large",
                             "q5": "unknown_symbol"}


def test_jsonl_bad_records_between_good_ones(tmp_path):
    lines = [
        {"id": "a", **GOOD_EN},
        {"id": "b", **GOOD_EN, "language": "fr"},
        {"id": "c", **GOOD_EN, "language": ["en"]},
        {"id": {"k": 1}, **GOOD_EN},
        {"id": "e", **GOOD_EN, "answer": 1e999},  # json.dumps writes Infinity
        {"id": "f", **GOOD_EN2, "language": "en"},
    ]
    result = load_dataset("jsonl", write(tmp_path / "d.jsonl", "\n".join(json.dumps(r) for r in lines)))
    assert [p.id for p in result.problems] == ["a", "f"]
    assert skips(result) == {"b": "bad_record", "c": "bad_record", "line 4": "bad_record", "e": "bad_answer"}


def test_problems_bad_records_between_good_ones(tmp_path):
    first, second = generate_corpus(2, seed=3)
    write_jsonl([first], tmp_path / "one.jsonl")
    write_jsonl([second], tmp_path / "two.jsonl")
    good_lines = [(tmp_path / name).read_text() for name in ("one.jsonl", "two.jsonl")]
    bad_answer = json.dumps({**first.to_dict(), "id": "bad1", "answer": "1e999999999"})
    bad_quantity = json.dumps({**first.to_dict(), "id": "bad2", "quantities": [[float("inf"), 0, 0, "3"]]})
    path = write(tmp_path / "p.jsonl", good_lines[0] + bad_answer + "\n" + bad_quantity + "\n" + good_lines[1])
    result = load_dataset("problems", path)
    assert [p.id for p in result.problems] == [first.id, second.id]
    assert skips(result) == {"p.jsonl:2": "bad_record", "p.jsonl:3": "bad_record"}


def test_files_not_in_the_format_are_still_format_errors(tmp_path):
    with pytest.raises(DataFormatError, match="nested too deeply"):
        load_dataset("mawps", write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000))
    (tmp_path / "latin1.json").write_bytes('[{"id": 1, "original_text": "caf\xe9"}]'.encode("latin-1"))
    with pytest.raises(DataFormatError, match="UTF-8"):
        load_dataset("mawps", tmp_path / "latin1.json")
    big_field = "Question,Numbers,Equation,Answer\n" + "a" * 200_000 + ",1,1,1\n"  # over csv's field size limit
    with pytest.raises(DataFormatError, match="big.csv"):
        load_dataset("csv", write(tmp_path / "big.csv", big_field))


# ---------------------------------------------------------------- ASDiv formulas


def asdiv_one(tmp_path, body, question, answer, formula):
    result = load_dataset("asdiv", asdiv_file(tmp_path, asdiv_problem("p", body, question, answer, formula)))
    assert not result.skipped, result.skipped_examples
    (problem,) = result.problems
    return problem


def test_asdiv_formula_with_unit_annotations(tmp_path):
    p = asdiv_one(tmp_path, "Tom has 2 dimes. A dime is 10 cents.", "How many cents does he have?", "20 (cents)",
                  "2 (dime)*10 (cent/dime)=20")
    assert p.values == [2, 10] and p.prefix() == ["*", "N0", "N1"] and p.answer == 20


def test_asdiv_formula_of_several_steps_is_one_expression_over_the_text_numbers(tmp_path):
    p = asdiv_one(tmp_path, "A bag has 43 red, 19 blue and 16 green marbles. 77 marbles are taken out.",
                  "How many marbles are left?", "1 (marble)", "43+19+16=78; 78-77=1")
    # (43+19+16)-77: 78 is not in the text; it is the first step's expression
    assert p.values == [43, 19, 16, 77] and p.prefix() == ["-", "+", "+", "N0", "N1", "N2", "N3"] and p.answer == 1


def test_asdiv_formula_with_implicit_multiplication(tmp_path):
    p = asdiv_one(tmp_path, "A field is 75 m long and 15 m wide. Tom runs around it 3 times.",
                  "How far does he run?", "540 (m)", "x=3(75+15+75+15)")
    assert p.answer == 540  # 3*(75+15+75+15), not the mixed number 3+180 = 183
    assert p.prefix() == ["*", "N2", "+", "+", "+", "N0", "N1", "N0", "N1"]


def test_asdiv_formula_with_x_to_solve_and_units(tmp_path):
    p = asdiv_one(tmp_path, "Tom has some apples. After he buys 5 apples he has 12.", "How many did he have?",
                  "7 (apples)", "x+5 (apples)=12 (apples)")
    assert p.answer == 7 and p.values == [5, 12]


@pytest.mark.parametrize("formula, reason", [
    ("248/16=15 r8", "remainder"),
    ("5*3=15; x+15=20", "unparsable_equation"),  # x inside one step of several
    ("3:4", "unknown_symbol"),
    (";", "unparsable_equation"),
])
def test_asdiv_formulas_that_are_skipped(tmp_path, formula, reason):
    path = asdiv_file(tmp_path, asdiv_problem("p", "Tom has 15 apples and 3 more.", "How many?", "1 (apple)", formula))
    result = load_dataset("asdiv", path)
    assert not result.problems and skips(result) == {"p": reason}


def test_asdiv_answer_values(tmp_path):
    p = asdiv_one(tmp_path, "A cake needs 1 1/2 cups of flour and 2 cups of milk.", "How much in all?",
                  "3 1/2 (cups)", "1+1/2+2=3 1/2")
    assert p.answer == Fraction(7, 2)
