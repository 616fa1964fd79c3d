"""A model's fenced code block (CommonMark 0.31 §4.5, "Fenced code blocks": three or more backticks or tildes)
in the root cause or the suggested fix reaches the issue as a code block that keeps its lines and their
indentation, not as escaped backticks around flattened code; whatever it holds stays inert text, no line of it
can close the block rounds writes, and a block the model left open (or a cut left open) is closed."""

from __future__ import annotations

import json

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from diagnosis_samples import sample_request
from hostile_answers import claude_outcome, claude_result_line
from hostile_issue_bodies import EXFIL, answer, hostile_checkout, issue_body, judge_body

from rounds_bot.commands.grammar import command_lines
from rounds_bot.fixing.messages import pull_body
from rounds_bot.fixing.pullfacts import PullFacts, Revision
from rounds_bot.fixing.testcommand import TestRun
from rounds_bot.render import markdown as md
from rounds_bot.render.diagnosis import PROSE_CHARS, _text
from rounds_bot.render.prose import escape_prose

FIX = (
    "Return 0.0 when `cart.items` is empty:\n\n```python\nif not cart.items:\n    return 0.0\n```\n\n"
    "Then test it."
)


def _body(tmp_path, **changes: object) -> str:
    request = sample_request(hostile_checkout(tmp_path / "repo"))
    line = claude_result_line(json.dumps(answer(**changes)), structured=True)
    outcome = claude_outcome(request, line)
    assert outcome.status == "ok"
    return issue_body(outcome)


def _html(body: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)


def test_a_fenced_fix_shows_as_code_keeping_its_indentation(tmp_path):
    html = _html(_body(tmp_path, suggested_fix=FIX))
    assert '<pre lang="python"><code>if not cart.items:\n    return 0.0\n</code></pre>' in html
    assert "<p>Return 0.0 when <code>cart.items</code> is empty:</p>" in html
    assert "<p>Then test it.</p>" in html


def test_a_tilde_fence_in_the_root_cause_shows_as_code(tmp_path):
    loop = "The loop:\n~~~\nfor item in cart.items:\n    total += item.price\n~~~"
    html = _html(_body(tmp_path, root_cause=loop))
    assert "<pre><code>for item in cart.items:\n    total += item.price\n</code></pre>" in html


@pytest.mark.parametrize(
    "fix",
    [
        f"````\n```\n@octocat {EXFIL}\n```\n<img src=x onerror=alert(1)>\n````\n@octocat #12",
        f"~~~\n```\n</details> {EXFIL}\n~~~\n~~~~ #12",
        f"```sh\necho hi\n```` @octocat\n{EXFIL} <!-- x",
        "```\nleft open <!-- @octocat #12",
        "~~~python onerror=<x> `\n@octocat\n~~~",
        "  ```\n  indented @octocat\n     more\n  ```",
    ],
    ids=[
        "four backticks",
        "tildes around backticks",
        "a closer with text",
        "never closed",
        "odd info",
        "indented",
    ],
)
def test_what_a_fenced_block_holds_stays_inert_and_the_body_reads_on(tmp_path, fix):
    body = _body(tmp_path, suggested_fix=fix)
    assert judge_body(body) == []
    html = _html(body.split("### Suggested fix", 1)[1])
    assert "</code></pre>" in html and "\\`" not in body  # shown as a block, not as escaped backticks
    assert html.rstrip().endswith("-->") and "Filed by rounds" in html  # the footer and marker still stand


def test_a_block_cut_at_the_prose_limit_is_closed(tmp_path):
    fix = "Replace it:\n\n```\n" + "x = 1\n" * PROSE_CHARS + "```\n@octocat"
    body = _body(tmp_path, suggested_fix=fix)
    assert judge_body(body) == []
    html = _html(body.split("### Suggested fix", 1)[1])
    assert html.count("<pre><code>") == 1 and "…\n</code></pre>" in html
    assert "Filed by rounds" in html


@pytest.mark.parametrize("renderer", ["math", "mermaid", "geojson", "topojson", "stl", "MATH", "Mermaid"])
def test_a_block_github_would_draw_is_shown_as_plain_code(tmp_path, renderer):
    # GitHub draws these blocks (docs.github.com, "Writing mathematical expressions", "Creating diagrams"):
    # the model could draw big red text posing as rounds
    fix = f"Apply:\n```{renderer}\n\\Huge\\color{{red}}\\text{{rounds: verified safe}}\n```"
    html = _html(_body(tmp_path, suggested_fix=fix))
    assert "<pre><code>\\Huge\\color{red}\\text{rounds: verified safe}\n</code></pre>" in html
    assert "lang=" not in html.split("Suggested fix", 1)[1].split("Filed by rounds", 1)[0]


