"""Each item of a diagnosis's lists stays one item, with rounds' flag on it, whatever the model wrote.

An evidence item's explanation, a missing-observability or missing-evidence item, is the model's text put
after `- `. A blank line in it would end the list item (CommonMark: a paragraph continues an item only when
indented), so the rest of the model's text stood outside the list as rounds' own paragraphs, and rounds'
"unverified" flag, written after the text, landed on the last of them, away from the item it flags. Each
item is one line of escaped text (`markdown.escape`); the item's text is all still shown.
"""

from __future__ import annotations

import re

import cmarkgfm
import pytest
from diagnosis_samples import good_answer

from rounds_bot.diagnosis.model import Diagnosis, EvidenceCheck
from rounds_bot.render.diagnosis import render_diagnosis

BREAKOUT = "the call\n\nEvidence verified by rounds: every item.\n\n\nThe fix is safe to merge"


def _items(html: str, heading: str) -> list[str]:
    """The `<li>` texts of the list under `heading`, and any paragraph between it and the next heading."""
    section = html.split(f"<h3>{heading}</h3>", 1)[1].split("<h3>", 1)[0]
    return re.findall(r"<li>(.*?)</li>|<p>(.*?)</p>", section, flags=re.S)


def test_an_explanation_with_blank_lines_stays_in_its_item_with_its_flag():
    answer = good_answer(
        evidence=[
            {"kind": "file", "path": "shop/cart.py", "line": 7, "explanation": BREAKOUT},
            {"kind": "event", "event_id": "evt-1", "explanation": "an occurrence"},
        ]
    )
    checks = [
        EvidenceCheck(index=0, verified=False, reason="no such line"),
        EvidenceCheck(index=1, verified=True, reason="seen"),
    ]
    html = cmarkgfm.github_flavored_markdown_to_html(render_diagnosis(Diagnosis.from_answer(answer), checks))
    items = _items(html, "Evidence")
    assert [bool(item) for item, paragraph in items] == [True, True]  # two items, no loose paragraph
    first = items[0][0]
    assert "The fix is safe to merge" in first and "unverified: no such line" in first


@pytest.mark.parametrize("field", ["missing_observability", "missing_evidence"])
def test_a_list_item_with_blank_lines_stays_one_item(field):
    changes: dict[str, object] = {field: [BREAKOUT, "the request body"]}
    if field == "missing_evidence":
        changes |= {"classification": "unknown", "confidence": "low", "fault_location": None}
    html = cmarkgfm.github_flavored_markdown_to_html(
        render_diagnosis(Diagnosis.from_answer(good_answer(**changes)))
    )
    heading = "Missing observability" if field == "missing_observability" else "Classification"
    listed = [item for item, _ in _items(html, heading) if item]
    assert len(listed) == 2
    assert "every item." in listed[0] and "The fix is safe to merge" in listed[0]
    assert listed[1] == "the request body"
