"""What one stack frame contributes to a fingerprint, and which frames are left out.

A frame contributes its module, its function and,
where the runtime prints it, its source line (whitespace collapsed, left out past 120
characters). Line numbers never contribute: adding a line above a bug must not re-file it.

A frame whose runtime prints a file path rather than a module (Python's app code, Node.js, Ruby,
PHP) is identified by its module path: the path relative to the project root (`module_path`), so
`api/v1/orders.py` and `api/v2/orders.py` are two modules. `rounds-fp:2` used the base name of
the file (`legacy_frame_key`), which made them one.
A JavaScript bundle's file is named without the content hash its build put in it, and a minified
function of a bundle contributes `<minified>` instead of its name (see `bundles`): a deploy renames
both. Traces read before did not (`frame_key_before_bundles`; `fingerprint` looks their hashes up).
A `blob:` URL names an object of one page load (its UUID differs every time): its module is `blob`.
Recursion is folded: a frame identical to the one before it is ignored, and so is every repeat
of a cycle of up to MAX_CYCLE frames, so a stack overflow at depth 1,000 and one at depth 5,000
group together. A JVM `StackOverflowError` is read from its app's frames alone, each once, in a fixed
order (`stack_overflow`): it surfaces in whichever call needed the next frame, and its print holds its
cycle from any frame on, cut anywhere, so that prints holding a pass of its recursion read alike where they
agree above and below it (`stack_overflow` names the exceptions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from rounds_bot.grouping.bundles import MINIFIED, is_bundle, is_minified_name, without_content_hash
from rounds_bot.grouping.components import Component, leaf, node
from rounds_bot.grouping.inapp import FrameRole, InAppRules, Role
from rounds_bot.grouping.memo import MB, OVERHEAD, BoundedMemo, frames_size, shared_memo
from rounds_bot.grouping.stack_overflow import overflow_frames, reads_an_overflow
from rounds_bot.grouping.stacktrace import Frame, ParsedException, ParsedTrace

MAX_CONTEXT_LINE = 120
MAX_CYCLE = 8
#: frames beyond this many (crash site first) do not contribute
MAX_CONTRIBUTING_FRAMES = 64
_SPACES = re.compile(r"\s+")
#: directories a project or an installed package is rooted in: build images (`/app`, `/srv`,
#: `/code`, `/usr/src/app`), source layouts (`src`) and installed-package folders. A frame's
#: module path starts after the first one of them.
_ROOT_DIRECTORIES = frozenset(
    ("app", "srv", "code", "src", "workspace", "site-packages", "dist-packages", "node_modules", "vendor")
)
#: a directory named by a release, build or date (`20261101120000`, `1.4.2`, a commit hash, the short one
#: `git rev-parse --short` prints, from 7 hexadecimal digits, when it holds a digit and a letter so that no
#: word is one, also after a name, `shop-e4f1a2b`), or one a run made for itself, named with a UUID or a
#: 10-digit time (Spark's `spark-<uuid>/userFiles-<uuid>`, YARN's `application_1700000000000_0001`): a
#: deployment's or a run's, never the code's
_DEPLOYMENT_DIRECTORY = re.compile(
    r"^(?:\d[\w.+-]*|[0-9a-f]{12,40}|(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,11})$"
    r"|[-_](?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}$"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<![0-9])[0-9]{10,}"
)
_URL_PREFIX = re.compile(r"^[a-z][a-z0-9+.-]*://[^/]*", re.IGNORECASE)
_MEMO_LIMIT = 100_000
#: what a frame's component holds beyond its text: its child components and their tuples, and the frame
#: (measured: with the key's fixed part, up to about 1.7 KB)
_COMPONENT_BYTES = 1024
#: a frame's component is asked for again mostly while its trace is read (the app's fingerprint and the
#: system's share the frames both use) and for the next traces of the same code, never for a repeat placed
#: by its hashes (`cut_digests`): a first round of 200k records and 20k bugs asks 296k times for 148k
#: components, and 3 MB (some 1,400 entries) misses 0.3% more of them than 12 MB, each a few microseconds
#: to build again
_COMPONENTS_BUDGET = 3 * MB
_MODULE_PATHS: BoundedMemo[str, str | None] = shared_memo(_MEMO_LIMIT, 2 * MB)
_COMPONENTS: BoundedMemo[tuple[Frame, str | None, bool], Component] = shared_memo(
    _MEMO_LIMIT,
    _COMPONENTS_BUDGET,
    lambda key, _: OVERHEAD * 4 + len(key[1] or "") + frames_size(key[:1], _COMPONENT_BYTES),
)
_NOT: dict[Role, str] = {"app": "not in-app", "test": "not test code", "library": "not a library"}
#: whose code a frame is when no engine's rules are given (`collapse_recursion`): the built-in rules alone
_BUILT_IN_RULES = InAppRules()


@dataclass(frozen=True)
class FrameKey:
    module: str
    function: str
    context: str | None


def frame_key(frame: Frame) -> FrameKey:
    """How a frame is identified: its module (else its module path), function and source line."""
    key = _key(frame, frame.module or module_path(frame.filename) or "?")
    if (
        frame.module is None
        and frame.function
        and frame.filename
        and _minified(frame.filename, frame.function)
    ):
        return FrameKey(key.module, MINIFIED, key.context)
    return key


def frame_key_before_bundles(frame: Frame) -> FrameKey:
    """How a frame was identified before bundles' content hashes, minified names and `blob:` URLs
    were left out: its file's module path as printed, and its function."""
    return _key(frame, frame.module or _module_path(frame.filename or "", bundles=False) or "?")


