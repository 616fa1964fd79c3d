"""A route: a known template of the message path, with the answers already given for it.

Its own module because the shapes (`shapes.py`) hold routes and the shortcuts (`routes.py`) hold
shapes: both import this, neither imports the other for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rounds_bot.grouping.templates import MinedTemplate
    from rounds_bot.models import Assignment

#: what an answer depends on besides the template: the normalised message, and the error type,
#: environment and version when any of them is set
AnswerKey = str | tuple[str, str | None, str | None, str | None]
#: answers kept per route before they are cleared
ANSWERS_PER_ROUTE = 256


class Route:
    """A known template of the message path, with the answers already given for it."""

    __slots__ = ("answers", "signature_id", "template", "tokens")

    def __init__(self, template: MinedTemplate, signature_id: str) -> None:
        self.template = template  # the miner's live template: its tokens change when it widens
        self.signature_id = signature_id
        self.tokens: tuple[str, ...] | None = template.tokens
        #: (normalised message, error type, environment, version), or the message alone when
        #: the others are None -> the assignment given
        self.answers: dict[AnswerKey, Assignment] = {}
