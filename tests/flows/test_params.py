"""One parameter path: every loop parameter, from the CLI or a --params file, reaches the pure config
it is meant for, and a value the pure config refuses is refused at validation with a line naming it."""
import argparse
import dataclasses
import json

import pytest
from pydantic import ValidationError

from cli.run import params_from_args, register
from flows.params import QUICK_RUN, AugmentSettings, LoopParams, LoopSettings, TrainSettings
from solvers.base import TrainConfig
from solvers.gts import GTSConfig
from solvers.transformer import TransformerConfig
from tasks.augment.base import AugmentConfig
from tasks.loop.config import LoopConfig


def parse(*argv: str) -> LoopParams:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return params_from_args(parser.parse_args(["run", *argv]))


def test_settings_models_use_the_pure_configs_field_names_and_defaults():
    train_fields = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
    # resume_dir is no parameter: the flow gives each round its own (round_NN/train_state)
    assert set(TrainSettings.model_fields) == set(train_fields) - {"seed", "device", "progress", "resume_dir"}
    assert all(TrainSettings.model_fields[k].default == train_fields[k] for k in TrainSettings.model_fields)
    augment_fields = {f.name: f.default for f in dataclasses.fields(AugmentConfig)}
    assert set(AugmentSettings.model_fields) == set(augment_fields) - {"seed"}
    assert AugmentSettings().config(seed=4) == AugmentConfig(seed=4)


def test_the_loop_settings_are_the_loop_configs_fields_and_defaults():
    loop_fields = {f.name: f.default for f in dataclasses.fields(LoopConfig)}
    assert {k: v.default for k, v in LoopSettings.model_fields.items()} == loop_fields
    assert LoopParams().configs().loop == LoopConfig()


def test_loop_settings_at_the_top_level_of_an_older_parameter_file_are_read_into_the_loop_section():
    old = LoopParams.model_validate({"rounds": 2, "keep_fraction": 0.3, "score": "random", "warm_start": True})
    assert old.loop.config() == LoopConfig(rounds=2, keep_fraction=0.3, score="random", warm_start=True)
    assert old == LoopParams.model_validate({"loop": {"rounds": 2, "keep_fraction": 0.3, "score": "random",
                                                      "warm_start": True}})
    with pytest.raises(ValidationError, match="rounds given both at the top level and in the loop section"):
        LoopParams.model_validate({"rounds": 2, "loop": {"rounds": 3}})


def test_every_cli_option_reaches_the_pure_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.json").write_text("[]")
    params = parse("--format", "mawps", "data.json", "--solver", "gts", "--hidden", "96", "--embedding", "32",
                   "--model", "dropout=0.25", "--model", "n_layers=1", "--model", "min_count=1",
                   "--epochs", "7", "--batch-size", "16", "--lr", "0.01", "--weight-decay", "0", "--lr-halving-epochs", "5",
                   "--patience", "3", "--eval-every", "2", "--beam-size", "3", "--grad-clip", "1.5", "--step", "dense",
                   "--operators", "geca_op1,reverse_operation", "--per-problem-cap", "4",
                   "--per-round-cap", "none", "--no-allow-unused-quantities", "--seed", "5", "--device", "cpu")
    assert params.solver.config() == GTSConfig(embedding_size=32, hidden_size=96, dropout=0.25, n_layers=1, min_count=1)
    assert params.train.config(seed=5, device="cpu", progress=False) == TrainConfig(
        epochs=7, batch_size=16, lr=0.01, weight_decay=0.0, lr_halving_epochs=5, patience=3, eval_every=2,
        beam_size=3, grad_clip=1.5, seed=5, device="cpu", progress=False, step="dense")
    assert params.augment.config(seed=5) == AugmentConfig(
        operators=("geca_op1", "reverse_operation"), per_problem_cap=4, per_round_cap=None,
        allow_unused_quantities=False, seed=5)
    assert str(params.data.spec().path) == "data.json" and params.data.spec().format == "mawps"
    warm = parse("--format", "mawps", "data.json", "--warm-start", "--warm-start-epochs", "9")
    assert warm.loop.config() == LoopConfig(warm_start=True, warm_start_epochs=9)
    assert not parse("--format", "mawps", "data.json", "--no-augment-rounds").loop.augment_rounds
    loop = parse("--format", "mawps", "data.json", "--rounds", "4", "--keep", "0.3", "--retention", "per-origin",
                 "--score", "uncertainty").loop.config()
    assert loop == LoopConfig(rounds=4, keep_fraction=0.3, retention="per-origin", score="uncertainty")
    assert parse("--format", "mawps", "data.json", "--keep-fraction", "0.5", "--keep-per-operator").loop.config() == \
        LoopConfig(keep_fraction=0.5, retention="per-operator")


def test_a_params_file_reaches_the_pure_config_and_the_cli_overrides_it(tmp_path):
    file = tmp_path / "p.json"
    file.write_text(json.dumps({"solver": {"name": "transformer", "model": {"n_heads": 2, "encoder_layers": 1}},
                                "train": {"epochs": 3}, "augment": {"per_problem_cap": 3}, "rounds": 2}))
    params = parse("--params", str(file), "--epochs", "4", "--model", "dropout=0.2")
    assert params.solver.config() == TransformerConfig(n_heads=2, encoder_layers=1, dropout=0.2)
    assert params.train.epochs == 4 and params.augment.config(0).per_problem_cap == 3 and params.loop.rounds == 2


def test_the_quick_run_is_one_preset_that_explicit_options_override(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.json").write_text("[]")
    quick = parse()
    assert quick.data.builtin_size == QUICK_RUN["data"]["builtin_size"] and quick.loop.rounds == QUICK_RUN["loop"]["rounds"]
    assert quick.solver.config().hidden_size == 128 and quick.train.epochs == 12
    assert quick.augment.per_round_cap == 1500
    assert parse("--epochs", "30", "--hidden", "64").train.epochs == 30
    assert parse("--format", "mawps", "x.json").train.epochs == 80  # a data file: the paper's settings


@pytest.mark.parametrize("argv, fragment", [
    (("--per-round-cap", "0"), "per_round_cap"),
    (("--model", "dropout=1.5"), "dropout must lie in [0, 1), got 1.5"),
    (("--model", "layers=2"), "gts' has no option layers; its options:"),
    (("--solver", "transformer", "--embedding", "30"), "embedding_size (30) must be a multiple of n_heads (4)"),
    (("--epochs", "0"), "epochs"),
    (("--operators", "geca_op3"), "unknown operator 'geca_op3'"),
    (("--operators", "paraphrase"), "not offered"),
    (("--per-problem-cap", "0"), "per_problem_cap"),
    (("--keep", "0"), "keep_fraction must lie in (0, 1], got 0"),
    (("--rounds", "51"), "rounds must be a whole number in [0, 50], got 51"),
    (("--warm-start-epochs", "0"), "warm_start_epochs must be at least 1"),
])
def test_a_value_the_pure_config_refuses_fails_at_validation(argv, fragment):
    with pytest.raises(ValidationError) as err:
        parse(*argv)
    assert fragment in str(err.value)


def test_a_refused_value_in_a_deployment_is_refused_too():
    with pytest.raises(ValidationError, match="n_layers must be positive"):
        LoopParams.model_validate({"solver": {"name": "gts", "model": {"n_layers": 0}}})
    with pytest.raises(ValidationError, match="needs a path"):
        LoopParams.model_validate({"data": {"format": "mawps"}})
