"""What rounds writes about fixes on GitHub: the draft pull request, and its comments on the issue.

Everything here is composed by rounds from its own state and from git; untrusted text (the diagnosis's prose,
the test output) goes through `render.markdown` (escaped prose, fenced output). The model's closing note is
never published. No line of it reads as a `/rounds` command (`neutralise`): one outside a code block has its
slash escaped; one inside is shown as written, as rounds reads no command in code, unless an HTML comment or
code element comes before it (rounds' parser takes those out before it reads fences: `render.hidden`), when
it is escaped too.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote, urlencode

from rounds_bot.diagnosis.model import Diagnosis
from rounds_bot.fixing.pullfacts import PullFacts, Revision
from rounds_bot.fixing.testcommand import TestRun
from rounds_bot.github.pulls import ACTIONS_SETTING
from rounds_bot.redact import clean
from rounds_bot.render import markdown as md
from rounds_bot.render.diagnosis import render_diagnosis
from rounds_bot.render.markdown import neutralise

FIX_MARK = "<!-- rounds:fix {signature_id} -->"
#: GitHub documents only that a URL over its server's limit answers 414 URI Too Long ("Using query parameters
#: to create a pull request", docs.github.com/en/pull-requests/reference/using-query-parameters-to-create-a-
#: pull-request); 8,000 characters stays within the 8 KiB request line common web servers accept
MAX_LINK_CHARS = 8_000


def pull_title(issue_number: int, signature_id: str) -> str:
    return f"rounds: proposed fix for #{issue_number} ({signature_id})"


def commit_message(issue_number: int, signature_id: str, tests: TestRun) -> str:
    """The fix commit's message, with trailers naming the signature and the issue."""
    return (
        f"Proposed fix for #{issue_number} ({signature_id})\n\n"
        f"Proposed by rounds for the problem in issue #{issue_number}; {_plain(tests.summary())}.\n\n"
        f"Rounds-Signature: {signature_id}\nRounds-Issue: #{issue_number}\n"
    )


# The description says what the pull request is; where GitHub has no drafts (a private repository on GitHub
# Free or Pro: `github/pulls.py`) it is opened ready for review, and says so instead.
DRAFT_SENTENCE = "This is a draft."
NOT_A_DRAFT = (
    "This is a proposal opened ready for review only because GitHub offers no draft pull requests in this "
    "repository (a private repository needs GitHub Team or Enterprise Cloud for them): treat it as a draft."
)


def as_not_a_draft(body: str) -> str:
    """A pull request description of `pull_body`, for one GitHub could not open as a draft."""
    return body.replace(DRAFT_SENTENCE, NOT_A_DRAFT, 1)


def pull_body(
    *,
    issue_number: int,
    signature_id: str,
    diagnosis: Diagnosis | None,
    pull: PullFacts,
    revisions: Sequence[Revision],
    tests: TestRun,
) -> str:
    """The draft pull request's description, of the WHOLE pull request: what it fixes and why, every file it
    changes against its base, and each commit rounds pushed (oldest first; the last is the one `tests` ran
    on, shown first), with who asked for it and their instructions."""
    assert revisions, "a pull request has at least the commit being published"
    latest = revisions[-1]
    diagnosis_text = (
        render_diagnosis(diagnosis)
        if diagnosis
        else "_No diagnosis yet: the change rests on the stack trace._"
    )
    asked = f", {md.escape(revisions[0].asked)}" if revisions[0].asked else ""
    commits = f"{pull.commits} commit" + ("" if pull.commits == 1 else "s")
    parts = [
        # `Refs`, not `Fixes`: merging must not close the issue; rounds closes it once the release that
        # carries the fix has run without the problem (a closed issue would read its old occurrences as a
        # regression)
        f"Refs #{issue_number}",
        f"rounds proposes this change for the problem in #{issue_number} "
        f"(signature {md.code(signature_id)}){asked}.",
        "## Diagnosis",
        diagnosis_text.strip(),
        "## Files changed",
        f"Everything this pull request changes against {md.code(pull.base)} ({commits}):\n\n"
        + "\n".join(f"- {md.code(path)}" for path in pull.files)
        + f"\n\n{pull.added} lines added, {pull.deleted} removed.",
        "## Tests",
        f"**The latest commit, {md.code(latest.short)}:** {test_section(tests)}",
    ]
    if len(revisions) > 1 or any(r.instructions for r in revisions):
        parts += ["## Revisions", _revision_list(revisions)]
    parts += [
        "---",
        f"{DRAFT_SENTENCE} Review it, let CI run on it, and merge it yourself: rounds never merges or "
        "approves. `/rounds fix` with instructions in a comment here asks rounds to revise it. "
        "After the merge rounds watches the problem: once the first release that carries the fix has run "
        "for the quiet period without it, the issue is closed as resolved with the numbers; if the problem "
        "comes back on that release or a later one, the issue is reopened as a regression.",
        FIX_MARK.format(signature_id=signature_id),
    ]
    return neutralise("\n\n".join(parts)) + "\n"


def _revision_list(revisions: Sequence[Revision]) -> str:
    """Each commit rounds pushed, oldest first: who asked, their instructions (escaped), its tests."""
    lines = []
    for number, item in enumerate(revisions, start=1):
        asked = f" {md.escape(item.asked)}" if item.asked else ""
        said = f", with the instructions “{md.escape(item.instructions)}”" if item.instructions else ""
        lines.append(f"{number}. {md.code(item.short)}{asked}{said}. Tests: {md.escape(item.tests)}.")
    return "\n".join(lines)


