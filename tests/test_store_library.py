"""sqlite-utils is imported without numpy and pandas, which it would load only to map their types, and opens
rounds' database without looking for plugins."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def _run(probe: str) -> str:
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_opening_a_store_imports_neither_numpy_nor_pandas() -> None:
    probe = (
        "import sys; from rounds_bot.store import Store; Store.memory().close(); "
        "print(sorted(m for m in ('numpy', 'pandas') if m in sys.modules))"
    )
    assert _run(probe) == "[]"


def test_numpy_and_pandas_stay_importable_after_it() -> None:
    pytest.importorskip("pandas")
    probe = (
        "import rounds_bot.store, sqlite_utils.db as db, numpy, pandas; "
        "print(numpy.int64 in db.COLUMN_TYPE_MAPPING, type(pandas.DataFrame()).__name__)"
    )
    assert _run(probe) == "False DataFrame"


def test_a_library_imported_before_is_left_as_it_is() -> None:
    probe = "import numpy, rounds_bot.store, sqlite_utils.db as db; print(db.np is numpy)"
    assert _run(probe) == "True"


def test_a_library_hidden_by_the_caller_stays_hidden() -> None:
    probe = (
        "import sys; sys.modules['pandas'] = None; import rounds_bot.store; "
        "print(sys.modules['pandas'], 'numpy' in sys.modules)"
    )
    assert _run(probe) == "None False"


def test_opening_a_store_looks_for_no_sqlite_utils_plugin(tmp_path: Path) -> None:
    """The database is rounds' own: no installed plugin prepares its connection, and none is looked for
    (which reads every installed package's entry points)."""
    probe = (
        "import sys; from pathlib import Path; from rounds_bot.store import Store; "
        f"Store.open(Path({str(tmp_path / 'signatures.db')!r})).close(); Store.memory().close(); "
        "import sqlite_utils.plugins as plugins; print(plugins._plugins_loaded)"
    )
    assert _run(probe) == "False"
