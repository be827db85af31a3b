"""Bad-input cases of the commands that start work: ``compaug split``, ``sd``, ``run`` and ``study`` with bad
data, split files, parameter files and options; every one must fail before any flow runs."""
from __future__ import annotations

from corpus import REL, case, jdump, put

# ---------------------------------------------------------------- split and sd

def split_and_sd() -> None:
    def split(cid, kind, args, fragment):
        case(f"split/{cid}", "split", kind, ["split", *args, "--out", "{tmp}/split.json"] if "--out" not in args
             else ["split", *args], 2, fragment)

    split("missing_file", "no such file", ["--format", "mawps", "{cases}/mawps/missing.json"], "{cases}/mawps/missing.json: no such file")
    split("folder", "a folder instead of a file", ["--format", "mawps", "{cases}/common/a_folder"],
          "{cases}/common/a_folder: a folder, not a mawps file")
    split("not_json", "not JSON", ["--format", "mawps", "{cases}/common/not_json.json"], "{cases}/common/not_json.json: not JSON")
    split("empty_file", "empty file", ["--format", "mawps", "{cases}/mawps/empty.json"], "{cases}/mawps/empty.json: empty file")
    split("empty_list", "no records", ["--format", "mawps", "{cases}/common/empty_list.json"], "{cases}/common/empty_list.json: no records")
    split("all_bad", "every record bad", ["--format", "mawps", "{cases}/mawps/all_bad.json"],
          "{cases}/mawps/all_bad.json: no usable problems: all 2 records skipped")
    split("latin1", "non-UTF-8 bytes", ["--format", "mawps", "{cases}/common/latin1.json"], "{cases}/common/latin1.json: not UTF-8 text")
    split("one_problem", "too few problems", ["--format", "jsonl", "{cases}/common/one.jsonl"],
          "{cases}/common/one.jsonl: 1 usable problems cannot be split 80%/20%")
    split("jsonl_bad_line", "not JSON", ["--format", "jsonl", "{cases}/jsonl/not_json_line.jsonl"],
          "{cases}/jsonl/not_json_line.jsonl:2: not JSON")
    split("csv_no_column", "missing field", ["--format", "csv", "{cases}/csv/no_answer_column.csv"],
          "{cases}/csv/no_answer_column.csv: missing CSV columns ['Answer']")
    split("asdiv_not_xml", "not XML", ["--format", "asdiv", "{cases}/asdiv/not_xml.xml"], "{cases}/asdiv/not_xml.xml: not XML")
    split("problems_no_jsonl", "a folder without records", ["--format", "problems", "{cases}/problems/no_jsonl_folder"],
          "{cases}/problems/no_jsonl_folder: no .jsonl files")
    split("builtin_with_path", "a path for generated data", ["--format", "builtin", "{cases}/common/good.jsonl"],
          "the builtin corpus is generated, it takes no path")
    split("no_path", "missing parameter", ["--format", "mawps"], "format 'mawps' needs a data file")
    split("unknown_format", "bad parameter", ["--format", "gsm8k", "{cases}/common/good.jsonl"], "argument --format: invalid choice: 'gsm8k'")
    split("unknown_method", "bad parameter", ["--format", "builtin", "--method", "random"], "argument --method: invalid choice: 'random'")
    split("test_fraction_high", "bad parameter", ["--format", "builtin", "--test-fraction", "1.5"],
          "test_fraction: Input should be less than 1")
    split("test_fraction_zero", "bad parameter", ["--format", "builtin", "--test-fraction", "0"],
          "test_fraction: Input should be greater than 0")
    split("test_fraction_nan", "bad parameter", ["--format", "builtin", "--test-fraction", "nan"], "test_fraction: Input should be")
    split("k_zero", "bad parameter", ["--format", "builtin", "--k", "0"], "--k must be auto or a positive integer, got '0'")
    split("k_word", "bad parameter", ["--format", "builtin", "--k", "ten"], "--k must be auto or a positive integer, got 'ten'")
    split("min_compound_zero", "bad parameter", ["--format", "builtin", "--min-compound-examples", "0"],
          "min_compound_examples: Input should be greater than 0")
    split("max_iterations_zero", "bad parameter", ["--format", "builtin", "--max-iterations", "0"],
          "max_iterations: Input should be greater than 0")
    split("candidates_negative", "bad parameter", ["--format", "builtin", "--candidates", "-1"],
          "candidates: Input should be greater than or equal to 0")
    split("atom_divergence_high", "bad parameter", ["--format", "builtin", "--max-atom-divergence", "2"],
          "max_atom_divergence: Input should be less than or equal to 1")
    split("target_divergence_high", "bad parameter", ["--format", "builtin", "--target-divergence", "1.5"],
          "target_divergences.0: Input should be less than or equal to 1")
    split("out_folder", "output is a folder", ["--format", "jsonl", "{cases}/common/good.jsonl", "--out", "{cases}/common"],
          "--out {cases}/common: a folder, not a file name")
    split("out_under_file", "output under a file", ["--format", "jsonl", "{cases}/common/good.jsonl", "--out",
                                                    "{cases}/common/good.jsonl/split.json"],
          "--out {cases}/common/good.jsonl/split.json: cannot write there ({cases}/common/good.jsonl is a file, not a folder)")

    def sd(cid, kind, args, fragment):
        case(f"sd/{cid}", "sd", kind, ["sd", *args, "--out", "{tmp}/sd"] if "--out" not in args else ["sd", *args], 2, fragment)

    sd("missing_file", "no such file", ["--format", "mawps", "{cases}/mawps/missing.json"], "{cases}/mawps/missing.json: no such file")
    sd("folder", "a folder instead of a file", ["--format", "svamp", "{cases}/common/a_folder"],
       "{cases}/common/a_folder: a folder, not a svamp file")
    sd("not_json", "not JSON", ["--format", "mawps", "{cases}/common/not_json.json"], "{cases}/common/not_json.json: not JSON")
    sd("empty_list", "no records", ["--format", "svamp", "{cases}/common/empty_list.json"], "{cases}/common/empty_list.json: no records")
    sd("all_bad", "every record bad", ["--format", "jsonl", "{cases}/jsonl/all_bad.jsonl"],
       "{cases}/jsonl/all_bad.jsonl: no usable problems: all 2 records skipped")
    sd("no_seeds", "usable problems, none an SD seed", ["--format", "jsonl", "{cases}/common/good.jsonl"],
       "{cases}/common/good.jsonl: none of its 12 usable problems is a seed of the SD rule table")
    sd("problems_truncated", "truncated JSON", ["--format", "problems", "{cases}/problems/folder_with_bad_file"],
       "{cases}/problems/folder_with_bad_file/test.jsonl:1: not JSON")
    sd("k_zero", "bad parameter", ["--format", "builtin", "--k", "0"], "k: Input should be greater than 0")
    sd("k_word", "bad parameter", ["--format", "builtin", "--k", "ten"], "argument --k: invalid int value: 'ten'")
    sd("builtin_with_path", "a path for generated data", ["--format", "builtin", "{cases}/common/good.jsonl"],
       "the builtin corpus is generated, it takes no path")
    sd("no_path", "missing parameter", ["--format", "csv"], "format 'csv' needs a data file")
    sd("out_file", "output is a file", ["--format", "jsonl", "{cases}/jsonl/bom.jsonl", "--out", "{cases}/common/good.jsonl"],
       "--out {cases}/common/good.jsonl: cannot write there (a file, not a folder)")


