"""The paths a diagnosis names: files of the repository, as the model writes them. They are printed into the
fix prompt and the issue, so one holds nothing that could start a line of the model's choosing there."""

from __future__ import annotations

import unicodedata
from typing import Annotated

from pydantic import AfterValidator, Field

#: longer than any path of a source file; a path is printed into the fix prompt, so it is bounded
MAX_PATH_CHARS = 1_000
#: Unicode categories no file name of a repository needs: control characters (line breaks among them), the
#: line and paragraph separators, and invisible format characters (bidirectional overrides, zero widths)
_NOT_IN_A_PATH = frozenset({"Cc", "Zl", "Zp", "Cf"})


def _repository_path(path: str) -> str:
    """`path` when it can name a file of the repository: one line, nothing invisible. The answer's paths are
    the model's words, printed into the fix prompt and the issue: a line break in one would start a line of
    the model's choosing there (a heading, a forged fence)."""
    for character in path:
        if unicodedata.category(character) in _NOT_IN_A_PATH:
            raise ValueError(
                f"a path names a file of the repository: it holds no line break, control or invisible "
                f"character (found U+{ord(character):04X})"
            )
    return path


RepositoryPath = Annotated[str, Field(max_length=MAX_PATH_CHARS), AfterValidator(_repository_path)]
