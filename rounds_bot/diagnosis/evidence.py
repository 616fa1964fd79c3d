"""Check that every piece of evidence points at something that exists.

A model can cite a file that is not there, a line past the end of a file, or an event id it made
up. Each evidence item is checked against what the bot has: the checkout (files and line counts;
paths may not leave it, nor name git's own records under `.git`) and the telemetry given to the model
(sample event ids; log lines and messages, and what the incident look-ups returned during the
diagnosis: a log line the model found with `get_logs_around` is as checkable as one in the prompt).
Unverifiable evidence is not dropped, it is flagged, and the issue says so. The fault location is
checked the same way (`check_location`): its file and lines must exist at the revision and its
function must be found in that file, at or before its lines.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterable
from pathlib import Path

from rounds_bot.diagnosis.model import (
    Diagnosis,
    DiagnosisRequest,
    Evidence,
    EvidenceCheck,
    FaultLocation,
    LocationCheck,
    LookupAnswer,
)

_WHITESPACE = re.compile(r"\s+")
#: a quote shorter than this matches almost any text and proves nothing
_SHORTEST_QUOTE = 8


#: a function is found where its name appears as a word (a definition or a call at the lines named)
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def check_evidence(
    diagnosis: Diagnosis, request: DiagnosisRequest, lookups: list[LookupAnswer] | None = None
) -> list[EvidenceCheck]:
    """One check per evidence item, in order. `lookups`: what the incident look-ups returned."""
    event_ids = {event.event_id for event in request.sample_events}
    telemetry = _telemetry_lines(request)
    looked_up = [
        _normalise(line) for item in lookups or [] for line in item.answer.splitlines() if line.strip()
    ]
    return [
        EvidenceCheck(index=index, **_check_one(item, request.checkout, event_ids, telemetry, looked_up))
        for index, item in enumerate(diagnosis.evidence)
    ]


def location_check(diagnosis: Diagnosis, request: DiagnosisRequest) -> LocationCheck | None:
    """The check of the answer's fault location, or None when it gives none."""
    if diagnosis.fault_location is None:
        return None
    return check_location(diagnosis.fault_location, request.checkout)


def check_location(location: FaultLocation, checkout: Path) -> LocationCheck:
    """The fault location's file and lines exist at the revision, and its function is named in that
    file at or before its last line (where a definition precedes its body)."""
    exists = _check_file_line(checkout, location.path, location.last_line)
    if not exists["verified"]:
        return LocationCheck(verified=False, reason=str(exists["reason"]))
    name = _simple_name(location.function)
    if name is None:
        return LocationCheck(verified=False, reason=f"{location.function!r} is not a function name")
    text = (checkout.resolve() / location.path.strip().removeprefix("./")).read_text(
        encoding="utf-8", errors="replace"
    )
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    lines = text.splitlines()[: location.last_line]
    if not any(word.search(line) for line in lines):
        return LocationCheck(
            verified=False,
            reason=f"{name} is not named in {location.path} up to line {location.last_line}",
        )
    return LocationCheck(verified=True, reason=f"{location.pointer()} exists and names {name}")


def _simple_name(function: str) -> str | None:
    """`Foo.bar(int)`, `Foo::bar` or `module.bar` -> `bar`: the name as the file spells it."""
    head = function.strip().split("(")[0]
    names = _IDENTIFIER.findall(head.replace("::", "."))
    return names[-1] if names else None


def _check_one(
    item: Evidence, checkout: Path, event_ids: set[str], telemetry: list[str], looked_up: list[str]
) -> dict[str, bool | str]:
    if item.kind == "file":
        assert item.path is not None and item.line is not None  # guaranteed by Evidence
        return _check_file_line(checkout, item.path, item.line)
    if item.kind == "event":
        if item.event_id in event_ids:
            return {"verified": True, "reason": "event id is among the sample events"}
        return {"verified": False, "reason": f"no sample event has id {item.event_id!r}"}
    quoted = _normalise(item.log_line or "")
    if len(quoted) < _SHORTEST_QUOTE:
        return {"verified": False, "reason": "log line is too short to identify anything"}
    if any(quoted in line for line in telemetry):
        return {"verified": True, "reason": "log line appears in the telemetry"}
    if any(quoted in line for line in looked_up):
        return {"verified": True, "reason": "log line was returned by an incident look-up in this diagnosis"}
    return {"verified": False, "reason": "log line does not appear in the telemetry given"}


def _check_file_line(checkout: Path, path: str, line: int) -> dict[str, bool | str]:
    try:
        return _check_existing_line(checkout, path, line)
    except OSError as error:
        # the model's path is untrusted: the file system may refuse it (a name over 255 bytes or a path
        # over 4,096, ENAMETOOLONG; a symlink loop, ELOOP; a file it may not read): it cites nothing
        # rounds can check, and the diagnosis still ends in a status, never an exception
        return {"verified": False, "reason": f"{path} cannot be read: {error.strerror or error}"}


def _check_existing_line(checkout: Path, path: str, line: int) -> dict[str, bool | str]:
    root = checkout.resolve()
    relative = path.strip().removeprefix("./")
    candidate = _resolved(root / relative)
    if not candidate.is_relative_to(root):
        return {"verified": False, "reason": f"{path} is outside the repository"}
    if _in_git_records(candidate.relative_to(root)):
        return {"verified": False, "reason": f"{path} is git's own record, not a file of the repository"}
    if not candidate.is_file():
        return {"verified": False, "reason": f"{path} does not exist at this revision"}
    line_count = _count_lines(candidate)
    if line > line_count:
        return {"verified": False, "reason": f"{path} has {line_count} lines, not {line}"}
    return {"verified": True, "reason": f"{path}:{line} exists"}


def _resolved(path: Path) -> Path:
    """`path.resolve()`, a symlink loop raised as the OSError (ELOOP) it is: Python 3.11 and 3.12 raise
    RuntimeError("Symlink loop from ...") there (Python docs, `pathlib.Path.resolve`, changed in 3.13), and
    a checkout may hold links that point at each other."""
    try:
        return path.resolve()
    except RuntimeError as error:
        if not str(error).startswith("Symlink loop"):
            raise
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path)) from error


def _in_git_records(relative: Path) -> bool:
    """Whether a path of the checkout is git's own (its configuration, remotes, hooks under `.git`): no
    commit holds such a file, as git refuses a path with a `.git` component in any case (git's
    read-cache.c, `verify_path`), so evidence citing one cites nothing of the revision."""
    return any(part.lower() == ".git" for part in relative.parts)


def _count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        data = handle.read()
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def _telemetry_lines(request: DiagnosisRequest) -> list[str]:
    texts: list[str] = [request.normalized_message, request.stacktrace or ""]
    for event in request.sample_events:
        texts += [event.message, event.stacktrace or ""]
    texts += [log.body for log in request.related_logs]
    # The model saw this text (redacted at ingestion) and quotes it, redaction markers included.
    return [_normalise(line) for line in _lines(texts) if line.strip()]


def _lines(texts: Iterable[str]) -> Iterable[str]:
    for text in texts:
        yield text
        yield from text.splitlines()


def _normalise(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()
