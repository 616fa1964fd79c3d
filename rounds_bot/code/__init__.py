"""The repository behind the telemetry: frames mapped to files (`mapping.py`), git history for a line
(`history.py`), CODEOWNERS (`owners.py`), and the round's step that puts them together (`locate.py`)."""
