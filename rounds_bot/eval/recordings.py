"""Answers kept from earlier runs, replayed so a change to the prompt, tools or checks shows on every case.

    <recordings>/<label>/<case-id>.json

One folder per model or origin. A recording says where its answer came from (`origin`): `live` (a model
answered, through the real CLI), `scripted` (a scripted answer through the real CLI against a local fake of
the Messages API: it exercises the path, it measures no model), or `crash-site baseline`. It keeps the
prompt's fingerprint: replayed against a prompt that has changed since, it is scored and reported stale.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from rounds_bot.diagnosis.model import LookupAnswer, OutcomeStatus
from rounds_bot.models import Frozen

RecordingOrigin = Literal["live", "scripted", "crash-site baseline"]
RECORDING_FORMAT = 1


class Recording(Frozen):
    format: Literal[1] = 1
    case_id: str
    origin: RecordingOrigin
    model: str = Field(description="the model that answered, or what scripted the answer")
    prompt_fingerprint: str
    recorded_at: str = ""
    status: OutcomeStatus
    detail: str = ""
    answer: dict[str, Any] | None = Field(default=None, description="the answer object, as the model gave it")
    lookups: list[LookupAnswer] = Field(default_factory=list)
    turns: int = Field(default=0, ge=0)
    cost_usd: float = Field(default=0.0, ge=0)
    fix_patch: str | None = Field(
        default=None, description="the change the fix editor made for this answer (a git diff), when asked"
    )


class LoadedRecording(Frozen):
    label: str
    case_id: str
    recording: Recording | None = None
    problem: str | None = None


def load_recordings(root: Path | None) -> dict[str, dict[str, LoadedRecording]]:
    """label -> case id -> recording (or its problem)."""
    found: dict[str, dict[str, LoadedRecording]] = {}
    if root is None or not root.is_dir():
        return found
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        found[folder.name] = {path.stem: _load(folder.name, path) for path in sorted(folder.glob("*.json"))}
    return found


def _load(label: str, path: Path) -> LoadedRecording:
    try:
        recording = Recording.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as error:
        reason = error.errors()[0]["msg"] if isinstance(error, ValidationError) else str(error)
        return LoadedRecording(label=label, case_id=path.stem, problem=f"broken recording: {reason}")
    if recording.case_id != path.stem:
        return LoadedRecording(
            label=label, case_id=path.stem, problem=f"broken recording: it is for case {recording.case_id}"
        )
    return LoadedRecording(label=label, case_id=path.stem, recording=recording)


def save_recording(root: Path, label: str, recording: Recording) -> Path:
    folder = root / label
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{recording.case_id}.json"
    path.write_text(recording.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return path