def reads_a_bundle(frame: Frame) -> bool:
    """Whether `frame_key` and `frame_key_before_bundles` identify the frame otherwise."""
    name = frame.filename
    if frame.module is not None or not name or not (name.endswith("js") or name.startswith("blob:")):
        return False  # the cheap test: only a script's file or a blob can differ
    return frame_key(frame) != frame_key_before_bundles(frame)


def _minified(path: str, function: str) -> bool:
    if not path.endswith("js"):
        return False  # (a bundle's name ends in `.js`, `.mjs` or `.cjs`: most frames stop here)
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return is_bundle(name) and is_minified_name(function)


def legacy_frame_key(frame: Frame) -> FrameKey:
    """`rounds-fp:2`'s identity of a frame: the base name of the file stood for its module."""
    return _key(frame, frame.module or _basename(frame.filename) or "?")


def _key(frame: Frame, module: str) -> FrameKey:
    function = (frame.function or "<anonymous>").strip()
    context = None
    if frame.context_line:
        collapsed = _SPACES.sub(" ", frame.context_line).strip()
        if collapsed and len(collapsed) <= MAX_CONTEXT_LINE:
            context = collapsed
    return FrameKey(module, function, context)


def module_path(path: str | None) -> str | None:
    """A printed file path relative to the project root, lower-cased: the part after the first
    root directories (`/app/shop/api/v1/orders.py` -> `shop/api/v1/orders.py`, `/usr/src/app/x.py`
    -> `x.py`), else the last three
    parts; directories named by a release or build are left out, so a new deployment's paths
    name the same modules."""
    if not path:
        return None
    found = _MODULE_PATHS.get(path)
    if found is None and path not in _MODULE_PATHS:
        found = _MODULE_PATHS.put(path, _module_path(path))
    return found


def _module_path(path: str, *, bundles: bool = True) -> str | None:
    """`module_path`; `bundles=False` reads it as it was before bundles were known."""
    text = path.replace("\\", "/")
    if bundles:
        if text.startswith("blob:"):
            return "blob"
        head, _, name = text.rpartition("/")
        text = f"{head}/{without_content_hash(name)}" if head else without_content_hash(name)
    text = _URL_PREFIX.sub("", text).lower()
    parts = [part for part in text.split("/") if part and part != "."]
    if not parts:
        return None
    for index, part in enumerate(parts[:-1]):
        if part in _ROOT_DIRECTORIES:
            start = index + 1
            while start < len(parts) - 1 and parts[start] in _ROOT_DIRECTORIES:
                start += 1  # `/usr/src/app/...`, `/app/src/...`
            parts = parts[start:]
            break
    else:
        parts = parts[-3:]
    kept = [part for part in parts[:-1] if not _DEPLOYMENT_DIRECTORY.search(part)]
    return "/".join([*kept, parts[-1]])


def _basename(path: str | None) -> str | None:
    if not path:
        return None
    return re.split(r"[\\/]", path)[-1].lower() or None


