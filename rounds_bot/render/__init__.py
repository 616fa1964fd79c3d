"""Markdown that rounds publishes: issue titles and bodies (`issue.py`, from `templates/issue.md.j2`) and the
hidden marker every issue carries (`marker.py`), from which a lost database is rebuilt."""
