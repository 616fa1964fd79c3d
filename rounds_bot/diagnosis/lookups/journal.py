"""What the incident look-ups answered during one diagnosis, kept so the answer can be checked against it.

The look-up server runs in its own process (the CLI starts it), so it appends each answer it gives to a
JSON Lines file the diagnoser named in the scope file, in the diagnosis's throwaway folder. When the run
ends the diagnoser reads it back: a log line the model quotes as evidence is verified when a look-up
returned it, exactly as one in the prompt is. A line that is not a whole JSON record (a run stopped while
writing) is skipped: it only means less can be verified, never more.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from rounds_bot.diagnosis.model import LookupAnswer

#: the journal is bounded like the look-ups themselves: past this, answers are not recorded
MAX_JOURNAL_BYTES = 2_000_000


def record(path: Path, tool: str, arguments: dict[str, str | int], answer: str) -> None:
    """Append one answer to the journal at `path`."""
    line = LookupAnswer(tool=tool, arguments=arguments, answer=answer).model_dump_json() + "\n"
    if path.exists() and path.stat().st_size + len(line) > MAX_JOURNAL_BYTES:
        return
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line)


def read(path: Path) -> list[LookupAnswer]:
    """The answers recorded at `path`, in order; none when there is no journal."""
    if not path.is_file():
        return []
    answers: list[LookupAnswer] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            answers.append(LookupAnswer.model_validate(json.loads(line)))
        except (ValueError, ValidationError):
            continue
    return answers