# ---------------------------------------------------------------- run

def run() -> None:
    def run_case(cid, kind, args, fragment):
        case(f"run/{cid}", "run", kind, ["run", *args, "--out", "{tmp}/runs"], 2, fragment)

    def params(name, content):
        return put(f"run/{name}.json", content if isinstance(content, (str, bytes)) else jdump(content))

    run_case("params_missing", "no such file", ["--params", "{cases}/run/missing.json"],
             "--params {cases}/run/missing.json: cannot read it: No such file or directory")
    run_case("params_folder", "a folder instead of a file", ["--params", "{cases}/run"],
             "--params {cases}/run: cannot read it: Is a directory")
    run_case("params_empty", "empty file", ["--params", params("empty", b"")], "--params {cases}/run/empty.json: not JSON")
    run_case("params_not_json", "not JSON", ["--params", params("not_json", "rounds: 3\n")], "--params {cases}/run/not_json.json: not JSON")
    run_case("params_truncated", "truncated JSON", ["--params", params("truncated", '{"rounds": 3, "train": {"epo')],
             "--params {cases}/run/truncated.json: not JSON")
    run_case("params_latin1", "non-UTF-8 bytes", ["--params", params("latin1", '{"experiment": "caf\xe9"}'.encode("latin-1"))],
             "--params {cases}/run/latin1.json: not UTF-8 text")
    run_case("params_list", "wrong top-level type", ["--params", params("list", [{"rounds": 3}])],
             "--params {cases}/run/list.json: expected a JSON object")
    run_case("params_unknown_key", "unknown parameter", ["--params", params("unknown_key", {"round": 3})],
             "round: Extra inputs are not permitted")
    run_case("params_wrong_type", "wrong parameter type", ["--params", params("wrong_type", {"rounds": "three"})],
             "rounds: Input should be a valid integer")
    run_case("params_epochs_zero", "bad parameter", ["--params", params("epochs_zero", {"train": {"epochs": 0}})],
             "train.epochs: Input should be greater than or equal to 1")
    run_case("params_unknown_solver", "unknown solver", ["--params", params("unknown_solver", {"solver": {"name": "gpt5"}})],
             "solver.name: Input should be")
    run_case("params_unknown_operator", "unknown operator",
             ["--params", params("unknown_operator", {"augment": {"operators": ["geca_op3"]}})], "geca_op3")
    run_case("params_missing_data", "no such file",
             ["--params", params("missing_data", {"data": {"format": "mawps", "path": f"{REL}/mawps/missing.json"}})],
             f"data: {REL}/mawps/missing.json: no such file")
    run_case("params_unknown_format", "unknown format", ["--params", params("unknown_format", {"data": {"format": "gsm8k"}})],
             "data.format: Input should be")
    # the data file
    run_case("data_not_json", "not JSON", ["--format", "mawps", "{cases}/common/not_json.json"], "{cases}/common/not_json.json: not JSON")
    run_case("data_empty", "empty file", ["--format", "svamp", "{cases}/svamp/empty.json"], "{cases}/svamp/empty.json: empty file")
    run_case("data_all_bad", "every record bad", ["--format", "mawps", "{cases}/mawps/all_bad.json"],
             "{cases}/mawps/all_bad.json: no usable problems: all 2 records skipped")
    run_case("data_empty_list", "no records", ["--format", "math23k", "{cases}/common/empty_list.json"],
             "{cases}/common/empty_list.json: no records")
    run_case("data_folder", "a folder instead of a file", ["--format", "mawps", "{cases}/common/a_folder"],
             "{cases}/common/a_folder: a folder, not a mawps file")
    run_case("data_missing", "no such file", ["--format", "asdiv", "{cases}/asdiv/missing.xml"], "{cases}/asdiv/missing.xml: no such file")
    run_case("data_jsonl_default", "another format, read as jsonl", ["{cases}/mawps/bom.json"], "{cases}/mawps/bom.json:1: expected an object")
    run_case("data_too_few", "too few problems", ["--format", "jsonl", "{cases}/common/few.jsonl"],
             "{cases}/common/few.jsonl: too few problems to split: 3 usable")
    run_case("data_no_path", "missing parameter", ["--format", "csv"], "data: format 'csv' needs a path")
    # the split file
    good = ["--format", "jsonl", "{cases}/common/good.jsonl"]

    def split_file(name, content):
        return put(f"run/split_{name}.json", content if isinstance(content, (str, bytes)) else jdump(content))

    run_case("split_missing", "no such file", [*good, "--split", "{cases}/run/split_missing.json"],
             "split file {cases}/run/split_missing.json: cannot read it as JSON: [Errno 2] No such file")
    run_case("split_folder", "a folder instead of a file", [*good, "--split", "{cases}/run"],
             "split file {cases}/run: cannot read it as JSON: [Errno 21] Is a directory")
    run_case("split_not_json", "not JSON", [*good, "--split", split_file("not_json", "train: g01\n")],
             "split file {cases}/run/split_not_json.json: cannot read it as JSON")
    run_case("split_latin1", "non-UTF-8 bytes", [*good, "--split", split_file("latin1", '{"train": ["caf\xe9"]}'.encode("latin-1"))],
             "split file {cases}/run/split_latin1.json: cannot read it as JSON")
    run_case("split_list", "wrong top-level type", [*good, "--split", split_file("list", [["g01"], ["g10"]])],
             "split file {cases}/run/split_list.json: expected a JSON object with 'train' and 'test' lists")
    run_case("split_no_test", "missing field", [*good, "--split", split_file("no_test", {"train": ["g01"]})],
             "split file {cases}/run/split_no_test.json: missing the list 'test'")
    run_case("split_test_string", "wrong field type", [*good, "--split", split_file("test_string", {"train": ["g01"], "test": "g10"})],
             "split file {cases}/run/split_test_string.json: missing the list 'test'")
    run_case("split_overlap", "ids on both sides", [*good, "--split", split_file("overlap", {"train": ["g01", "g02"], "test": ["g02"]})],
             "split file {cases}/run/split_overlap.json: 1 ids are on both sides, e.g. ['g02']")
    run_case("split_method_path", "path in a name", [*good, "--split", split_file("method_path", {"method": "../../x", "train": ["g01"],
                                                                                                 "test": ["g10"]})],
             "split file {cases}/run/split_method_path.json: method '../../x' is not a plain name")
    run_case("split_other_dataset", "split file for another data set",
             [*good, "--split", split_file("other_dataset", {"method": "comdiv", "train": [str(i) for i in range(1, 10)],
                                                            "test": ["10", "11", "12"]})],
             "split file {cases}/run/split_other_dataset.json with data {cases}/common/good.jsonl: none of the split file's 9 train ids")
    run_case("split_unreadable_ids", "unreadable split ids",
             [*good, "--split", split_file("unreadable_ids", {"train": [{"id": "g01"}, ["g02"]], "test": [None]})],
             "split file {cases}/run/split_unreadable_ids.json with data {cases}/common/good.jsonl: none of the split file's 2 train ids")
    run_case("split_empty_test", "empty side", [*good, "--split", split_file("empty_test", {"train": ["g01", "g02"], "test": []})],
             "split file {cases}/run/split_empty_test.json: the list 'test' is empty")
    run_case("split_builtin", "split file for another data set", ["--split", "{cases}/common/good_split.json"],
             "split file {cases}/common/good_split.json with data the builtin corpus: none of the split file's 9 train ids")
    # parameters
    run_case("device_word", "bad parameter", ["--device", "gpu0"], "device must be auto, cpu, cuda or cuda:N, got 'gpu0'")
    run_case("pretrained_gts", "option of another solver", ["--pretrained", "{cases}/common/a_folder"],
             "solver 'gts' has no option pretrained_path")
    run_case("model_unknown", "unknown parameter", ["--model", "layers=2"], "solver 'gts' has no option layers")
    run_case("model_dropout", "bad parameter", ["--model", "dropout=2"], "dropout must lie in [0, 1), got 2")
    run_case("model_not_key_value", "bad parameter", ["--model", "dropout"], "argument --model: expected KEY=VALUE, got 'dropout'")
    run_case("epochs_zero", "bad parameter", ["--epochs", "0"], "train.epochs: Input should be greater than or equal to 1")
    run_case("epochs_word", "bad parameter", ["--epochs", "many"], "argument --epochs: invalid int value: 'many'")
    run_case("lr_negative", "bad parameter", ["--lr", "-0.1"], "train.lr: Input should be greater than 0")
    run_case("rounds_negative", "bad parameter", ["--rounds", "-1"], "rounds must be a whole number in [0, 50], got -1")
    run_case("keep_zero", "bad parameter", ["--keep", "0"], "keep_fraction must lie in (0, 1], got 0")
    run_case("operators_unknown", "unknown operator", ["--operators", "geca_op1,swap"], "swap")
    run_case("retention_unknown", "bad parameter", ["--retention", "best"], "argument --retention: invalid choice: 'best'")
    run_case("solver_unknown", "unknown solver", ["--solver", "gpt5"], "argument --solver: invalid choice: 'gpt5'")
    run_case("experiment_path", "path in a name", ["--experiment", "../../elsewhere"], "experiment: String should match pattern")
    run_case("experiment_absolute", "path in a name", ["--experiment", "/tmp/elsewhere"], "experiment: String should match pattern")
    run_case("test_fraction_high", "bad parameter", ["--test-fraction", "1.5"], "test_fraction: Input should be less than 1")
    run_case("limit_small", "bad parameter", [*good, "--limit", "5"], "data.limit: Input should be greater than or equal to 10")
    run_case("builtin_size_small", "bad parameter", ["--builtin-size", "5"], "data.builtin_size: Input should be greater than or equal to 20")
    case("run/out_file", "run", "output is a file", ["run", "--out", "{cases}/common/good.jsonl"], 2,
         "--out {cases}/common/good.jsonl: cannot write there (a file, not a folder)")


