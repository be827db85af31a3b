"""Each reader on a small fixture file written by the test, with its skip reasons."""
import json
from fractions import Fraction

import pytest

from mwp.readers import DataFormatError, load_dataset, require_problems, summary


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_mawps(tmp_path):
    records = [
        {"id": 1, "original_text": "Bryan has 56 books in each of his 9 bookshelves . How many books ?",
         "segmented_text": "", "equation": "x=56*9", "ans": 504.0},
        {"id": 2, "original_text": "500 candies go into 6 bags . How many in each bag ?", "equation": "X=500.0/6.0",
         "ans": "83.33"},  # rounded answer: accepted
        {"id": 3, "original_text": "Tom has 0.7 kg and 0.6 kg . How much ?", "equation": "x=0.7+0.6", "ans": 0.1},
        {"id": 4, "original_text": "Sam has 5 pens . How many ?", "equation": "X=0.32=0.21", "ans": 0.53},
        {"id": 5, "original_text": None, "equation": "x=1+2", "ans": 3},
    ]
    result = load_dataset("mawps", write(tmp_path / "m.json", json.dumps(records)))
    assert [p.id for p in result.problems] == ["1", "2"]
    assert result.problems[0].prefix() == ["*", "N0", "N1"] and result.problems[0].answer == 504
    assert result.problems[1].answer == Fraction(250, 3)
    assert result.skipped == {"answer_mismatch": 1, "unparsable_equation": 1, "bad_record": 1}
    assert [(s.record_id, s.reason) for s in result.skipped_examples] == [
        ("3", "answer_mismatch"), ("4", "unparsable_equation"), ("5", "bad_record")]
    assert result.total == 5 and result.problems[0].provenance.source == "mawps"


def test_mawps_record_without_a_field_names_file_and_record(tmp_path):
    path = write(tmp_path / "bad.json", json.dumps([{"id": 7, "original_text": "a", "ans": 1}]))
    with pytest.raises(DataFormatError, match=r"bad\.json.*record 7.*'equation'"):
        load_dataset("mawps", path)
    with pytest.raises(DataFormatError, match="bad2.json"):
        load_dataset("mawps", write(tmp_path / "bad2.json", "{not json"))


MATH23K = [
    {"id": "1", "original_text": "小明有3个苹果，又买了5个，一共有多少个？", "equation": "x=3+5", "ans": "8", "split": "train"},
    {"id": "2", "original_text": "一本书120页，看了40%，还剩多少页？", "equation": "x=120*[1-40%]", "ans": "72", "split": "test"},
    {"id": "3", "original_text": "把11个梨平均分给3人，每人多少个？", "equation": "x=11/3", "ans": "3((2)/(3))", "split": "valid"},
    {"id": "4", "original_text": "速度是80千米/小时，是多少？", "equation": "x=80千米/小时", "ans": "80", "split": "train"},
]


@pytest.mark.parametrize("layout", ["list", "stream"])
def test_math23k(tmp_path, layout):
    if layout == "list":
        text = json.dumps(MATH23K, ensure_ascii=False)
    else:  # the original file: objects one after another, not in a list
        text = "\n".join(json.dumps(r, ensure_ascii=False, indent=1) for r in MATH23K)
    result = load_dataset("math23k", write(tmp_path / "m.json", text))
    assert [p.id for p in result.problems] == ["1", "2", "3"]
    assert all(p.language == "zh" for p in result.problems)
    assert result.problems[0].tokens[:3] == ["小", "明", "有"]
    assert result.problems[1].prefix() == ["*", "N0", "-", "1", "N1"]  # 1 is a constant; 40% is N1
    assert result.problems[2].answer == Fraction(11, 3)
    assert result.splits == {"1": "train", "2": "test", "3": "valid"}
    assert result.skipped == {"unknown_symbol": 1}


