"""The report templates' compiled code, kept between runs in a per-user cache folder.

jinja2 turns a template's source into Python code in every new `Environment`; for the page's
templates that costs more than rendering them. jinja2's bytecode cache
keeps that code: a run loads it, checked against the hash of the template's source (an edited
template is compiled again) and against the settings that shape the code (`code_settings`).
The folder is `$XDG_CACHE_HOME/prelabel-eval/templates` (`~/.cache/...` when unset). Where it
cannot be made, read or written (no home, a read-only file system), the templates are compiled
as they were before the cache: the page is the same, only slower.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Mapping
from contextlib import suppress
from hashlib import sha1
from pathlib import Path
from typing import Final

import jinja2
from jinja2.bccache import Bucket

CACHE_FOLDER: Final = Path("prelabel-eval", "templates")
# Environment settings that change the code a template compiles to (jinja2's lexer and code generator).
CODE_SETTINGS: Final = (
    "autoescape",
    "block_start_string",
    "block_end_string",
    "variable_start_string",
    "variable_end_string",
    "comment_start_string",
    "comment_end_string",
    "line_statement_prefix",
    "line_comment_prefix",
    "trim_blocks",
    "lstrip_blocks",
    "newline_sequence",
    "keep_trailing_newline",
    "optimized",
)


def code_settings(environment: jinja2.Environment) -> str:
    """What, besides a template's source, its compiled code depends on."""
    settings = [repr(getattr(environment, name)) for name in CODE_SETTINGS]
    return "|".join([jinja2.__version__, *settings, *sorted(environment.extensions)])


def cache_folder(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The per-user folder of compiled templates, made if needed; None when there is none to write."""
    try:
        base = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        folder = base / CACHE_FOLDER
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except (OSError, RuntimeError):  # RuntimeError: no home directory to be found
        return None
    return folder


class CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """jinja2's file cache, keyed by template name and code settings, never failing a render.

    The key leaves out the template's path, so a copy of the templates elsewhere (another checkout,
    a test's folder) replaces the entry instead of adding one; the source hash keeps that safe.
    """

    def __init__(self, folder: Path, settings: str) -> None:
        super().__init__(str(folder))
        self._settings = settings

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return sha1(f"{name}|{self._settings}".encode()).hexdigest()

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError, pickle.UnpicklingError):  # unreadable or cut short
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with suppress(OSError):  # a full disk or a read-only folder: the next run compiles again
            super().dump_bytecode(bucket)


def use_compiled_templates(environment: jinja2.Environment) -> None:
    """Give `environment` the per-user cache of compiled templates, when there is a folder for it."""
    folder = cache_folder()
    if folder is not None:
        environment.bytecode_cache = CompiledTemplates(folder, code_settings(environment))
