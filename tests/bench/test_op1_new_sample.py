"""bench/op1_new_sample.py's count of kinds: renamings are one text up to names, and hosts, composed templates
(numbers masked) and their pairs are counted apart."""
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_diversity_counts_renamings_once_and_templates_without_numbers(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("op1_new_sample", ROOT / "bench" / "op1_new_sample.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "op1_new_sample", module)
    spec.loader.exec_module(module)

    def row(text, equation, host):
        return {"text": text, "equation": equation, "parents": [{"id": host}, {"id": "d"}]}

    rows = [row("Ann has 3 pens. She buys 2 more. How many pens?", "3+2", "h1"),
            row("Sue has 3 pens. She buys 2 more. How many pens?", "3+2", "h1"),  # a renaming
            row("Ann has 4 pens. She buys 5 more. How many pens?", "4+5", "h1"),  # same host, same template
            row("Tom has 9 cups. He breaks 2. How many cups?", "9-2", "h2")]
    assert module.diversity(rows) == {"verified": 4, "distinct_up_to_names": 3, "hosts": 2, "templates": 2,
                                      "host_x_template": 2}