def test_svamp(tmp_path):
    records = [
        {"ID": "chal-1", "Body": "Jack had 8 pens. Mary had 5 pens", "Question": "How many more pens does Jack have?",
         "Equation": "( 8.0 - 5.0 )", "Answer": 3.0, "Type": "Subtraction"},
        {"ID": "chal-2", "Body": "There are 4 boxes and 0 shelves.", "Question": "How many boxes on each shelf?",
         "Equation": "( 4.0 / 0.0 )", "Answer": 1.0, "Type": "Common-Division"},
    ]
    result = load_dataset("svamp", write(tmp_path / "s.json", json.dumps(records)))
    (p,) = result.problems
    # Body + " " + Question; a body without a final stop gets one so the question is its own sentence.
    assert p.text == "Jack had 8 pens. Mary had 5 pens. How many more pens does Jack have?"
    assert len(p.sentences) == 3 and p.question[0] == "How"
    assert p.prefix() == ["-", "N0", "N1"] and p.answer == 3
    assert result.skipped == {"division_by_zero": 1}


ASDIV = """<?xml version="1.0" encoding="utf-8"?>
<Machine-Reading-Corpus-File><ProblemSet>
<Problem ID="nluds-0001" Grade="1" Source="http://example">
  <Body>Seven red apples and two green apples are in the basket.</Body>
  <Question>How many apples are in the basket?</Question>
  <Solution-Type>Addition</Solution-Type><Answer>9 (apples)</Answer><Formula>7+2=9</Formula>
</Problem>
<Problem ID="nluds-0002" Grade="3" Source="http://example">
  <Body>248 pupils sit in rows of 16.</Body><Question>How many full rows are there?</Question>
  <Solution-Type>Floor-Division</Solution-Type><Answer>15 (rows)</Answer><Formula>248/16=15 r8</Formula>
</Problem>
<Problem ID="nluds-0003" Grade="2" Source="http://example">
  <Body>A class has 12 boys and 16 girls.</Body><Question>What is the ratio of boys to girls?</Question>
  <Solution-Type>Ratio</Solution-Type><Answer>3:4</Answer><Formula>12/16=0.75</Formula>
</Problem>
<Problem ID="nluds-0004" Grade="2" Source="http://example">
  <Body>Tom had 3.5 dollars and found 1.25 dollars.</Body><Question>How much does he have?</Question>
  <Solution-Type>Addition</Solution-Type><Answer>4.75 (dollars)</Answer><Formula>3.5+1.25=4.75</Formula>
</Problem>
</ProblemSet></Machine-Reading-Corpus-File>
"""


def test_asdiv(tmp_path):
    result = load_dataset("asdiv", write(tmp_path / "a.xml", ASDIV))
    assert [p.id for p in result.problems] == ["nluds-0001", "nluds-0004"]
    first, second = result.problems
    assert first.values == [7, 2] and first.prefix() == ["+", "N0", "N1"] and first.answer == 9  # "Seven" read as 7
    assert second.answer == Fraction(19, 4)
    assert result.skipped == {"remainder": 1, "bad_answer": 1}
    assert {s.record_id: s.reason for s in result.skipped_examples} == {"nluds-0002": "remainder", "nluds-0003": "bad_answer"}


def test_asdiv_problem_without_formula_is_a_format_error(tmp_path):
    text = "<ProblemSet><Problem ID='x1'><Body>a</Body><Question>b</Question><Answer>1</Answer></Problem></ProblemSet>"
    with pytest.raises(DataFormatError, match=r"a\.xml.*x1.*Formula"):
        load_dataset("asdiv", write(tmp_path / "a.xml", text))


