"""The round's code step: for each signature about to be filed, where in the repository it happened.

    locator = CodeLocator.for_settings(settings)   the checkout's files, once per round
    context = locator.locate(signature)            the frames from the crash site out, suspect commit, owners

"Whose code" has one rule, the grouping engine's (`grouping.inapp.InAppRules.roles`, the JVM's owner rule
included), and the crash site is the one the engine chose and stored with the signature
(`SignatureState.crash_site`, else `grouping.crash_site.crash_site` of the representative trace): the frames
list starts there, and the suspect commit and the owners are those of its line (or, when the crash site has
no line, such as a generated proxy, of the first frame of the app's below it that has one). Frames above the
crash site (a library's, the runtime's, or a recovery helper's in a Go panic) are counted, not listed.

An error without a stack trace is placed by its source-location attributes, the OpenTelemetry semantic
conventions' `code.file.path`, `code.function.name` and `code.line.number` (before 1.30: `code.filepath`,
`code.function`, `code.namespace`, `code.lineno`), judged by the same rule.

Links point at the revision that produced the code when the telemetry says (`vcs.ref.head.revision`, or
`service.version` matching a tag), else at the checkout's own revision. Nothing here needs the network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import quote

from pydantic import Field

from rounds_bot.code.history import Commit, head_revision, resolve_revision, suspect_commit
from rounds_bot.code.mapping import CodeMap, PathRule
from rounds_bot.code.owners import owners_of
from rounds_bot.grouping.crash_site import Site, crash_site
from rounds_bot.grouping.frames import frame_key, legacy_frame_key
from rounds_bot.grouping.inapp import FrameRole, InAppRules, TraceRoles
from rounds_bot.grouping.stacktrace import Frame, ParsedTrace, Runtime, parse_stacktrace
from rounds_bot.models import AttributeValue, ErrorEvent, Frozen
from rounds_bot.settings import Settings
from rounds_bot.signature import Signature

#: the app's frames listed at most, from the crash site out
MAX_FRAMES = 10
#: frames a locator remembers linked (cleared whole when full): a round's issues list the same frames of
#: the app again and again, in every signature whose trace passes through them. A linked frame holds about
#: a kilobyte (its URL, its frame) and the locator lives through a round's filing: with 16,384 here and in
#: the map's memo, filing 20,000 new signatures grew a round by 21 MB, with 2,048 by 5 MB (no hits lost:
#: 16,256 frames linked for 2,000 new signatures either way)
LINKED_MEMO_SIZE = 2_048
REVISION_ATTRIBUTES = ("vcs.ref.head.revision", "vcs.repository.ref.revision")
#: source-location attributes, the current name first (semantic conventions 1.30+), then the older one
FILE_ATTRIBUTES = ("code.file.path", "code.filepath")
FUNCTION_ATTRIBUTES = ("code.function.name", "code.function")
LINE_ATTRIBUTES = ("code.line.number", "code.lineno")
NAMESPACE_ATTRIBUTE = "code.namespace"
#: `telemetry.sdk.language` (OpenTelemetry's names) to the runtime whose in-app rules apply
_SDK_RUNTIMES: dict[str, Runtime] = {
    "python": "python",
    "java": "java",
    "nodejs": "node",
    "webjs": "node",
    "go": "go",
    "dotnet": "dotnet",
    "ruby": "ruby",
    "php": "php",
    "rust": "rust",
    "erlang": "elixir",
    "cpp": "native",
    "swift": "native",
    "dart": "dart",
}

FrameKind = Literal["app", "test", "other"]
Source = Literal["stacktrace", "attributes"]
#: the frames listed, how many above the first were left out, and what placed them
Listed = tuple[list["LinkedFrame"], int, Source]


class LinkedFrame(Frozen):
    """One frame as the issue lists it: the app's own (linked when mapped) or a run of other frames."""

    function: str | None
    printed: str = Field(description="where the runtime said it ran: path (or class) and line")
    repo_path: str | None = None
    line: int | None = None
    url: str | None = None
    kind: FrameKind = Field(
        default="app", description="the app's, its tests', or others' (libraries, runtime)"
    )
    count: int = Field(default=1, description="frames this entry stands for (a run of others' frames)")
    crash_site: bool = False


