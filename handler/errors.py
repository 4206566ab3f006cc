"""Errors that are the user's to fix: the runtime prints them as one line, no traceback."""

from __future__ import annotations

import re
import reprlib
from typing import Final

# C0 and C1 controls and the Unicode line and paragraph separators: each could break a line.
_CONTROLS: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escape_controls(text: str) -> str:
    """`text` with each control character written as its escape (CR LF as `\\r\\n`): one line, always."""
    return _CONTROLS.sub(lambda found: repr(found.group())[1:-1], text)


class UserError(Exception):
    """A mistake in the user's inputs or data; its message is one line naming what and where.

    Whatever user text a message quotes, it prints as one line: control characters are escaped.
    """

    def __str__(self) -> str:
        return escape_controls(super().__str__())


class InputError(UserError, ValueError):
    """A node input (or CLI option) that breaks node.json's rules; `key` names the input, if one.

    `detail` is the message without the key, for an entry point that names the input its own
    way (the CLI says `--iou-min`, where the node says `IOU_MIN`).
    """

    def __init__(self, detail: str, key: str | None = None) -> None:
        super().__init__(f"{key}: {detail}" if key else detail)
        self.detail = detail


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
    """`repr(value)` cut to about QUOTE_LIMIT characters: how a message quotes a user's value.

    repr escapes control characters, so a quoted value never breaks the message's line.
    """
    text = _QUOTING.repr(value)
    return text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 3] + "..."


class ExecutionError(UserError, RuntimeError):
    """A shard could not be evaluated (a worker died, the cluster is unreachable): names which."""
