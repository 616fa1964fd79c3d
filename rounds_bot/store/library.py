"""sqlite-utils, imported without the array libraries it would load for nothing.

When numpy or pandas is installed, sqlite-utils imports it as it is imported itself, only to map their scalar
types to column types for tables it creates from Python values (`sqlite_utils.db.COLUMN_TYPE_MAPPING`).
rounds creates its tables in SQL and writes plain Python values, so neither is ever used through it; numpy
alone is about 70 ms of every command's start (a round never needs it otherwise), pandas (which the test
extra installs) more still. So sqlite-utils is imported, once, with the two hidden (`import numpy` fails in
it as where they are not installed), and they are importable again right after, for whatever needs them.
"""

from __future__ import annotations

import importlib
import sys

#: what sqlite-utils imports only to map its types, when it is installed
UNUSED = ("numpy", "pandas")


def import_sqlite_utils() -> None:
    """Import sqlite-utils (nothing when it is imported already) without importing `UNUSED`."""
    if "sqlite_utils" in sys.modules:
        return
    hidden = [name for name in UNUSED if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # Python's own mark for "import fails"
    try:
        importlib.import_module("sqlite_utils")
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


import_sqlite_utils()