def recursion_hints(frames: tuple[Frame, ...]) -> list[str | None]:
    """For each frame, why recursion folding leaves it out (None: it stays)."""
    identities = [(f.module, f.filename, f.function, f.lineno) for f in frames]
    hints: list[str | None] = [None] * len(frames)
    if not _repeats_within_a_cycle(identities):
        return hints  # nothing to fold (the common case, decided in one pass)
    for index in range(1, len(frames)):
        if identities[index] == identities[index - 1]:
            hints[index] = "ignored due to recursion"
    index = 0
    while index < len(frames):
        folded = False
        for period in range(2, MAX_CYCLE + 1):
            end = index + period
            if end + period > len(frames):
                break
            if (
                identities[index] != identities[end]
                or identities[index:end] != identities[end : end + period]
            ):
                continue
            repeat = end
            while (
                repeat + period <= len(frames)
                and identities[index:end] == identities[repeat : repeat + period]
            ):
                for offset in range(repeat, repeat + period):
                    hints[offset] = hints[offset] or "repeats a recursion cycle"
                repeat += period
            index = repeat
            folded = True
            break
        if not folded:
            index += 1
    return hints


def _repeats_within_a_cycle(identities: list[tuple[str | None, str | None, str | None, int | None]]) -> bool:
    """Whether some frame is printed again at most MAX_CYCLE frames later: recursion needs it."""
    last: dict[tuple[str | None, str | None, str | None, int | None], int] = {}
    for index, identity in enumerate(identities):
        before = last.get(identity)
        if before is not None and index - before <= MAX_CYCLE:
            return True
        last[identity] = index
    return False


def frame_components(
    frames: tuple[Frame, ...],
    roles: tuple[FrameRole, ...],
    only: Role | None,
    recursion: list[str | None] | None = None,
    *,
    legacy: bool = False,
    before_bundles: bool = False,
) -> list[Component]:
    """One component per frame, crash site first, with why each is or is not used: with `only`
    set, frames of another role do not contribute. `recursion` is `recursion_hints(frames)`,
    when the caller has it already."""
    if recursion is None:
        recursion = recursion_hints(frames)
    components: list[Component] = []
    contributing = 0
    for frame, role, recursion_hint in zip(frames, roles, recursion, strict=True):
        hint = None
        if recursion_hint:
            hint = recursion_hint
        elif only is not None and role.role != only:
            hint = f"{_NOT[only]}: {role.reason}"
        elif contributing >= MAX_CONTRIBUTING_FRAMES:
            hint = f"beyond the first {MAX_CONTRIBUTING_FRAMES} frames"
        components.append(frame_component(frame, hint, legacy=legacy, before_bundles=before_bundles))
        if hint is None:
            contributing += 1
    return components


def frame_component(
    frame: Frame, hint: str | None, *, legacy: bool = False, before_bundles: bool = False
) -> Component:
    """A frame's component (memoised: components are immutable, and frames recur across traces);
    `legacy` gives `rounds-fp:2`'s, which identified a file by its base name, `before_bundles` the
    one made before bundles were known (`frame_key_before_bundles`)."""
    if before_bundles and not legacy:
        return _build_frame_component(frame, hint, frame_key_before_bundles(frame))  # a rare reading
    key = (frame, hint, legacy)
    found = _COMPONENTS.get(key)
    if found is None:
        found = _COMPONENTS.put(
            key, _build_frame_component(frame, hint, legacy_frame_key(frame) if legacy else frame_key(frame))
        )
    return found


def needs_legacy_keys(frame: Frame) -> bool:
    """Whether `rounds-fp:2` identified this frame otherwise than `frame_key` does (only a path
    with directories can differ from its base name)."""
    if frame.module is not None or not frame.filename:
        return False
    if "/" not in frame.filename and "\\" not in frame.filename:
        return False
    return module_path(frame.filename) != _basename(frame.filename)


def _build_frame_component(frame: Frame, hint: str | None, key: FrameKey) -> Component:
    children = [leaf("module", key.module), leaf("function", key.function)]
    if key.context is not None:
        children.append(leaf("context-line", key.context))
    elif frame.context_line:
        children.append(leaf("context-line", frame.context_line, "longer than 120 characters"))
    value = f"{key.module} {key.function}"
    if key.function == MINIFIED and frame.function:
        value += f" {frame.function}"  # the name this build gave it, shown for reading
    if frame.lineno is not None:
        value += f" (line {frame.lineno})"  # shown, never hashed: only children are
    return node("frame", *children, value=value, hint=hint)


