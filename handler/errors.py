"""Errors that are the user's to fix: the runtime prints them as one line, no traceback."""

from __future__ import annotations

import reprlib
from typing import Final


class UserError(Exception):
    """A mistake in the user's inputs or data; its message is one line naming what and where."""


class InputError(UserError, ValueError):
    """A node input (or CLI option) that breaks node.json's rules."""


class DatasetError(UserError, ValueError):
    """A dataset that cannot be read: names the file, the position and what was expected."""


class StorageError(UserError, OSError):
    """The asset store cannot be read or written: names the store and what failed."""


# How much of a user's value a message quotes: enough to find it, never a whole line or file.
QUOTE_LIMIT: Final = 80


def _quoting() -> reprlib.Repr:
    # reprlib stops at a fixed depth, so a value nested a thousand deep quotes without recursing.
    quoting = reprlib.Repr()
    quoting.maxlevel, quoting.maxstring, quoting.maxother, quoting.maxlong = 3, QUOTE_LIMIT, QUOTE_LIMIT, 40
    quoting.maxlist = quoting.maxtuple = quoting.maxdict = 6
    return quoting


_QUOTING: Final = _quoting()


def quoted(value: object) -> str:
    """`repr(value)` cut to about QUOTE_LIMIT characters, for quoting a dataset's content."""
    text = _QUOTING.repr(value)
    return text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 3] + "..."


class ExecutionError(UserError, RuntimeError):
    """A shard could not be evaluated (a worker died, the cluster is unreachable): names which."""
