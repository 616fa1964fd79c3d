"""The labels rounds puts on its issues, each with a colour and a description.

Families, by prefix:

    rounds                     the bot's own label: how rounds lists its issues (never by search)
    regression                 reopened because the problem came back
    service:<name>             one per service
    classification:<kind>      server-bug, client-misuse, documentation-gap (from the diagnosis)
    severity:<level>           critical, high, medium, low

A label is created when an issue first needs it and is missing from the repository; a label a human already
made (with their own colour) is used as it is.
"""

from __future__ import annotations

from typing import Any, Protocol

from rounds_bot.models import Frozen
from rounds_bot.render.markdown import label_text

BOT_LABEL = "rounds"
REGRESSION_LABEL = "regression"
# GitHub refuses label names over 50 characters (422).
MAX_LABEL_CHARS = 50


class LabelSpec(Frozen):
    name: str
    color: str  # six hex digits, no '#'
    description: str  # GitHub allows 100 characters


_FIXED = {
    BOT_LABEL: LabelSpec(name=BOT_LABEL, color="5319e7", description="Filed and kept up to date by rounds"),
    REGRESSION_LABEL: LabelSpec(
        name=REGRESSION_LABEL, color="b60205", description="Came back after the issue was closed as completed"
    ),
    "classification:server-bug": LabelSpec(
        name="classification:server-bug", color="d93f0b", description="rounds: a bug in the service's code"
    ),
    "classification:client-misuse": LabelSpec(
        name="classification:client-misuse", color="fbca04", description="rounds: a caller misused the API"
    ),
    "classification:documentation-gap": LabelSpec(
        name="classification:documentation-gap",
        color="0075ca",
        description="rounds: the behaviour is right but undocumented or misleading",
    ),
}
_FIXED.update(
    {
        f"severity:{level}": LabelSpec(
            name=f"severity:{level}", color=color, description=f"rounds: severity {level}"
        )
        for level, color in (
            ("critical", "b60205"),
            ("high", "d93f0b"),
            ("medium", "fbca04"),
            ("low", "c2e0c6"),
        )
    }
)
_FAMILIES = {
    "service:": ("1d76db", "rounds: errors of service {rest}"),
    "classification:": ("c5def5", "rounds: classified as {rest}"),
    "severity:": ("ededed", "rounds: severity {rest}"),
}
_OTHER = ("ededed", "rounds")


def label_name(prefix: str, value: str) -> str:
    """A label name that GitHub accepts: the value kept to plain characters (no commas, which split label
    filters, no bidi or markup: `render.markdown.label_text`), at most 50 characters."""
    name = f"{prefix}{label_text(value)}"
    return name if len(name) <= MAX_LABEL_CHARS else name[: MAX_LABEL_CHARS - 1] + "…"


# Families that hold one value at a time: a new severity or classification replaces the old one.
EXCLUSIVE_FAMILIES = ("severity:", "classification:")


def without_replaced(current: set[str], wanted: set[str]) -> set[str]:
    """`current` minus the labels that `wanted` replaces (another value of an exclusive family)."""
    replaced = {family for family in EXCLUSIVE_FAMILIES if any(label.startswith(family) for label in wanted)}
    return {label for label in current if label in wanted or not any(label.startswith(f) for f in replaced)}


def severity_label(level: str) -> str:
    return label_name("severity:", level)


def service_label(service: str) -> str:
    return label_name("service:", service or "unknown")


def label_spec(name: str) -> LabelSpec:
    """The colour and description rounds gives a label it creates."""
    if name in _FIXED:
        return _FIXED[name]
    for prefix, (color, description) in _FAMILIES.items():
        if name.startswith(prefix):
            text = description.format(rest=name[len(prefix) :])[:100]
            return LabelSpec(name=name, color=color, description=text)
    color, description = _OTHER
    return LabelSpec(name=name, color=color, description=description)


class LabelKeeper:
    """Makes sure the labels an issue needs exist, creating the missing ones with colour and description.

    Labels known to exist are remembered in the journal, so a label costs a request only the first time:
    one conditional listing of the repository's labels (a 304 costs no quota), then one create per label
    that is really missing.
    """

    def __init__(self, api: _LabelApi, journal: _LabelJournal) -> None:
        self.api = api
        self.journal = journal
        self._listed = False

    def ensure(self, names: list[str]) -> list[str]:
        """The names, in order, once each exists on GitHub."""
        missing = set(names) - self.journal.known_labels()
        if missing and not self._listed:
            self._listed = True
            etag = self.journal.meta("labels_etag")
            listing = self.api.list_labels(etag)
            if not listing.not_modified:
                self.journal.add_known_labels({item["name"] for item in listing.items})
                if listing.etag:
                    self.journal.set_meta("labels_etag", listing.etag)
            missing -= self.journal.known_labels()
        for name in sorted(missing):
            spec = label_spec(name)
            self.api.create_label(spec.name, spec.color, spec.description)
            self.journal.add_known_labels({name})
        return list(dict.fromkeys(names))


class _Listing(Protocol):
    items: list[dict[str, Any]]
    etag: str | None
    not_modified: bool


class _LabelApi(Protocol):
    def list_labels(self, etag: str | None) -> _Listing: ...

    def create_label(self, name: str, color: str, description: str) -> bool: ...


class _LabelJournal(Protocol):
    def known_labels(self) -> set[str]: ...

    def add_known_labels(self, names: set[str]) -> None: ...

    def meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...