class CodeContext(Frozen):
    """Where a problem happened in the repository, and what git says about that line."""

    frames: list[LinkedFrame] = Field(default_factory=list, description="from the crash site out")
    above: int = Field(default=0, description="frames above the crash site, not listed")
    source: Source = "stacktrace"
    blamed: LinkedFrame | None = Field(
        default=None, description="the frame whose line the suspect commit and owners come from"
    )
    logged_at: LinkedFrame | None = Field(
        default=None, description="where the record's `code.*` attributes say it was written"
    )
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
        self._linked_frames: dict[tuple[Frame, str | None, FrameKind, bool], LinkedFrame] = {}

    @classmethod
    def for_settings(cls, settings: Settings) -> CodeLocator:
        checkout = Path(settings.repo_path).resolve()
        rules = tuple(PathRule.parse(text) for text in settings.code_mappings)
        in_app = InAppRules(tuple(settings.in_app_include), tuple(settings.in_app_exclude))
        return cls(
            checkout,
            CodeMap.of_checkout(checkout, rules),
            in_app,
            repository=settings.github_repository,
            server=settings.github_server_url,
        )

    def locate(self, signature: Signature) -> CodeContext:
        event = signature.representative
        revision = self._revision(signature)
        trace = parse_stacktrace(event.stacktrace) if event.stacktrace else None
        stored = signature.grouping_state.crash_site if signature.grouping_state else None
        listed = self._from_trace(trace, stored, revision) if trace is not None else None
        location = source_location(event.attributes)
        logged_at = self._linked(location, revision, kind="app", crash_site=False) if location else None
        if listed is None:
            listed = self._from_attributes(event, revision)
        if listed is None:
            return CodeContext(logged_at=logged_at, revision=revision)
        frames, above, source = listed
        blamed = next((f for f in frames if f.kind != "other" and f.repo_path and f.line), None)
        suspect = None
        if blamed is not None and blamed.repo_path and blamed.line and revision:
            suspect = suspect_commit(
                self.checkout, blamed.repo_path, blamed.line, revision=revision, before=signature.first_seen
            )
        return CodeContext(
            frames=frames,
            above=above,
            source=source,
            blamed=blamed,
            logged_at=logged_at,
            revision=revision,
            suspect=suspect,
            suspect_url=self._url(f"commit/{suspect.sha}") if suspect else None,
            owners=owners_of(self.checkout, blamed.repo_path) if blamed and blamed.repo_path else [],
        )

    def _from_trace(self, trace: ParsedTrace, stored: str | None, revision: str | None) -> Listed | None:
        """The frames of the exception that holds the crash site, from the crash site out: the app's
        listed (at most MAX_FRAMES), each run of others' frames as one entry."""
        # each representative's trace is asked about once: remembering its roles would only hash its frames
        # and hold them through the round's filing
        roles = self.in_app.roles(trace, remember=False)
        # the stored site first; the representative's own when the stored one is not in its trace (a
        # signature whose first occurrence's trace differs, or a site stored by an older rule): worked out
        # only then, as the stored one is found in almost every trace
        stored_site = Site.from_key(stored).crash_site  # without the root cause's part
        found = _from_site(trace, roles, stored_site) if stored_site else None
        if found is None:
            own = crash_site(trace, roles)
            found = _from_site(trace, roles, own) if own and own != stored_site else None
        if found is None:
            return None
        pairs, start = found
        return self._listed(pairs[start:], revision), start, "stacktrace"

    def _listed(self, pairs: list[tuple[Frame, FrameRole]], revision: str | None) -> list[LinkedFrame]:
        # an entry is the app's frame linked, or a run of others' frames as (its first frame, its length)
        entries: list[LinkedFrame | tuple[Frame, int]] = []
        shown = 0
        for index, (frame, role) in enumerate(pairs):
            if shown >= MAX_FRAMES:
                break
            kind: FrameKind = "app" if role.in_app else "test" if role.role == "test" else "other"
            if kind == "other":
                last = entries[-1] if entries else None
                if isinstance(last, tuple):
                    entries[-1] = (last[0], last[1] + 1)
                else:
                    entries.append((frame, 1))
                continue
            shown += 1
            entries.append(self._linked(frame, revision, kind=kind, crash_site=index == 0))
        while entries and isinstance(entries[-1], tuple):
            entries.pop()  # the runtime or framework that started it all says nothing of this problem
        return [_others(*entry) if isinstance(entry, tuple) else entry for entry in entries]

    def _from_attributes(self, event: ErrorEvent, revision: str | None) -> Listed | None:
        """The place the event's source-location attributes name, when it is the app's code."""
        frame = source_location(event.attributes)
        if frame is None:
            return None
        runtime = _runtime_of(event.attributes)  # unknown: the app's, as its own attributes say
        if runtime is not None and not self.in_app.frame_role(frame, runtime).in_app:
            return None
        return [self._linked(frame, revision, kind="app", crash_site=True)], 0, "attributes"

    def _linked(
        self, frame: Frame, revision: str | None, *, kind: FrameKind, crash_site: bool
    ) -> LinkedFrame:
        """The frame as the issue lists it. Remembered: a linked frame is a function of the frame, the
        revision and the two flags alone (the locator's checkout, mapping and server never change), so a
        remembered one cannot go stale."""
        key = (frame, revision, kind, crash_site)
        found = self._linked_frames.get(key)
        if found is None:
            if len(self._linked_frames) >= LINKED_MEMO_SIZE:
                self._linked_frames.clear()
            found = self._linked_frames[key] = self._link(frame, revision, kind, crash_site)
        return found

    def _link(self, frame: Frame, revision: str | None, kind: FrameKind, crash_site: bool) -> LinkedFrame:
        repo_path = self.code_map.repo_path(frame)
        url = None
        if repo_path and revision:
            anchor = f"#L{frame.lineno}" if frame.lineno else ""
            url = self._url(f"blob/{revision}/{quote(repo_path)}{anchor}")
        # validated, though built from typed values (a parsed frame's, the map's path, the URL made above):
        # pydantic's validator (compiled) makes one faster than `model_construct` (Python) does, and a
        # round lists a hundred thousand frames
        return LinkedFrame(
            function=frame.function,
            printed=_printed(frame),
            repo_path=repo_path,
            line=frame.lineno,
            url=url,
            kind=kind,
            crash_site=crash_site,
        )

    def _revision(self, signature: Signature) -> str | None:
        attributes = signature.representative.attributes
        vcs = next((str(attributes[k]) for k in REVISION_ATTRIBUTES if attributes.get(k)), None)
        version = signature.representative.service_version
        if (vcs, version) not in self._revisions:  # git once per release a round files, not per signature
            found = resolve_revision(self.checkout, vcs_revision=vcs, service_version=version)
            self._revisions[(vcs, version)] = found or self._head
        return self._revisions[(vcs, version)]

    def _url(self, tail: str) -> str | None:
        return f"{self.server}/{self.repository}/{tail}" if self.repository else None


