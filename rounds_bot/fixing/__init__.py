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
    attempt.py       the pieces of an attempt: the tests as they are (baseline), the rules, a kept failure
    blocked.py       a request whose attempt could not start (setup, failing base): answered, or left waiting
    run.py           what a run of the stages works with (`FixRun`), and what each request came to
    editing.py       stage 1, edit: the model's change in a worktree, checked, as a patch (no repository code)
    testing.py       stage 2, test: the repository's tests, unchanged then with the patch (no token in reach)
    publishing.py    stage 3, publish: the patch checked again, committed in a fresh repository, pushed, the
                     pull request or the report (no repository code)
    bundle.py        what passes between the stages: the proposal bundle and the test verdict (hostile input)
    freshclone.py    publishing's repository of its own, where no git configuration runs a command
    tokens.py        the tokens in reach: none beside the test command (outside Actions), scrubbed from text
    answers.py       a request answered: its event and its one comment on the issue
    stages.py        `rounds fix edit | test | publish`: the stages apart, one GitHub Actions job each
    publish.py       push, open or update the DRAFT pull request
    offers.py        a pushed branch whose pull request GitHub did not let rounds open: the link, adoption
    messages.py      the pull request's description and the comments on the issue
    proposals.py     `rounds fix` in one process: the three stages in turn for each pending request
    setup.py         the parts a run is built from: the editor, git with its credentials, GitHub
    versions.py      which service.version is newer than which
    release.py       during a round: the release that carries a merged fix; recurrences judged by version
    watch.py         after a round: merges observed on GitHub, the evaluation, resolution
    changelog.py     every fix proposed, for a human to review

rounds never merges, approves or closes a pull request.
"""
