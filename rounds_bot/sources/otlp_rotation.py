"""The backups the OpenTelemetry Collector's file exporter leaves when it rotates its file (`rotation`).

The exporter rotates with lumberjack: at `max_megabytes` the file is renamed `<name>-<time><ext>` (its
extension kept last, the time in UTC unless `localtime`, as `2006-01-02T15-04-05.000`) and a new file begun
under the old name. What it received after a round read the file, and before the rename, is only in the
backup: a round reads the backups written to since its window began, oldest first, before the file. An older
backup was complete before the window began, when an earlier round read it whole (as the file or as a
backup); a first round (its window begins at the epoch) reads them all: the file's whole history.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

#: lumberjack's backupTimeFormat, "2006-01-02T15-04-05.000"
_BACKUP_TIME = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}"


def rotated_backups(path: Path, *, since: datetime) -> list[Path]:
    """The backups of `path` last written at or after `since`, oldest first (by the time in their names,
    when each was rotated). None when the folder cannot be listed: reading the file says what is wrong."""
    # Go's filepath.Ext: from the last dot of the name
    stem, ext = (path.name[: -len(path.suffix)], path.suffix) if path.suffix else (path.name, "")
    pattern = re.compile(f"{re.escape(stem)}-({_BACKUP_TIME}){re.escape(ext)}")
    found: list[tuple[str, Path]] = []
    try:
        for entry in path.parent.iterdir():
            match = pattern.fullmatch(entry.name)
            if match is not None and entry.is_file() and entry.stat().st_mtime >= since.timestamp():
                found.append((match.group(1), entry))
    except OSError:
        return []
    return [backup for _, backup in sorted(found)]
