"""The round's code step: for each signature about to be filed, where in the repository it happened.

    locator = CodeLocator.for_settings(settings, in_app)   the checkout's files, once per round
    context = locator.locate(signature)                     linked in-app frames, suspect commit, owners

Links point at the revision that produced the code when the telemetry says (`vcs.ref.head.revision`, or
`service.version` matching a tag), else at the checkout's own revision. Nothing here needs the network.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from pydantic import Field

from rounds_bot.code.history import Commit, head_revision, resolve_revision, suspect_commit
from rounds_bot.code.mapping import CodeMap, Rule
from rounds_bot.code.owners import owners_of
from rounds_bot.config import Settings
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.grouping.stacktrace.model import ParsedTrace
from rounds_bot.models import Frozen
from rounds_bot.signature import Signature

MAX_FRAMES = 10
REVISION_ATTRIBUTES = ("vcs.ref.head.revision", "vcs.repository.ref.revision")


class LinkedFrame(Frozen):
    """One in-app frame as the issue lists it."""

    function: str | None
    printed: str = Field(description="where the runtime said it ran: path (or class) and line")
    repo_path: str | None = None
    line: int | None = None
    url: str | None = None


class CodeContext(Frozen):
    """Where a problem happened in the repository, and what git says about that line."""

    frames: list[LinkedFrame] = Field(default_factory=list)
    revision: str | None = None
    suspect: Commit | None = None
    suspect_url: str | None = None
    owners: list[str] = Field(default_factory=list)


class CodeLocator:
    def __init__(
        self, checkout: Path, code_map: CodeMap, in_app: InAppRules, *, repository: str | None, server: str
    ) -> None:
        self.checkout = checkout
        self.code_map = code_map
        self.in_app = in_app
        self.repository = repository
        self.server = server.rstrip("/")
        self._head = head_revision(checkout)
        self._revisions: dict[tuple[str | None, str | None], str | None] = {}

    @classmethod
    def for_settings(cls, settings: Settings) -> CodeLocator:
        checkout = Path(settings.repo_path).resolve()
        rules = tuple(Rule.parse(text) for text in settings.code_mappings)
        in_app = InAppRules(tuple(settings.in_app_include), tuple(settings.in_app_exclude))
        return cls(
            checkout,
            CodeMap.of_checkout(checkout, rules),
            in_app,
            repository=settings.github_repository,
            server=settings.github_server_url,
        )

    def locate(self, signature: Signature) -> CodeContext:
        trace = parse_stacktrace(signature.representative.stacktrace)
        if trace is None:
            return CodeContext()
        revision = self._revision(signature)
        frames = self._frames(trace, revision)
        crash = next((f for f in frames if f.repo_path and f.line), None)
        suspect = None
        if crash is not None and crash.repo_path and crash.line and revision:
            suspect = suspect_commit(
                self.checkout, crash.repo_path, crash.line, revision=revision, before=signature.first_seen
            )
        return CodeContext(
            frames=frames,
            revision=revision,
            suspect=suspect,
            suspect_url=self._url(f"commit/{suspect.sha}") if suspect else None,
            owners=owners_of(self.checkout, crash.repo_path) if crash and crash.repo_path else [],
        )

    def _revision(self, signature: Signature) -> str | None:
        attributes = signature.representative.attributes
        vcs = next((str(attributes[k]) for k in REVISION_ATTRIBUTES if attributes.get(k)), None)
        version = signature.representative.service_version
        if (vcs, version) not in self._revisions:  # git once per release a round files, not per signature
            found = resolve_revision(self.checkout, vcs_revision=vcs, service_version=version)
            self._revisions[(vcs, version)] = found or self._head
        return self._revisions[(vcs, version)]

    def _frames(self, trace: ParsedTrace, revision: str | None) -> list[LinkedFrame]:
        linked: list[LinkedFrame] = []
        for exception in trace.exceptions:
            for frame in exception.frames:
                if len(linked) >= MAX_FRAMES:
                    return linked
                if not self.in_app.decide(frame, trace.runtime)[0]:
                    continue
                repo_path = self.code_map.repo_path(frame)
                printed = (
                    f"{frame.filename or frame.module or '?'}:{frame.lineno}"
                    if frame.lineno
                    else (frame.filename or frame.module or "?")
                )
                url = None
                if repo_path and revision:
                    anchor = f"#L{frame.lineno}" if frame.lineno else ""
                    url = self._url(f"blob/{revision}/{quote(repo_path)}{anchor}")
                linked.append(
                    LinkedFrame(
                        function=frame.function,
                        printed=printed,
                        repo_path=repo_path,
                        line=frame.lineno,
                        url=url,
                    )
                )
        return linked

    def _url(self, tail: str) -> str | None:
        return f"{self.server}/{self.repository}/{tail}" if self.repository else None
