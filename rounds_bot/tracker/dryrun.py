"""The dry-run tracker: one Markdown file per signature in an output folder.

It behaves like the GitHub tracker (find by the hidden marker, create once, update in place) so a dry run
shows exactly what a real run would file, and running twice files nothing new.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import Literal
from urllib.parse import quote_from_bytes

from rounds_bot.errors import TrackerError
from rounds_bot.marker import MarkerHead, MarkerState, read_marker, read_marker_head
from rounds_bot.render.markdown import code, escape
from rounds_bot.tracker.base import IssueDraft, IssueRef

#: how `tempfile.mkstemp` opens the file it makes: created here or not at all, never through a link
_NEW_PRIVATE_FILE = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


class DryRunTracker:
    name = "dry-run"

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        #: the folder as text: a round's thousands of draft paths are joined as strings, not built as Paths
        self._folder_text = os.fspath(self.folder)
        #: the folder's absolute path and its URI, once a draft is written into it (the drafts' URLs)
        self._resolved: Path | None = None
        self._resolved_uri = ""

    def find(self, signature_id: str, known_ref: str | None = None) -> IssueRef | None:
        # the draft's path as text: a first round looks up thousands of signatures that have no draft yet,
        # and a `Path` made for each interns its name (pathlib's parsing), growing the interpreter's table of
        # interned strings, which never shrinks, by one entry a signature
        path = os.path.join(self._folder_text, _name(signature_id))
        if not _is_file(path):
            return None
        draft = Path(path)
        resolved = draft.resolve()
        return self._ref(
            signature_id, read_marker(draft.read_text(encoding="utf-8")), resolved.name, resolved.as_uri()
        )

    def create(self, draft: IssueDraft) -> IssueRef:
        return self._written(draft, self._write(draft))

    def update(
        self, issue: IssueRef, draft: IssueDraft, *, comment: str | None = None, reopen: bool = False
    ) -> IssueRef:
        return self._written(draft, self._write(draft, comment=comment))

    def _written(self, draft: IssueDraft, name: str) -> IssueRef:
        """The issue of a draft just written to the folder's file `name`, read from the draft (the file was
        renamed into place whole), without reading it back."""
        if self._resolved is None:
            self._resolved = self.folder.resolve()
            self._resolved_uri = self._resolved.as_uri().removesuffix("/")
        # the file's URI as `Path.as_uri` gives it, from the folder's: a round writes thousands of drafts
        url = f"{self._resolved_uri}/{quote_from_bytes(os.fsencode(name))}"
        # the body's marker was written by `write_marker` moments ago: its name and state are all it needs
        marker = read_marker_head(draft.body)
        return self._ref(draft.signature_id, marker, name, url) or self._missing(draft)

    @staticmethod
    def _ref(
        signature_id: str, marker: MarkerHead | MarkerState | None, name: str, url: str
    ) -> IssueRef | None:
        """The issue a draft is, found by its marker (None when it is not `signature_id`'s). A round keeps one
        per issue filed, to its end (`IssueRef`, a slotted record)."""
        if marker is None or marker.signature_id != signature_id:
            return None
        state: Literal["open", "closed"] = "closed" if marker.closed else "open"
        return IssueRef(signature_id=signature_id, ref=name, url=url, state=state)

    def finish_round(self) -> list[str]:
        return []

    def _write(self, draft: IssueDraft, comment: str | None = None) -> str:
        """Write the draft's file; returns its name in the folder."""
        # the draft is Markdown: the title (plain text on GitHub) is escaped like any untrusted text
        labels = ", ".join(code(label) for label in draft.labels)
        head = f"# {escape(draft.title)}\n\nLabels: {labels}\n\n"
        tail = f"\n\n---\n**Latest comment**\n\n{comment}\n" if comment else ""
        # written in its parts, as one text would be: the body (the most of it) is not copied into another
        parts = [part.encode("utf-8") for part in (head, draft.body, tail) if part]
        name = _name(draft.signature_id)
        try:
            if self._resolved is None:  # the folder exists once a draft was written into it
                self.folder.mkdir(parents=True, exist_ok=True)
            # write-then-rename: a crash never leaves a half-written draft
            handle, temp = self._temporary(draft.signature_id)
            try:
                try:
                    _write_all(handle, parts)
                finally:
                    os.close(handle)
                os.replace(temp, os.path.join(self._folder_text, name))
            except OSError:
                _remove(temp)  # the draft as it was stays; its half-written successor does not
                raise
            return name
        except OSError as exc:
            raise TrackerError(
                f"cannot write the issue draft for {draft.signature_id} into {self.folder}: {exc.strerror}",
                hint="set ROUNDS_OUTPUT_DIR to a writable folder",
            ) from exc

    def _temporary(self, signature_id: str) -> tuple[int, str]:
        """A new file for a draft before it is renamed into place, readable by its owner only (as
        `tempfile.mkstemp` makes one): named after this process and the signature, so no other writer
        shares it and no random name is drawn for each of a round's thousands of drafts; one left behind by
        a crashed process of the same id is passed over for a random name."""
        temp = os.path.join(self._folder_text, f".draft-{os.getpid()}-{signature_id}.md")
        try:
            return os.open(temp, _NEW_PRIVATE_FILE, 0o600), temp
        except FileExistsError:
            return tempfile.mkstemp(dir=self.folder, prefix=".draft-", suffix=".md")

    def _missing(self, draft: IssueDraft) -> IssueRef:
        raise TrackerError(f"the draft for {draft.signature_id} was written but cannot be read back")


def _name(signature_id: str) -> str:
    """The draft file's name in the folder."""
    return f"{signature_id}.md"


#: what `Path.is_file` takes for "no such file" rather than an error (CPython's `pathlib._IGNORED_ERRNOS`
#: and `_IGNORED_WINERRORS`: Windows' not ready, invalid name, and link loop)
_ABSENT_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)
_ABSENT_WINERRORS = (21, 123, 1921)


def _is_file(path: str) -> bool:
    """`Path(path).is_file()` for a path given as text, with the same answers and the same errors raised
    (CPython's `pathlib.Path.is_file`): a regular file (links followed), False when nothing is there."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno not in _ABSENT_ERRNOS and getattr(exc, "winerror", None) not in _ABSENT_WINERRORS:
            raise
        return False
    except ValueError:  # a name the system cannot take (a NUL byte): nothing can be there
        return False


def _write_all(handle: int, parts: list[bytes]) -> None:
    """`parts` written to the open file `handle` one after the other, straight from the bytes given (a file
    object would copy them into its buffer first), in one system call where the system gathers them
    (`os.writev`); a short write goes on where it stopped."""
    views = [memoryview(part) for part in parts if part]
    while views:
        written = _gathered_write(handle, views)
        while views and written >= len(views[0]):
            written -= len(views[0])
            views.pop(0)
        if views:
            views[0] = views[0][written:]


def _gathered_write(handle: int, views: list[memoryview]) -> int:
    """Bytes written of `views`, in order: gathered into one write where the system can, else the first."""
    if hasattr(os, "writev"):
        return os.writev(handle, views)
    return os.write(handle, views[0])


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)