def test_section(tests: TestRun) -> str:
    summary = md.escape(tests.summary()) + "."
    if not tests.tail:
        return str(summary)
    return (
        f"{summary}\n\n<details><summary>The last lines of its output</summary>\n\n"
        f"{md.fenced(clean(tests.tail))}\n\n</details>"
    )


def proposed_comment(
    pr_number: int, branch: str, files: list[str], tests: TestRun, *, updated: bool, draft: bool = True
) -> str:
    kind = "draft pull request" if draft else "pull request"
    did = f"pushed a new commit to the {kind}" if updated else f"opened a {kind}"
    if not draft:
        did += " (not a draft: GitHub offers no draft pull requests in this repository)"
    listed = ", ".join(str(md.code(path)) for path in files)
    return neutralise(
        f"rounds {did} #{pr_number} with a proposed fix (branch {md.code(branch)}; changed: {listed}). "
        f"The repository's tests: {md.escape(tests.summary())}. Review it and merge it yourself; rounds "
        "watches the problem after the merge and closes this issue once a release without it has run long "
        "enough."
    )


def failed_comment(reason: str, details: list[str], tests: TestRun | None, kept: str | None) -> str:
    """Why no pull request was opened."""
    lines = [f"rounds could not propose a fix: {md.escape(reason)}."]
    lines += [f"- {md.escape(detail)}" for detail in details]
    if tests is not None and tests.tail:
        lines.append(
            f"\nThe repository's tests: {md.escape(tests.summary())}. The last lines of their output:"
        )
        lines.append(str(md.fenced(clean(tests.tail))))
    after = (
        f"The attempt is kept in the local branch {md.code(kept)} of the checkout rounds ran in."
        if kept
        else "Nothing was pushed."
    )
    lines.append(f"\n{after} `/rounds fix` tries again.")
    return neutralise("\n".join(lines))


def compare_link(server_url: str, repository: str, base: str, branch: str) -> str:
    """The page that opens a pull request from `branch` into `base`, ready to create (`expand=1`)."""
    where = f"{quote(base, safe='/')}...{quote(branch, safe='/')}"
    return f"{server_url.rstrip('/')}/{repository}/compare/{where}?expand=1"


def prefilled_link(link: str, *, title: str, body: str, short_body: str) -> str:
    """`link` with the pull request's title and description filled in: the `title` and `body` query parameters
    of "Using query parameters to create a pull request" (GitHub Docs). The whole description when the link
    stays within MAX_LINK_CHARS, else the short one, else the title alone."""
    for text in (body, short_body):
        url = f"{link}&{urlencode({'title': title, 'body': text})}"
        if len(url) <= MAX_LINK_CHARS:
            return url
    return f"{link}&{urlencode({'title': title})}"


def short_pull_body(issue_number: int, signature_id: str) -> str:
    """The description when the whole one does not fit in a link: the issue it fixes, where the rest is."""
    parts = [
        f"Refs #{issue_number}",
        f"rounds proposes this change for the problem in #{issue_number} (signature "
        f"{md.code(signature_id)}); its comment there says what changed and how it was tested.",
        FIX_MARK.format(signature_id=signature_id),
    ]
    return neutralise("\n\n".join(parts)) + "\n"


def offered_comment(link: str, branch: str, files: list[str], tests: TestRun) -> str:
    """The branch is pushed, but GitHub does not let this workflow open the pull request: a link that does."""
    listed = ", ".join(str(md.code(path)) for path in files)
    return neutralise(
        f"rounds pushed a proposed fix to the branch {md.code(branch)} (changed: {listed}; the repository's "
        f"tests: {md.escape(tests.summary())}), but GitHub does not let GitHub Actions open pull requests "
        "in this repository.\n\n"
        f"**{md.link('Open the pull request', link)}**: its title and description are filled in. "
        "Create it (as a draft if you like), review it and merge it yourself; rounds follows it from there "
        "as if it had opened it.\n\n"
        f"To let rounds open its pull requests itself, turn on {ACTIONS_SETTING}, or give the fix job a "
        "GitHub App token (the fix action's `github-token` input; see docs/fixes.md in rounds)."
    )


def not_started_comment(
    reason: str, tests: TestRun | None, *, hint: str | None, again: str, model_ran: bool = False
) -> str:
    """No attempt was made: the test command cannot run (with what to change), or the tests already fail.
    With `model_ran` (the staged jobs: the tests run after the edit), the model's change was not tested."""
    first = f"rounds could not try a fix: {md.escape(reason)}."
    if hint:
        first += f" {hint[0].upper()}{hint[1:]}."
    lines = [first]
    if tests is not None and tests.tail:
        lines.append(f"\n{md.escape(tests.summary())}.\n")
        lines.append(
            f"<details><summary>The last lines of its output</summary>\n\n{md.fenced(clean(tests.tail))}\n\n"
            "</details>"
        )
    # `model_ran`: the fix-test job found this after the fix-edit job's model run (docs/fixes.md)
    done = "The model's change was not tested" if model_ran else "No model ran"
    lines.append(f"\n{done} and nothing was pushed. {again}")
    return neutralise("\n".join(lines))


def _plain(text: str) -> str:
    return text.replace("`", "")
