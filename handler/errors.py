"""Errors that are the user's to fix: the runtime prints them as one line, no traceback."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's inputs or data; its message is one line naming what and where."""


class InputError(UserError, ValueError):
    """A node input (or CLI option) that breaks node.json's rules."""


class DatasetError(UserError, ValueError):
    """A dataset that cannot be read: names the file, the position and what was expected."""


class StorageError(UserError, OSError):
    """The asset store cannot be read or written: names the store and what failed."""


class ExecutionError(UserError, RuntimeError):
    """A shard could not be evaluated (a worker died, the cluster is unreachable): names which."""
