"""A JSON object from a model's answer text, whichever way the model wrapped it.

Both back-ends read the answer this way when it did not arrive as structured output: the whole
text, else a fenced ```json block, else the text between the outermost braces.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCED_JSON = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def parse_json_answer(text: str) -> dict[str, Any] | None:
    """A JSON object from model text: the whole text, a fenced block, or the outermost braces."""
    text = text.strip()
    candidates = [text]
    candidates += [match.group(1) for match in _FENCED_JSON.finditer(text)]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        parsed = json_object(candidate)
        if parsed is not None:
            return parsed
    return None


def json_object(text: str) -> dict[str, Any] | None:
    """`text` parsed as JSON when it is one object, else None."""
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
