"""Everything that talks to GitHub: issues, labels, comments, permissions, artifacts and workflows.

    tracker.py    the GitHub tracker: one issue per signature, never a twin (with journal.py, labels.py)
    rest.py       the REST calls, through PyGithub, each counted, paced and translated (ratelimit.py)
    actions.py    the calls beside filing issues: commands, saved state, `rounds doctor`
    commands/     the `/rounds` commands people write in issue comments
    rebuild.py    the signature database rebuilt from the bot's issues alone
    artifacts.py  the signature database carried between workflow runs as an artifact (artifact_download.py)

Nothing outside this package imports PyGithub; its errors become `TrackerError`s here.
"""
