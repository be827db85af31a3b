"""Every option of every ``compaug`` sub-command says what it does and, when it has one, its default;
``split`` and ``sd`` options are made from their settings models, so none is missing or drifts."""
import argparse

import pytest

from cli.main import build_parser
from cli.fields import given
from flows.split import SDParams, SplitParams
from mwp.readers import FORMATS
from tasks.dbca.atoms import K_RULES
from tasks.dbca.splitter import SPLIT_METHODS


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(``("data", "describe")``, parser) for every parser, nested sub-commands included."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, path + (name,))


def _options(parser: argparse.ArgumentParser):
    return [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def _name(path, action) -> str:
    return f"compaug {' '.join(path)} {'/'.join(action.option_strings) or action.dest}"


def test_every_option_of_every_command_has_a_help_text():
    commands = dict(_commands(build_parser()))
    assert {("run",), ("split",), ("sd",), ("data", "describe"), ("study",)} <= set(commands)
    missing = [_name(path, a) for path, parser in commands.items() for a in _options(parser)
               if not (a.help or "").strip() or a.help == argparse.SUPPRESS]
    assert missing == []


@pytest.mark.parametrize("command", [("split",), ("sd",), ("data", "describe")])
def test_split_sd_and_data_options_show_their_default_or_say_they_are_required(command):
    parser = dict(_commands(build_parser()))[command]
    unshown = [_name(command, a) for a in _options(parser)
               if a.option_strings and a.nargs != 0 and not isinstance(a, argparse.BooleanOptionalAction)
               and "default" not in a.help and "required" not in a.help]
    flags = [a for a in _options(parser) if isinstance(a, argparse.BooleanOptionalAction)]
    unshown += [_name(command, a) for a in flags if "default" not in a.help]
    assert unshown == []


def test_split_and_sd_have_an_option_for_every_field_with_the_fields_default_and_registry_choices():
    commands = dict(_commands(build_parser()))
    for command, model in ((("split",), SplitParams), (("sd",), SDParams)):
        actions = {a.dest: a for a in _options(commands[command])}
        assert set(model.model_fields) <= set(actions), command
        for name, info in model.model_fields.items():
            if not info.is_required() and actions[name].option_strings:
                default = info.get_default(call_default_factory=True)
                shown = "none" if default in (None, []) else (
                    " ".join(map(str, default)) if isinstance(default, list) else str(default))
                assert f"default {shown}" in actions[name].help, (command, name)
        assert actions["format"].choices == FORMATS
    split = {a.dest: a for a in _options(commands[("split",)])}
    assert split["method"].choices == SPLIT_METHODS and split["k_rule"].choices == K_RULES


def test_options_not_given_take_the_models_defaults_and_none_lifts_a_limit():
    parser = build_parser()
    args = parser.parse_args(["split", "--format", "builtin", "--out", "s.json"])
    assert SplitParams.model_validate(given(args, SplitParams)) == SplitParams(format="builtin", out="s.json")
    args = parser.parse_args(["split", "--format", "builtin", "--out", "s.json", "--no-group-moves", "--ks", "4", "8",
                              "--max-compound-depth", "none", "--k", "8", "--target-divergence", "0.5", "0.6"])
    params = SplitParams.model_validate(given(args, SplitParams))
    assert (params.group_moves, params.ks, params.max_compound_depth, params.k) == (False, [4, 8], None, 8)
    assert params.target_divergences == [0.5, 0.6]
    args = parser.parse_args(["sd", "--format", "builtin", "--out", "sd", "--seed", "3"])
    assert SDParams.model_validate(given(args, SDParams)) == SDParams(format="builtin", out="sd", seed=3)


def test_the_open_the_ui_hint_is_the_readmes_mlflow_command():
    import re
    from pathlib import Path

    from cli.run import mlflow_ui_command

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    documented = re.search(r"^MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false .*mlflow server .*$", readme, re.M).group(0)
    hint = mlflow_ui_command("sqlite:////tmp/runs/mlflow.db")
    program = hint.split()[1]
    assert program.endswith("mlflow")
    assert hint == documented.replace(".venv/bin/mlflow", program).replace("sqlite:///$PWD/runs/mlflow.db",
                                                                           "sqlite:////tmp/runs/mlflow.db")


def test_every_loop_setting_is_an_option_of_run_and_study_with_its_help_and_choices():
    """A loop setting is declared once (tasks/loop/config.py); both commands offer it from there."""
    import dataclasses

    from ranking.retention import POLICIES
    from tasks.loop.config import LoopConfig

    commands = dict(_commands(build_parser()))
    for command in (("run",), ("study",)):
        actions: dict = {}
        for a in _options(commands[command]):  # the first option of a dest (not run's --keep-per-operator)
            actions.setdefault(a.dest, a)
        for f in dataclasses.fields(LoopConfig):
            action = actions[f"loop__{f.name}"]
            assert action.help.startswith(f.metadata["help"].split(" (")[0][:40]), (command, f.name)
        assert actions["loop__retention"].choices == tuple(POLICIES)
        assert "--keep" in actions["loop__keep_fraction"].option_strings


def test_study_shares_round_zero_unless_told_not_to():
    from cli.study import study_params

    parser = build_parser()
    assert study_params(parser.parse_args(["study"])).share_round_zero is True
    assert study_params(parser.parse_args(["study", "--no-share-round-zero"])).share_round_zero is False
