"""Fix proposals, and what becomes of them after they ship.

One module per concept:

    settings.py      the fix settings (part of the one `Settings`); enabled.py: whether fixes are on
    requests.py      who asked for a fix (`/rounds fix`, the CLI, the automatic choice), which are pending
    auto.py          which signatures rounds picks by itself, within the daily cap
    git.py           the real git: fetch, worktrees, commit, push; credentials only where they are needed
    worktree.py      one worktree per attempt, removed however the attempt ends
    prompt.py        what the model is told; templates `fix_system.md.j2` and `fix.md.j2`, overridable
    editor.py        the Claude Code CLI with the edit tools, confined to the worktree
    checks.py        rounds' own checks of the result: where, what and how much changed
    testcommand.py   the repository's own tests, with a time limit and the tail of their output
    testsetup.py     a test command that cannot run at all (a setup problem), told apart from failing tests
    branches.py      which branch an attempt works on: new, the open pull request's, or one a crash left
    attempt.py       one attempt: the tests as they are, edit, checks, tests, commit
    blocked.py       a request whose attempt could not start (setup, failing base): answered, or left waiting
    publish.py       push, open or update the DRAFT pull request
    offers.py        a pushed branch whose pull request GitHub did not let rounds open: the link, adoption
    messages.py      the pull request's description and the comments on the issue
    proposals.py     carrying out the pending requests; failures reported on the issue
    setup.py         the parts a run is built from: the editor, git with its credentials, GitHub
    versions.py      which service.version is newer than which
    release.py       during a round: the release that carries a merged fix; recurrences judged by version
    watch.py         after a round: merges observed on GitHub, the evaluation, resolution
    changelog.py     every fix proposed, for a human to review

rounds never merges, approves or closes a pull request.
"""