def collapse_leading_cycle(frames: tuple[Frame, ...], *, rotated: bool = True) -> tuple[Frame, ...]:
    """The frames without the repeats of a recursion cycle the error was raised in.

    When the innermost frames repeat a cycle (`walk`, `visit`, `walk`, `visit` ... or one function
    calling itself), where in the cycle the error surfaced depends on the depth it happened at.
    Only the outermost pass through the cycle is kept, so the crash site and the frames are the
    same at every depth. A cycle is up to MAX_CYCLE frames, known by module, file and function
    (the line inside a function differs where the error was raised).

    When the cycle runs to the last frame printed, the runtime cut the stack inside the recursion
    (HotSpot keeps a thread's innermost 1,024 frames, Go before 1.21 its innermost 100), and which
    frame of the cycle is outermost depends on where the cut fell: the pass is then rotated to start
    at the frame whose identity sorts first (`_canonical_pass`). Releases before kept it as cut
    (`rotated=False`)."""
    identities = [(f.module, f.filename, f.function) for f in frames]
    for period in range(1, MAX_CYCLE + 1):
        repeated = 0
        while repeated + period < len(frames) and identities[repeated] == identities[repeated + period]:
            repeated += 1
        if repeated >= max(period, 2):  # a cycle seen twice (an overload calling its twin is not one)
            if rotated and period > 1 and repeated + period == len(frames):
                return _canonical_pass(frames[repeated:])
            return frames[repeated:]
    return frames


def _canonical_pass(cycle: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """The rotation of one pass through a cycle whose frames' keys (`frame_key`: what the hash reads, no
    path of a deployment) sort first: the same whichever frame of the cycle a cut left outermost."""
    keys = [(key.module, key.function, key.context or "") for key in map(frame_key, cycle)]
    start = min(range(len(cycle)), key=lambda index: keys[index:] + keys[:index])
    return cycle[start:] + cycle[:start]


def collapse_recursion(
    trace: ParsedTrace, *, rotated: bool = True, rules: InAppRules | None = None, overflow: bool = True
) -> ParsedTrace:
    """`trace` with each exception's leading recursion cycle collapsed, and a JVM stack overflow read from
    its app's frames by `rules` (the built-in ones when None; see `stack_overflow`); the same object when
    neither changes a frame. `overflow=False` reads a stack overflow as any other error, as the release
    before did; `rotated=False` also collapses a cycle as releases before that did (a cut cycle's pass as
    the cut left it, see `collapse_leading_cycle`)."""
    overflows = overflow and rotated and reads_an_overflow(trace)
    # whose code each frame is, read on the whole print as grouping reads any trace (the owner rule where
    # the print shows its entry), before anything is left out of it
    roles = (rules if rules is not None else _BUILT_IN_RULES).roles(trace).frames if overflows else None
    exceptions = tuple(
        replace(exception, frames=_collapsed(exception, roles[index] if roles else None, rotated))
        for index, exception in enumerate(trace.exceptions)
    )
    if all(new.frames is old.frames for new, old in zip(exceptions, trace.exceptions, strict=True)):
        return trace
    return replace(trace, exceptions=exceptions)


def _collapsed(
    exception: ParsedException, roles: tuple[FrameRole, ...] | None, rotated: bool
) -> tuple[Frame, ...]:
    """An exception's frames as `collapse_recursion` reads them (`roles`: its frames' roles in the whole
    trace, by which a stack overflow is read)."""
    if roles is not None:
        read = overflow_frames(exception, roles)
        if read is not exception.frames:
            return read  # each frame once: no cycle left to collapse
    return collapse_leading_cycle(exception.frames, rotated=rotated)


def recursion_before(trace: ParsedTrace, collapsed: ParsedTrace) -> ParsedTrace:
    """How the release before the one that read `trace` as `collapsed` collapsed it (`collapsed` itself
    when no release before read it otherwise). Newest first: a JVM stack overflow read from its app's
    frames (`stack_overflow`); read by all its frames, a cut cycle's pass rotated (`_canonical_pass`); as
    the cut left it (`rotated=False`). A reading looks up the signatures the one before made (`candidates`),
    and that one the one before it, so a signature any of them made keeps receiving its events."""
    oldest = collapse_recursion(trace, rotated=False)
    if collapsed == oldest:
        return collapsed
    plain = collapse_recursion(trace, overflow=False)
    return oldest if collapsed == plain else plain
