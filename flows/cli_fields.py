"""Command-line options made from the fields of a flow's settings model, so an option's help text,
shown default and type are the model's own and cannot drift from what the flow validates.

An option made here defaults to None ("not given"): the model's default then applies, and the help
text shows it. Choices are passed from the registries by the caller (``mwp.readers.FORMATS``, ...).
"""
from __future__ import annotations

import argparse
import typing
from typing import Any

from pydantic import BaseModel

EXPLICIT_NONE = "\0none"  # "--max-compound-depth none" (no limit), unlike an option not given (None)


def none_or(kind):
    """An argparse type reading ``none``/``null`` as an explicit None."""
    def parse(text: str):
        return EXPLICIT_NONE if text.lower() in ("none", "null") else kind(text)
    parse.__name__ = kind.__name__
    return parse


def shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value)) if value else "none"
    return str(value)


def field_help(model: type[BaseModel], name: str, text: str | None = None) -> str:
    """``<description> (default <value>)``, or ``(required)``, from the model's field."""
    info = model.model_fields[name]
    text = text or info.description or name.replace("_", " ")
    if info.is_required():
        return f"{text} (required)"
    return f"{text} (default {shown(info.get_default(call_default_factory=True))})"


def add_field(parser, model: type[BaseModel], name: str, *flags: str, **kwargs: Any) -> argparse.Action:
    """One option for field ``name`` (flag ``--field-name`` unless given): typed from the annotation
    (bool: ``--x/--no-x``; Optional: also ``none``; list: one or more values), help and shown default
    from the field; ``kwargs`` (choices, type, help text) override."""
    info = model.model_fields[name]
    annotation, args = info.annotation, typing.get_args(info.annotation)
    options: dict[str, Any] = {"dest": name, "default": None}
    if annotation is bool:
        options["action"] = argparse.BooleanOptionalAction
    elif typing.get_origin(annotation) is list:
        options.update(nargs="+", type=args[0])
    elif type(None) in args:  # Optional[int]
        kind = next(a for a in args if a is not type(None))
        options.update(type=none_or(kind), metavar=name.upper())
    elif annotation in (int, float):
        options["type"] = annotation
    if info.is_required():
        options["required"] = True
    text = kwargs.pop("help", None)
    suffix = "; 'none' for no limit" if type(None) in args and annotation is not bool else ""
    options["help"] = field_help(model, name, text) + suffix
    options.update(kwargs)
    return parser.add_argument(*(flags or ("--" + name.replace("_", "-"),)), **options)


def given(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, Any]:
    """The model's fields the user gave on the command line (``none`` as None)."""
    return {name: None if value == EXPLICIT_NONE else value for name, value in vars(args).items()
            if name in model.model_fields and value is not None}
