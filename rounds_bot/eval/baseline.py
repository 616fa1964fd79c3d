"""The floor any model must beat: blame the crash site.

The answer a reader gets from the stack trace alone: the fault is in the innermost frame of the app's own
code (`grouping.crash_site`'s rule: no library, no test frame), mapped to a repository file the way issues
link frames (`code.mapping.CodeMap`), and it is a server bug. With no such frame, it abstains. It is an
answer like a model's, so it goes through the same checks and the same scoring.
"""

from __future__ import annotations

from typing import Any

from rounds_bot.code.mapping import CodeMap
from rounds_bot.eval.cases import Case
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace

ORIGIN = "crash-site baseline"


def crash_frame(case: Case) -> tuple[Frame, str] | None:
    """The innermost in-app frame of the case's first trace, and its repository path."""
    text = next((event.stacktrace for event in case.telemetry if event.stacktrace), None)
    trace = parse_stacktrace(text)
    if trace is None:
        return None
    roles = InAppRules(include=tuple(case.repository.in_app)).roles(trace)
    code = CodeMap(case.repository.files)
    for exception, exception_roles in zip(trace.exceptions, roles.frames, strict=True):
        for frame, role in zip(exception.frames, exception_roles, strict=True):
            if role.in_app:
                path = code.repo_path(frame)
                if path is not None:
                    return frame, path
    return None


def source_name(frame: Frame) -> str:
    """The frame's function as its file spells it: a JVM constructor (`<init>`) is its class's name."""
    function = frame.function or ""
    if function == "<init>" and frame.module:
        return frame.module.rsplit(".", 1)[-1].rsplit("$", 1)[-1]
    return function


def baseline_answer(case: Case) -> dict[str, Any]:
    """The crash-site answer, in the schema a model answers."""
    found = crash_frame(case)
    if found is None:
        return {
            "classification": "unknown",
            "missing_evidence": ["a stack trace with a frame of the service's own code"],
            "root_cause": "",
            "evidence": [],
            "suggested_fix": "",
            "confidence": "low",
        }
    frame, path = found
    line = frame.lineno or 1
    return {
        "classification": "server_bug",
        "root_cause": "The error is raised at the crash site.",
        "fault_location": {"path": path, "function": source_name(frame), "start_line": line},
        "evidence": [{"kind": "file", "path": path, "line": line, "explanation": "the crash site"}],
        "suggested_fix": "",
        "confidence": "medium",
    }
