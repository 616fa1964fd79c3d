"""What actions/upload-artifact (v4 and later, the majors the workflows pin) takes from a job, for the
workflow harness's stand-in:

    files = uploaded_files(path, include_hidden=False)   # what the artifact holds, relative names
    name_problem("rounds/db")    # the action's error for a name it refuses; "" for one it takes

- Hidden files and folders (a name starting with `.`) are left out unless `include-hidden-files: true`
  (upload-artifact's README, input `include-hidden-files`: "If false, hidden files will be excluded from the
  artifact", the default since v4.4.0).
- An artifact's name, and each uploaded file's path, may not hold `"`, `:`, `<`, `>`, `|`, `*`, `?`, a
  carriage return or a line feed, and the name neither `\\` nor `/` (actions/toolkit, packages/artifact,
  src/internal/upload/path-and-artifact-name-validation.ts, and docs/additional-information.md, "Non-Supported
  Characters": "They will be rejected by the server"); the action then fails its step.
- `retention-days` is 1 to 90 unless the repository's settings allow more (the input's description).
"""

from __future__ import annotations

from pathlib import Path

# the action's own words for each character (path-and-artifact-name-validation.ts)
_PATH_CHARACTERS = {
    '"': ' Double quote "',
    ":": " Colon :",
    "<": " Less than <",
    ">": " Greater than >",
    "|": " Vertical bar |",
    "*": " Asterisk *",
    "?": " Question mark ?",
    "\r": " Carriage return \\r",
    "\n": " Line feed \\n",
}
_NAME_CHARACTERS = {**_PATH_CHARACTERS, "\\": " Backslash \\", "/": " Forward slash /"}
MAX_RETENTION_DAYS = 90


def name_problem(name: str) -> str:
    """The action's error for an artifact name it refuses, "" for one it takes."""
    for character, words in _NAME_CHARACTERS.items():
        if character in name:
            return f"The artifact name is not valid: {name}. Contains the following character: {words}"
    return "" if name else "Provided artifact name input during validation is empty"


def path_problem(relative: str) -> str:
    """The action's error for an uploaded file's path it refuses, "" for one it takes."""
    for character, words in _PATH_CHARACTERS.items():
        if character in relative:
            return (
                f"The path for one of the files in artifact is not valid: {relative}. "
                f"Contains the following character: {words}"
            )
    return ""


def uploaded_files(path: Path, *, include_hidden: bool) -> list[tuple[Path, str]]:
    """The files an upload of `path` (a file or a folder) takes, each with its name in the artifact."""
    if path.is_file():
        return [] if path.name.startswith(".") and not include_hidden else [(path, path.name)]
    if not path.is_dir():
        return []
    files = []
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        relative = file.relative_to(path)
        if not include_hidden and any(part.startswith(".") for part in relative.parts):
            continue
        files.append((file, relative.as_posix()))
    return files