def test_toolkit_csv(tmp_path):
    text = (
        "id,Question,Numbers,Equation,Answer\n"
        "q1,Tom has number0 apples and buys number1 more . How many apples ?,3 5,+ number0 number1,8\n"
        "q2,A box holds number0 pens . How many pens in number1 boxes ?,12 (1/2),* number0 number1,6\n"
        "q3,Ann has number0 cats . How many ?,4,* number0 number2,8\n"
        "q4,Ann has number0 cats . How many ?,4,+ number0,8\n"
    )
    result = load_dataset("csv", write(tmp_path / "t.csv", "\ufeff" + text))  # with a BOM, as spreadsheets save
    assert [p.id for p in result.problems] == ["q1", "q2"]
    assert result.problems[0].text == "Tom has 3 apples and buys 5 more. How many apples?"
    assert result.problems[0].prefix() == ["+", "N0", "N1"] and result.problems[0].answer == 8
    assert result.problems[1].values == [12, Fraction(1, 2)] and result.problems[1].prefix() == ["*", "N0", "N1"]
    assert result.skipped == {"number_missing_from_text": 1, "unparsable_equation": 1}


def test_toolkit_csv_without_columns(tmp_path):
    with pytest.raises(DataFormatError, match=r"t\.csv.*Numbers"):
        load_dataset("csv", write(tmp_path / "t.csv", "Question,Equation,Answer\na,b,c\n"))


def test_jsonl_and_duplicate_ids(tmp_path):
    lines = [
        {"id": "a", "text": "Tom has 3 apples. Ann gives him 4. How many apples?", "equation": "x=3+4", "answer": 7},
        {"id": "b", "text": "Tom has 3 apples. How many?", "equation": "x=3*9", "answer": 27},
        {"id": "a", "text": "Sam has 2 pens and 6 pencils. How many?", "equation": "x=2+6", "answer": 8},
    ]
    path = write(tmp_path / "d.jsonl", "\n".join(json.dumps(r) for r in lines) + "\n\n")
    result = load_dataset("jsonl", path)
    assert [p.id for p in result.problems] == ["a"] and result.problems[0].answer == 7
    assert result.skipped == {"number_missing_from_text": 1, "duplicate_id": 1}
    info = summary(result)
    assert info["usable"] == 1 and info["total"] == 3 and info["depth_histogram"] == {"1": 1}
    assert info["templates"] == 1 and info["languages"] == {"en": 1}


def test_jsonl_malformed_line_names_file_and_line(tmp_path):
    path = write(tmp_path / "d.jsonl", '{"id": "a", "text": "t 1", "equation": "x=1", "answer": 1}\n{oops\n')
    with pytest.raises(DataFormatError, match=r"d\.jsonl:2"):
        load_dataset("jsonl", path)
    path = write(tmp_path / "e.jsonl", '{"id": "a", "text": "t 1", "answer": 1}\n')
    with pytest.raises(DataFormatError, match=r"e\.jsonl:1.*equation"):
        load_dataset("jsonl", path)


def test_load_dataset_arguments(tmp_path):
    with pytest.raises(ValueError, match="unknown format"):
        load_dataset("parquet", tmp_path / "x")
    with pytest.raises(FileNotFoundError):
        load_dataset("mawps", tmp_path / "missing.json")
    with pytest.raises(ValueError):
        load_dataset("builtin", tmp_path / "x.json")
    with pytest.raises(ValueError):
        load_dataset("mawps")
    result = load_dataset("builtin", n=30, seed=1)
    assert len(result.problems) == 30 and not result.skipped and result.source == "builtin"


