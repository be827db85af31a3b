"""Writes that survive a crash of the machine: a file that marks progress is either its old version or
its new one, never empty or cut short, and once the call returns the new one stays after a power cut.

Writing to a temporary name and renaming it over the target is atomic for processes, but not for the
disk: the kernel may write the rename (metadata) before the file's data, so after a power cut the
target can exist empty. :func:`write_durable` therefore writes the temporary file, flushes and fsyncs
it, renames it over the target, and fsyncs the directory (which makes the rename itself durable).
:func:`sync_tree` makes files written the ordinary way durable before a marker vouches for them (a
round's checkpoint and pools before its ``metrics.json``).

It lives in ``mwp`` because every layer writes such files (run records in tasks/, training state in
solvers/, split and study documents) and arrows point down only.
"""
from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any, BinaryIO, Callable


def fsync_directory(directory: str | os.PathLike) -> None:
    """Make the directory's entries (a rename, a new file) durable."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durable(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> None:
    """Write ``path`` with ``write(file)`` so that it is the old file or the new one after any crash:
    a temporary file beside it (unique, so two writers never share one), flushed and fsynced, renamed
    over ``path``, then the directory fsynced. A failure in ``write`` removes the temporary file and
    leaves ``path`` as it was."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # os.open with mode 0o666 honours the umask, as an ordinary write would (mkstemp makes 0o600 files)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def write_bytes_durable(path: str | os.PathLike, data: bytes) -> None:
    write_durable(path, lambda fh: fh.write(data))


def write_text_durable(path: str | os.PathLike, text: str) -> None:
    write_bytes_durable(path, text.encode("utf-8"))


def write_json_durable(path: str | os.PathLike, data: Any, **dumps: Any) -> None:
    """``data`` as JSON (``dumps`` go to :func:`json.dumps`), durably."""
    write_text_durable(path, json.dumps(data, **dumps))


def sync_tree(directory: str | os.PathLike) -> None:
    """fsync every file under ``directory`` and every directory, itself included: what was written
    there the ordinary way is on disk before a marker that vouches for it is written."""
    directory = Path(directory)
    for root, _, files in os.walk(directory):
        for name in files:
            fd = os.open(Path(root) / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_directory(root)