def source_location(attributes: dict[str, AttributeValue]) -> Frame | None:
    """The frame an event's `code.*` attributes name (either generation of their names), or None."""
    path = _first_text(attributes, FILE_ATTRIBUTES)
    if path is None:
        return None
    function = _first_text(attributes, FUNCTION_ATTRIBUTES)
    namespace = _first_text(attributes, (NAMESPACE_ATTRIBUTE,))
    if function and namespace and not function.startswith(namespace):
        function = f"{namespace}.{function}"
    line = next((attributes[k] for k in LINE_ATTRIBUTES if k in attributes), None)
    lineno = line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None
    if isinstance(line, str) and line.isdigit():
        lineno = int(line)
    return Frame(function=function, filename=path, lineno=lineno)


def _first_text(attributes: dict[str, AttributeValue], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _runtime_of(attributes: dict[str, AttributeValue]) -> Runtime | None:
    language = attributes.get("telemetry.sdk.language")
    if isinstance(language, str) and language in _SDK_RUNTIMES:
        return _SDK_RUNTIMES[language]
    return None


def _from_site(
    trace: ParsedTrace, roles: TraceRoles, site: str
) -> tuple[list[tuple[Frame, FrameRole]], int] | None:
    """The frames (with their roles) of the first exception that holds `site` in the app's code, and the
    site's position among them; None when no exception does."""
    for exception, exception_roles in zip(trace.exceptions, roles.frames, strict=True):
        pairs = list(zip(exception.frames, exception_roles, strict=True))
        start = next((i for i, (f, r) in enumerate(pairs) if r.in_app and site in _keys(f)), None)
        if start is not None:
            return pairs, start
    return None


def _keys(frame: Frame) -> tuple[str, str]:
    """The frame as a stored crash site names it: today's key, and the one earlier fingerprint
    versions stored (the file's base name for its module), so an older signature still points here."""
    today, earlier = frame_key(frame), legacy_frame_key(frame)
    return f"{today.module}:{today.function}", f"{earlier.module}:{earlier.function}"


def _others(first: Frame, count: int) -> LinkedFrame:
    """A run of `count` frames of libraries or the runtime, named by its first."""
    return LinkedFrame(
        function=first.function, printed=_printed(first), kind="other", count=count
    )  # validated, as `_link`'s


def _printed(frame: Frame) -> str:
    where = frame.filename or frame.module or "?"
    return f"{where}:{frame.lineno}" if frame.lineno else where