# ---------------------------------------------------------------- study

def study() -> None:
    def study_case(cid, kind, content, fragment, extra=()):
        path = put(f"study/{cid}.json", content if isinstance(content, (str, bytes)) else jdump(content))
        case(f"study/{cid}", "study", kind, ["study", "--params", path, "--out", "{tmp}/studies", *extra], 2, fragment)

    good_data = {"format": "jsonl", "path": f"{REL}/common/good.jsonl"}
    study_case("not_json", "not JSON", "splits: [iid]\n", "--params {cases}/study/not_json.json: not JSON")
    study_case("empty", "empty file", b"", "--params {cases}/study/empty.json: not JSON")
    study_case("latin1", "non-UTF-8 bytes", '{"name": "caf\xe9"}'.encode("latin-1"), "--params {cases}/study/latin1.json: not UTF-8 text")
    study_case("list", "wrong top-level type", [{"name": "s"}], "--params {cases}/study/list.json: expected a JSON object")
    study_case("unknown_key", "unknown parameter", {"epochs": 3}, "epochs: Extra inputs are not permitted")
    study_case("unknown_solver", "unknown solver", {"solvers": [{"name": "gpt5"}]}, "solvers.0.name: Input should be")
    study_case("unknown_arm", "unknown arm", {"arms": ["loop", "no-ranker"]}, "arms.1: Input should be")
    study_case("unknown_split_format", "unknown format", {"splits": [{"name": "x", "data": {"format": "gsm8k"}}]},
               "splits.0.data.format: Input should be")
    study_case("split_name_path", "path in a name", {"splits": [{"name": "../x"}]}, "splits.0.name: String should match pattern")
    study_case("name_path", "path in a name", {"name": "a/b"}, "name: String should match pattern")
    study_case("duplicate_split", "repeated name", {"splits": [{"name": "iid"}, {"name": "iid"}]},
               "each split may appear once in a study")
    study_case("seeds_repeat", "bad parameter", {"seeds": [0, 0]}, "seeds repeat: [0, 0]")
    study_case("rounds_zero", "bad parameter", {"loop": {"rounds": 0}}, "loop.rounds: a study's loop arms need at least one round, got 0")
    study_case("no_operator_left", "arm leaves no operator", {"arms": ["no-op1"], "augment": {"operators": ["geca_op1"]}},
               "arm no-op1 leaves no operator")
    study_case("split_file_missing", "no such file", {"splits": [{"name": "comdiv", "data": good_data,
                                                                  "split_file": f"{REL}/study/missing.json"}]},
               f"split 'comdiv': split file {REL}/study/missing.json does not exist")
    study_case("split_file_not_json", "not JSON", {"splits": [{"name": "comdiv", "data": good_data,
                                                               "split_file": f"{REL}/common/not_json.json"}]},
               f"split file {REL}/common/not_json.json: cannot read it as JSON")
    study_case("split_other_dataset", "split file for another data set",
               {"splits": [{"name": "comdiv", "data": good_data, "split_file": f"{REL}/run/split_other_dataset.json"}]},
               f"split 'comdiv': split file {REL}/run/split_other_dataset.json with data {REL}/common/good.jsonl: "
               "none of the split file's 9 train ids")
    study_case("split_file_builtin", "split file for another data set",
               {"splits": [{"name": "comdiv", "split_file": f"{REL}/common/good_split.json"}]},
               f"split 'comdiv': split file {REL}/common/good_split.json with data the builtin corpus: none of")
    study_case("data_all_bad", "every record bad", {"splits": [{"name": "iid", "data": {"format": "mawps",
                                                                                        "path": f"{REL}/mawps/all_bad.json"}}]},
               f"split 'iid': {REL}/mawps/all_bad.json: no usable problems: all 2 records skipped")
    study_case("data_missing", "no such file", {"splits": [{"name": "iid", "data": {"format": "mawps",
                                                                                    "path": f"{REL}/mawps/missing.json"}}]},
               f"splits.0.data: {REL}/mawps/missing.json: no such file")
    study_case("workers_word", "bad parameter", {}, "argument --workers: invalid int value", extra=["--workers", "x"])
    case("study/params_missing", "study", "no such file", ["study", "--params", "{cases}/study/missing.json", "--out", "{tmp}/s"], 2,
         "--params {cases}/study/missing.json: cannot read it: No such file or directory")
    case("study/arms_unknown", "study", "unknown arm", ["study", "--arms", "loop", "magic", "--out", "{tmp}/s"], 2,
         "argument --arms: invalid choice: 'magic'")