def test_problems_format_reads_compaugs_own_records_from_a_file_or_a_folder(tmp_path):
    from mwp.builtin import generate_corpus
    from mwp.problem import write_jsonl
    from mwp.readers import DataFormatError, load_dataset

    corpus = generate_corpus(12, seed=4)
    folder = tmp_path / "sd"
    folder.mkdir()
    write_jsonl(corpus[:8], folder / "train.jsonl")
    write_jsonl(corpus[6:], folder / "test.jsonl")  # two ids repeat: counted, not silently merged
    result = load_dataset("problems", folder)
    # files in name order: test.jsonl (6..11), then the train problems not seen yet (0..5)
    assert [p.id for p in result.problems] == [p.id for p in corpus[6:] + corpus[:6]]
    assert result.problems[0] == corpus[6]
    assert result.skipped == {"duplicate_id": 2}
    assert len(load_dataset("problems", folder / "train.jsonl").problems) == 8
    (tmp_path / "bad.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(DataFormatError, match="bad.jsonl:1"):
        load_dataset("problems", tmp_path / "bad.jsonl")


def test_exact_duplicates_are_dropped_before_anything_else_and_counted(tmp_path):
    import json

    from mwp.readers import load_dataset

    rows = [{"id": "1", "text": "Tom has 3 apples and 4 pears. How many fruits?", "equation": "x=3+4", "answer": 7},
            {"id": "2", "text": "Tom has 3 apples and 4 pears.  How many fruits?", "equation": "x=3+4", "answer": 7},
            {"id": "3", "text": "Tom has 3 apples and 4 pears. How many more apples?", "equation": "x=4-3", "answer": 1}]
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = load_dataset("jsonl", path)
    assert [p.id for p in result.problems] == ["1", "3"]
    assert result.skipped["duplicate_problem"] == 1 and result.duplicates == {"2": "1"}
    assert "same text and expression as '1'" in result.skipped_examples[-1].message


def test_chinese_text_in_an_english_format_is_a_counted_skip_and_a_chinese_file_an_error(tmp_path):
    english = {"id": 1, "original_text": "Sam has 5 pens and 3 more . How many ?", "equation": "x=5+3", "ans": 8}
    other = {"id": 2, "original_text": "Ann has 7 cups and 2 more . How many ?", "equation": "x=7+2", "ans": 9}
    chinese = [{"id": r["id"] + "0", "original_text": r["original_text"], "equation": r["equation"], "ans": r["ans"]}
               for r in MATH23K[:3]]
    few = load_dataset("mawps", write(tmp_path / "few.json", json.dumps([english, other, chinese[0]])))
    assert [p.id for p in few.problems] == ["1", "2"] and few.skipped == {"text_not_english": 1}
    skip = few.skipped_examples[0]
    assert skip.record_id == "10" and "the text is Chinese, and the mawps format reads English" in skip.message
    assert require_problems(few, "few.json") is few
    most = load_dataset("mawps", write(tmp_path / "most.json", json.dumps([english, *chinese])))
    with pytest.raises(DataFormatError, match=r"most\.json: 3 of 4 records hold Chinese text, which the mawps format "
                                              r"reads as English \(Chinese data such as Math23K: format math23k\)"):
        require_problems(most, "most.json")
    assert len(load_dataset("math23k", write(tmp_path / "zh.json", json.dumps(MATH23K))).problems) == 3  # as before


def test_english_text_in_a_chinese_format_is_a_counted_skip_and_arithmetic_alone_is_not(tmp_path):
    english = [{"id": str(i), "original_text": f"Sam has {i} pens and 3 more . How many ?", "equation": f"x={i}+3",
                "ans": str(i + 3), "split": "train"} for i in (4, 5)]
    arithmetic = {"id": "9", "original_text": "23*42+26*40=．", "equation": "x=23*42+26*40", "ans": "2006"}
    mixed = load_dataset("math23k", write(tmp_path / "mixed.json", json.dumps([*MATH23K[:2], arithmetic, english[0]])))
    assert [p.id for p in mixed.problems] == ["1", "2", "9"] and mixed.skipped == {"text_not_chinese": 1}
    assert "the text is English, and the math23k format reads Chinese" in mixed.skipped_examples[0].message
    most = load_dataset("math23k", write(tmp_path / "most.json", json.dumps([MATH23K[0], *english])))
    with pytest.raises(DataFormatError, match=r"2 of 3 records hold English text, which the math23k format reads "
                                              r"as Chinese \(English data such as MAWPS: format mawps\)"):
        require_problems(most, "most.json")
