"""The dry-run tracker: one Markdown file per signature in an output folder.

It behaves like the GitHub tracker (find by the hidden marker, create once, update in place) so a dry run
shows exactly what a real run would file, and running twice files nothing new.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from rounds_bot.errors import TrackerError
from rounds_bot.marker import read_marker
from rounds_bot.render.markdown import code, escape
from rounds_bot.tracker.base import IssueDraft, IssueRef


class DryRunTracker:
    name = "dry-run"

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def _path(self, signature_id: str) -> Path:
        return self.folder / f"{signature_id}.md"

    def find(self, signature_id: str, known_ref: str | None = None) -> IssueRef | None:
        path = self._path(signature_id)
        if not path.is_file():
            return None
        marker = read_marker(path.read_text(encoding="utf-8"))
        if marker is None or marker.signature_id != signature_id:
            return None
        state = "closed" if marker.closed else "open"
        return IssueRef(signature_id=signature_id, ref=path.name, url=path.resolve().as_uri(), state=state)

    def create(self, draft: IssueDraft) -> IssueRef:
        self._write(draft)
        return self.find(draft.signature_id) or self._missing(draft)

    def update(
        self, issue: IssueRef, draft: IssueDraft, *, comment: str | None = None, reopen: bool = False
    ) -> IssueRef:
        self._write(draft, comment=comment)
        return self.find(draft.signature_id) or self._missing(draft)

    def finish_round(self) -> list[str]:
        return []

    def _write(self, draft: IssueDraft, comment: str | None = None) -> None:
        # the draft is Markdown: the title (plain text on GitHub) is escaped like any untrusted text
        labels = ", ".join(code(label) for label in draft.labels)
        text = f"# {escape(draft.title)}\n\nLabels: {labels}\n\n{draft.body}"
        if comment:
            text += f"\n\n---\n**Latest comment**\n\n{comment}\n"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # write-then-rename: a crash never leaves a half-written draft
            handle, temp = tempfile.mkstemp(dir=self.folder, prefix=".draft-", suffix=".md")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temp, self._path(draft.signature_id))
        except OSError as exc:
            raise TrackerError(
                f"cannot write the issue draft for {draft.signature_id} into {self.folder}: {exc.strerror}",
                hint="set ROUNDS_OUTPUT_DIR to a writable folder",
            ) from exc

    def _missing(self, draft: IssueDraft) -> IssueRef:
        raise TrackerError(f"the draft for {draft.signature_id} was written but cannot be read back")