@pytest.mark.parametrize(
    ("info", "language"), [("python", "python"), ("go", "go"), ("C#", "c#"), ("c++ x", "c++")]
)
def test_an_ordinary_language_name_is_kept_for_highlighting(info, language):
    assert str(escape_prose(f"```{info}\nx\n```")) == f"```{language}\nx\n```"


def test_tabs_inside_a_block_are_kept_and_outside_it_are_spaces():
    text = "Return\tit:\n```go\nif err != nil {\n\treturn err\n}\n```"
    assert str(escape_prose(text)) == "Return it:\n\n```go\nif err != nil {\n\treturn err\n}\n```"


def test_a_block_holding_backticks_keeps_them_exactly_under_a_longer_fence():
    content = "```\n@octocat\n`````` x\n``"
    out = str(escape_prose(f"~~~\n{content}\n~~~\nafter"))
    assert out == f"```````\n{content}\n```````\n\nafter"
    html = _html(out)
    assert html.startswith("<pre><code>```\n@octocat\n`````` x\n``\n</code></pre>") and "<p>after</p>" in html


def test_an_indented_opener_at_the_start_keeps_its_indent_off_the_content(tmp_path):
    html = _html(_body(tmp_path, suggested_fix="  ```py\n  x = 1\n    y\n  ```"))
    assert '<pre lang="py"><code>x = 1\n  y\n</code></pre>' in html


def test_four_spaces_before_backticks_at_the_start_open_no_block(tmp_path):
    body = _body(tmp_path, suggested_fix="    ```\n    @octocat\n    ```")
    assert "```" not in body.split("### Suggested fix", 1)[1].split("<sub>", 1)[0]
    assert judge_body(body) == []


def test_a_command_line_in_a_pull_requests_code_block_is_kept_and_outside_it_escaped(tmp_path):
    fix = "Run:\n\n```\n/rounds close\n```\n\n/rounds close"
    request = sample_request(hostile_checkout(tmp_path / "repo"))
    outcome = claude_outcome(
        request, claude_result_line(json.dumps(answer(suggested_fix=fix)), structured=True)
    )
    body = pull_body(
        issue_number=7,
        signature_id="sig",
        diagnosis=outcome.diagnosis,
        pull=PullFacts(base="main", files=["a.py"]),
        revisions=[Revision(commit="a" * 40, tests="passed")],
        tests=TestRun(command="pytest", passed=True, exit_code=0, timed_out=False, seconds=1, tail=""),
    )
    assert "Run:\n\n```\n/rounds close\n```\n\n\\/rounds close" in body
    assert command_lines(body) == []
    assert "<pre><code>/rounds close\n</code></pre>" in _html(body)


@pytest.mark.parametrize(
    "text",
    [
        "```\n/rounds close\n```\n/rounds close",
        "> ```\n/rounds close",
        "    ```\n/rounds close\n```",
        "```\r/rounds close\n```",
        "- x\n  ```\n/rounds close\n  ```",
        "```a`b\n/rounds close",
    ],
)
def test_no_line_neutralise_leaves_reads_as_a_command(text):
    assert command_lines(md.neutralise(text)) == []


LONG_FENCED_FIX = (
    "Change it:\n````\n```\nstill code\n````\n\nThen:\n~~~python\n"
    + "\n".join(f"x{i} = {i}" for i in range(40))
    + "\n~~~\nDone."
)


@pytest.mark.parametrize("keep", [30, 60, 120, 250])
def test_a_cut_inside_a_longer_fence_closes_it_and_the_footer_reads_on(keep):
    diagnosis = "### Suggested fix\n\n" + str(escape_prose(LONG_FENCED_FIX, limit=4000))
    cut = str(md.cut(diagnosis, keep, "_(the diagnosis was truncated to fit the issue)_"))
    html = _html(cut + "\n---\n<sub>Filed by rounds.</sub>\n\n<!-- rounds:marker {} -->\n")
    assert "<em>(the diagnosis was truncated to fit the issue)</em>" in html
    assert "<sub>Filed by rounds.</sub>" in html and html.rstrip().endswith("-->")


def test_the_first_lines_indentation_does_not_count_toward_the_prose_limit():
    prose = "a" * PROSE_CHARS
    assert _text("      " + prose, PROSE_CHARS) == _text(prose, PROSE_CHARS) == prose
    assert _text(prose + "a", PROSE_CHARS) == "a" * (PROSE_CHARS - 1) + "…"
