"""Command-line options made from the fields of a flow's settings model, so an option's help text,
shown default, type and choices are the model's own and cannot drift from what the flow validates.
The one generator of every command's options: ``run`` (each section of ``LoopParams``), ``split``,
``sd`` and ``study``.

An option made here defaults to None ("not given"): the model's default then applies, and the help
text shows it. A ``Literal`` field's choices are its registry's (``mwp.readers.FORMATS``, ...). The
options of a section are stored under ``<section>__<field>`` (:func:`add_section`, read back by
:func:`given_sections`), those of a flat model under the field's own name (:func:`given`).
"""
from __future__ import annotations

import argparse
import typing
from typing import Any

from pydantic import BaseModel

SECTION_SEP = "__"  # argparse dest "<section>__<field>" of an option made by add_section
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
    """``<description> (default <value>)``, or ``(required)``, from the model's field; a text given here,
    or a description that says what the default None means, already names its default."""
    info = model.model_fields[name]
    if info.is_required():
        return f"{text or info.description or name.replace('_', ' ')} (required)"
    default = info.get_default(call_default_factory=True)
    if "default" in (text or "") or (default is None and "default" in (info.description or "")):
        return text or info.description
    return f"{text or info.description or name.replace('_', ' ')} (default {shown(default)})"


def add_field(parser, model: type[BaseModel], name: str, *flags: str, **kwargs: Any) -> argparse.Action:
    """One option for field ``name`` (flag ``--field-name`` unless given): typed from the annotation
    (bool: ``--x/--no-x``; Optional: also ``none``; list: one or more values), help and shown default
    from the field; ``kwargs`` (choices, type, help text) override."""
    info = model.model_fields[name]
    annotation, args = info.annotation, typing.get_args(info.annotation)
    default = None if info.is_required() else info.get_default(call_default_factory=True)
    options: dict[str, Any] = {"dest": name, "default": None}
    if annotation is bool:
        options["action"] = argparse.BooleanOptionalAction
    elif typing.get_origin(annotation) is typing.Literal:
        options["choices"] = args
    elif typing.get_origin(annotation) is list and typing.get_origin(args[0]) is typing.Literal:
        options.update(nargs="+", choices=typing.get_args(args[0]))
    elif typing.get_origin(annotation) is list:
        options.update(nargs="+", type=args[0], metavar=name.upper())
    elif type(None) in args:  # Optional[int]: 'none' lifts a limit that is on by default
        kind = next(a for a in args if a is not type(None))
        options.update(type=none_or(kind) if default is not None else kind, metavar=name.upper())
    elif annotation in (int, float):
        options.update(type=annotation, metavar=name.upper())
    else:
        options["metavar"] = name.upper()
    if info.is_required():
        options["required"] = True
    text = kwargs.pop("help", None)
    suffix = "; 'none' for no limit" if type(None) in args and default is not None and annotation is not bool else ""
    options["help"] = field_help(model, name, text) + suffix
    options.update(kwargs)
    return parser.add_argument(*(flags or ("--" + name.replace("_", "-"),)), **options)


def add_section(parser, model: type[BaseModel], section: str, skip: tuple[str, ...] = (),
                only: tuple[str, ...] | None = None, flags: dict[str, tuple[str, ...]] | None = None,
                **per_field: dict[str, Any]) -> None:
    """One option per field of ``model`` (or of those in ``only``, less ``skip``), stored under
    ``<section>__<field>``; ``flags`` renames an option (field -> its flags), ``per_field`` overrides
    a field's option settings (field -> add_field kwargs)."""
    for name in model.model_fields:
        if name in skip or (only is not None and name not in only):
            continue
        add_field(parser, model, name, *(flags or {}).get(name, ()),
                  **{"dest": f"{section}{SECTION_SEP}{name}", **per_field.get(name, {})})


def given_sections(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """section -> {field: value} of the options made by :func:`add_section` that the user gave."""
    out: dict[str, dict[str, Any]] = {}
    for dest, value in vars(args).items():
        section, sep, name = dest.partition(SECTION_SEP)
        if sep and value is not None:
            out.setdefault(section, {})[name] = None if value == EXPLICIT_NONE else value
    return out


def given(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, Any]:
    """The model's fields the user gave on the command line (``none`` as None)."""
    return {name: None if value == EXPLICIT_NONE else value for name, value in vars(args).items()
            if name in model.model_fields and value is not None}
