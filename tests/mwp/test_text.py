"""Tokenizer and sentence splitter."""
from mwp.text import detect_language, detokenize, is_number_token, split_sentences, tokenize


def test_english_tokens_keep_numbers_whole():
    assert tokenize("Tom has 3.5 apples, 40% of 1,000 pears.") == [
        "Tom", "has", "3.5", "apples", ",", "40%", "of", "1,000", "pears", "."]
    assert tokenize("It's 3/4 full.") == ["It's", "3/4", "full", "."]


def test_chinese_is_split_by_character_with_numbers_whole():
    assert tokenize("小明有(1/2)个苹果，3．5元。", "zh") == ["小", "明", "有", "(1/2)", "个", "苹", "果", "，", "3.5", "元", "。"]
    assert detect_language("小明有3个苹果") == "zh"
    assert detect_language("Tom has 3 apples") == "en"


def test_sentences_end_at_stops_and_a_trailing_fragment_is_kept():
    tokens = tokenize("Tom has 3 apples. Ann has 5! How many in all")
    assert split_sentences(tokens) == [["Tom", "has", "3", "apples", "."], ["Ann", "has", "5", "!"],
                                       ["How", "many", "in", "all"]]


def test_number_tokens_and_detokenize():
    assert is_number_token("40%") and is_number_token("(1/2)") and is_number_token("1,000")
    assert not is_number_token("apples") and not is_number_token("3a")
    assert detokenize(["Tom", "has", "3", "apples", ",", "40", "%", "."]) == "Tom has 3 apples, 40%."


def test_clauses_end_at_commas_semicolons_and_sentence_ends_and_lone_punctuation_joins():
    from mwp.text import clause_spans

    tokens = "There are 36 peaches , 4 boxes ; how many ? !".split()
    assert clause_spans(tokens) == [(0, 5), (5, 8), (8, 12)]
    assert clause_spans(["a", ",", ",", "b"]) == [(0, 3), (3, 4)]  # ", ," : the lone comma joins "a ,"
    assert clause_spans([]) == []
