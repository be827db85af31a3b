"""Labels must use a quantity of their text (``label_uses_no_quantity``), and number words the equation
uses ("twice", "half", "a dozen", "thirty-six") are quantities of the text, in every reader; words the
equation does not use, and "one"/"a", are not."""
import json
from fractions import Fraction

import pytest

from mwp.problem import ProblemError, build_problem
from mwp.readers import load_dataset


def _build(text, equation, answer):
    return build_problem("p", text, equation, answer, "test", "en")


def _quantities(problem):
    return [(q.surface, q.value) for q in problem.quantities]


def test_twice_is_a_quantity_where_the_equation_uses_two():
    p = _build("Tom has 4 apples. Ann has twice as many. How many does Ann have?", "x=4*2", 8)
    assert _quantities(p) == [("4", 4), ("twice", 2)] and p.prefix() == ["*", "N0", "N1"]


def test_a_number_word_the_equation_does_not_use_stays_a_word():
    p = _build("Tom ate twice today and has 4 apples and 3 pears. How many fruits?", "x=4+3", 7)
    assert _quantities(p) == [("4", 4), ("3", 3)] and p.prefix() == ["+", "N0", "N1"]


def test_a_digit_in_the_text_goes_before_a_word_of_the_same_value():
    p = _build("Tom has 2 bags of 5 apples, twice what Ann has. How many apples?", "x=2*5", 10)
    assert _quantities(p) == [("2", 2), ("5", 5)]


def test_a_dozen_half_and_numbering_by_order_of_appearance():
    p = _build("Mia buys a dozen eggs at 3 dollars each. How much?", "x=12*3", 36)
    assert _quantities(p) == [("dozen", 12), ("3", 3)] and p.prefix() == ["*", "N0", "N1"]
    q = _build("Half of the 10 cookies are eaten. How many are eaten?", "x=10*0.5", 5)
    assert _quantities(q) == [("Half", Fraction(1, 2)), ("10", 10)] and q.prefix() == ["*", "N1", "N0"]
    # x/2 uses 2, not half's 0.5: "half" is not taken for a 2
    r = _build("Half of the 10 cookies are eaten. How many are eaten?", "x=10/2", 5)
    assert _quantities(r) == [("10", 10)] and r.prefix() == ["/", "N0", "2"]


def test_one_and_a_never_become_quantities():
    p = _build("One owns 0.5 of the car. How much does the other own?", "x=1-0.5", 0.5)
    assert _quantities(p) == [("0.5", Fraction(1, 2))] and p.prefix() == ["-", "1", "N0"]
    q = _build("A box holds 6 pens. How many pens are in one of the 2 boxes and a bag of 3?", "x=6+3", 9)
    assert _quantities(q) == [("6", 6), ("2", 2), ("3", 3)]


def test_compound_cardinals_are_one_quantity():
    p = _build("Thirty-six students and twenty-one teachers go. How many people go?", "x=36+21", 57)
    assert _quantities(p) == [("Thirty-six", 36), ("twenty-one", 21)] and p.prefix() == ["+", "N0", "N1"]
    # "twenty - five" with spaces stays two words: 20 and 5
    q = _build("Twenty - five apples. How many?", "x=20+5", 25)
    assert _quantities(q) == [("Twenty", 20), ("five", 5)]


def test_a_label_of_constants_alone_is_a_counted_skip():
    with pytest.raises(ProblemError) as err:
        _build("Nancy has saved 3 quarters. How much money is a quarter?", "x=0.25*1", 0.25)
    assert err.value.reason == "label_uses_no_quantity"
    assert str(err.value) == "equation 'x=0.25*1' uses none of the text's numbers, only constants"


def test_a_number_word_can_be_the_quantity_that_makes_a_label_usable():
    p = _build("Nancy has saved a dozen quarters. How much money does she have?", "x=12*0.25", 3)
    assert _quantities(p) == [("dozen", 12)] and p.prefix() == ["*", "N0", "0.25"]


CONSTANT_ONLY = "x=12*0.25"


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt,name,content", [
    ("mawps", "m.json", json.dumps([
        {"id": 1, "original_text": "Ann has 4 apples and twice as many pears . How many pears ?", "equation": "x=4*2", "ans": 8},
        {"id": 2, "original_text": "Nancy has 7 quarters . How much money ?", "equation": CONSTANT_ONLY, "ans": 3}])),
    ("math23k", "z.json", json.dumps([
        {"id": "1", "original_text": "小明有4个苹果，又买了5个，一共有多少个？", "equation": "x=4+5", "ans": "9"},
        {"id": "2", "original_text": "一打鸡蛋，每个2角5分，一打多少元？", "equation": "x=12*0.25", "ans": "3"}])),
    ("svamp", "s.json", json.dumps([
        {"ID": "a", "Body": "Ann has 4 apples and twice as many pears", "Question": "How many pears?",
         "Equation": "( 4.0 * 2.0 )", "Answer": 8.0},
        {"ID": "b", "Body": "Nancy has 7 quarters", "Question": "How much money?", "Equation": "( 12.0 * 0.25 )",
         "Answer": 3.0}])),
    ("jsonl", "j.jsonl",
     json.dumps({"id": "a", "text": "Ann has 4 apples and twice as many pears. How many pears?", "equation": "x=4*2",
                 "answer": 8}) + "\n" +
     json.dumps({"id": "b", "text": "Nancy has 7 quarters. How much?", "equation": CONSTANT_ONLY, "answer": 3}) + "\n"),
    ("csv", "t.csv", "id,Question,Numbers,Equation,Answer\n"
                     "a,Ann has number0 apples and twice as many pears . How many pears ?,4,* number0 2,8\n"
                     "b,Nancy has number0 quarters . How much ?,7,* 12 0.25,3\n"),
    ("asdiv", "a.xml", "<ProblemSet>"
     "<Problem ID='a'><Body>Ann has four apples and twice as many pears.</Body><Question>How many pears?</Question>"
     "<Answer>8 (pears)</Answer><Formula>4*2=8</Formula></Problem>"
     "<Problem ID='b'><Body>Nancy has 7 quarters.</Body><Question>How much?</Question>"
     "<Answer>3 (dollars)</Answer><Formula>12*0.25=3</Formula></Problem></ProblemSet>"),
])
def test_every_reader_counts_constant_only_labels_and_reads_number_words(tmp_path, fmt, name, content):
    result = load_dataset(fmt, _write(tmp_path / name, content))
    assert len(result.problems) == 1 and result.skipped == {"label_uses_no_quantity": 1}
    assert result.skipped_examples[0].reason == "label_uses_no_quantity"
    first = result.problems[0]
    if fmt != "math23k":
        assert [q.surface for q in first.quantities][-1] == "twice" and first.prefix() == ["*", "N0", "N1"]


def test_the_problems_reader_counts_a_stored_label_of_constants_alone(tmp_path):
    good = _build("Ann has 4 apples and twice as many pears. How many pears?", "x=4*2", 8)
    record = good.to_dict()
    bad = dict(record, id="b", expression=["*", "12", "0.25"], answer="3")
    path = _write(tmp_path / "p.jsonl", json.dumps(record) + "\n" + json.dumps(bad) + "\n")
    result = load_dataset("problems", path)
    assert [p.id for p in result.problems] == ["p"] and result.skipped == {"label_uses_no_quantity": 1}
    assert result.problems[0].quantities == good.quantities
