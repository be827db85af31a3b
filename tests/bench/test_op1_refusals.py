"""bench/op1_refusals.py books each refusal with the host and, for a refused pair, the donor drawn and the text it
would have made; a refusal of the host alone (before any donor is drawn) carries no donor, not one left over
from the host before it."""
import importlib.util
import sys
from collections import defaultdict
from pathlib import Path

from mwp.problem import build_problem
from tasks.augment import geca
from tasks.augment.base import AugmentConfig, CandidateBatch

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("op1_refusals", ROOT / "bench" / "op1_refusals.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["op1_refusals"] = module
    spec.loader.exec_module(module)
    return module


def _booked(monkeypatch) -> defaultdict:
    """geca_op1's refusals booked by the bench's counter: reason -> rows."""
    bench = _bench()
    book = defaultdict(list)

    def batch():
        b = CandidateBatch()
        b.rejected = bench.Booked(book)
        return b

    monkeypatch.setattr(geca, "CandidateBatch", batch)
    return book


def test_host_refusals_carry_no_donor_and_pair_refusals_carry_the_drawn_one(monkeypatch):
    book = _booked(monkeypatch)
    pool = [build_problem(f"h{i}", f"Ann has {10 + i} pens. She gives {i + 1} to Bob. How many pens does Ann have?",
                          f"x={10 + i}-{i + 1}", 9, "toy") for i in range(4)]
    pool += [build_problem(f"d{i}", f"Tom has {20 + i} pens. He buys {3 + i} more. How many pens does Tom have in all?",
                           f"x={20 + i}+{3 + i}", 23 + 2 * i, "toy") for i in range(4)]
    # "Mrs. Hilt": refused as a host before any donor is drawn (the period would cut a clause)
    pool += [build_problem(f"m{i}", f"Mrs. Hilt has {5 + i} pens. She buys 2 more. How many pens does Mrs. Hilt have?",
                           f"x={5 + i}+2", 7 + i, "toy") for i in range(6)]
    result = geca.geca_op1(pool, AugmentConfig(per_round_cap=None), 3, 1)
    assert result.candidates  # some hosts composed before the refused ones in the seeded order
    host_level = book["op1_abbreviation_cuts_a_clause"]
    assert len(host_level) == 6 and all("donor" not in row and "Mrs" in row["host"] for row in host_level)
    pairs = [row for reason, rows in book.items() if reason != "op1_abbreviation_cuts_a_clause" for row in rows
             if "donor" in row]
    assert pairs and all(row["would_be"] for row in pairs)  # near duplicates, Tom named before "She"


def test_a_refused_pair_of_named_numbers_is_booked_with_its_donor(monkeypatch):
    # zh_numbers.compose counts its pair refusals in its own frame, which has no pool-wide ``units``
    book = _booked(monkeypatch)
    host = build_problem("h", "甲数除以乙数，商是6，甲数是306，乙数=．", "x=306/6", 51, "m", language="zh")
    donor = build_problem("d", "一个数除以38，商是7，余数是23，这个数=．", "x=38*7+23", 289, "m", language="zh")
    geca.geca_op1([host, donor], AugmentConfig(per_round_cap=None), 0, 1)
    (row,) = book["op1_zh_number_result_said_twice"]
    assert row["donor"] == donor.text and row["clause"] == "甲数是306，"
