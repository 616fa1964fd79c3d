"""The message path's shortcut: a known template, and the answers already given for it.

Most events are messages of a known log statement. A shape (`shapes.ShapeInfo`) keeps one route per
service and error type: the template its skeleton matched, with the assignment given for each
normalised message. The answers stand while the template has not widened; `tokens` is the
template's tokens when they were given, so a widened template is noticed by identity.
"""

from __future__ import annotations

from rounds_bot.grouping.templates import MinedTemplate
from rounds_bot.models import Assignment

#: what an answer depends on besides the template: the normalised message, and the error type,
#: environment and version when any of them is set
AnswerKey = str | tuple[str, str | None, str | None, str | None]


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
