"""Hostile model answers, cut positions and look-alike commands: the answer, rendering and command families
of the proof suite, each tried for real and judged.

    answer_family()      every hostile answer through both diagnosers (the Claude Code CLI's result line,
                         read as the adapter reads it; an OpenAI-compatible endpoint over a mock transport):
                         live when reading it raised, or anything but `invalid_answer` came back
    cut_family()         a 60 KB+ diagnosis full of code spans around active payloads, rendered and cut at
                         many positions (the issue body's own cut, and `markdown.cut` directly): live when
                         GitHub's renderer (cmark-gfm) shows an image, a link, raw HTML, a mention or a
                         reference outside code
    evidence_family()    answers citing a file, event id or log line that are not there, claiming `high`:
                         live when an item renders unflagged, `high` survives, or the auto-fix gate passes
    command_family()     `/rounds` look-alikes (compatibility forms, confusables, combining marks) and lines
                         a blockquote continues lazily: live when one is obeyed as a command

Each returns (tried, live, examples of what was live). Used by tests/test_hostile_answers.py and by
bench/reliability.py, which prints the figures per family.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from rounds_bot.diagnosis.model import Diagnosis, DiagnosisOutcome, DiagnosisRequest, EvidenceCheck
from rounds_bot.render import markdown as md

PAYLOAD = (
    "![pwn](https://evil.example/pwn.png) @pwnuser #7001 <img src=//evil.example/x.png> "
    "[pwn](https://evil.example/pwn) <details>pwn</details> https://evil.example/pwn"
)

Family = tuple[int, int, list[str]]


# --- answers ----------------------------------------------------------------------------------------------


def good_answer(**changes: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "classification": "server_bug",
        "root_cause": "the payment client sends a request the provider refuses",
        "evidence": [{"kind": "file", "path": "shop/pay.py", "line": 1, "explanation": "the call"}],
        "suggested_fix": "check the request before sending it",
        "confidence": "medium",
        "missing_observability": [],
        "suggested_error_code": None,
    }
    answer.update(changes)
    return answer


def _with_raw(field: str, raw_json: str) -> str:
    """A good answer's JSON text with one field's value replaced by raw JSON text (too deep to dump)."""
    text = json.dumps(good_answer(**{field: "@@RAW@@"}))
    return text.replace('"@@RAW@@"', raw_json)


def hostile_answers() -> dict[str, str]:
    """Answer texts that must fail their one diagnosis, quickly, without an exception."""
    deep_object = '{"a":' * 1500 + "1" + "}" * 1500
    deep_array = "[" * 1500 + "]" * 1500  # 3 KB
    return {
        "an object nested 1,500 deep": deep_object,
        "an array nested 1,500 deep (3 KB)": deep_array,
        "a field nested 1,500 deep": _with_raw("root_cause", deep_array),
        "evidence nested 1,500 deep": _with_raw("evidence", deep_array),
        "a deep answer in a fenced block": "Here:\n```json\n" + deep_object + "\n```",
        "nested 100 deep": _with_raw("suggested_fix", "[" * 100 + "]" * 100),
        "a 60 KB root cause": json.dumps(good_answer(root_cause="`x` " * 15_000)),
        "a 5 MB answer": json.dumps(good_answer(root_cause="a" * 5_000_000)),
        "5,000 evidence items": json.dumps(
            good_answer(
                evidence=[{"kind": "event", "event_id": f"e{n}", "explanation": "x"} for n in range(5_000)]
            )
        ),
        "20,000 fences": "```" * 20_000 + json.dumps(good_answer()),
        "50,000 escaped quotes, unterminated": '{"root_cause": "' + '\\"' * 25_000,
        "30,000 open braces": "{" * 30_000 + "}" * 30_000,
        "the classification said twice": json.dumps(good_answer()).replace(
            '"classification": "server_bug"', '"classification": "server_bug", "classification": "unknown"'
        ),
        "two fenced answers that disagree": "\n".join(
            f"```json\n{json.dumps(good_answer(confidence=level))}\n```" for level in ("low", "high")
        ),
        "a line number given as true": json.dumps(
            good_answer(evidence=[{"kind": "file", "path": "shop/pay.py", "line": True, "explanation": "x"}])
        ),
        "a schema-breaking nested explanation": _with_raw(
            "evidence", '[{"kind": "event", "event_id": "e1", "explanation": ' + "[" * 20 + "]" * 20 + "}]"
        ),
    }


def claude_result_line(answer_text: str, *, structured: bool) -> str:
    """The CLI's final result line carrying `answer_text` as structured output (raw JSON) or as text."""
    figures = (
        '"type": "result", "subtype": "success", "is_error": false, "num_turns": 2, '
        '"total_cost_usd": 0.01, "usage": {"input_tokens": 10, "output_tokens": 10}'
    )
    if structured and _valid_json(answer_text):  # the CLI prints its structured output as parsed JSON
        return "{" + figures + ', "result": "", "structured_output": ' + answer_text + "}\n"
    return "{" + figures + ', "result": ' + json.dumps(answer_text) + "}\n"


def _valid_json(text: str) -> bool:
    try:
        json.loads(text)
    except RecursionError:
        return True  # valid, only deeper than this parser goes
    except ValueError:
        return False
    return True


def openai_response(answer_text: str) -> Callable[[httpx.Request], httpx.Response]:
    def respond(request: httpx.Request) -> httpx.Response:
        body = {
            "id": "c1",
            "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer_text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10},
        }
        return httpx.Response(200, content=json.dumps(body).encode())

    return respond


def claude_outcome(request: DiagnosisRequest, line: str) -> DiagnosisOutcome:
    """The Claude Code adapter reading a run that printed `line` (its result), as after a real run."""
    from diagnosis_samples import claude_code_diagnoser

    from rounds_bot.diagnosis.process import Finished

    diagnoser = claude_code_diagnoser(
        binary=Path("/nonexistent/claude"), model="sonnet", credentials={"ANTHROPIC_API_KEY": "k"}
    )
    finished = Finished(stdout_lines=[line], stderr="", returncode=0, timed_out=False, seconds=0.1)
    return diagnoser._outcome(request, diagnoser._prompt(request), finished, None, [])


def openai_outcome(request: DiagnosisRequest, answer_text: str) -> DiagnosisOutcome:
    from rounds_bot.diagnosis.openai_compat import OpenAICompatDiagnoser

    diagnoser = OpenAICompatDiagnoser(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        transport=httpx.MockTransport(openai_response(answer_text)),
    )
    try:
        return diagnoser.diagnose(request)
    finally:
        diagnoser.close()


def answer_family(checkout: Path) -> Family:
    from diagnosis_samples import sample_request

    request = sample_request(checkout)
    tried = live = 0
    examples: list[str] = []
    for name, text in hostile_answers().items():
        attempts: list[tuple[str, Callable[[], DiagnosisOutcome]]] = [
            (
                "claude-code structured",
                lambda t=text: claude_outcome(request, claude_result_line(t, structured=True)),
            ),
            (
                "claude-code text",
                lambda t=text: claude_outcome(request, claude_result_line(t, structured=False)),
            ),
            ("openai-compat", lambda t=text: openai_outcome(request, t)),
        ]
        for path, attempt in attempts:
            tried += 1
            try:
                status = attempt().status
            except Exception as error:
                status = type(error).__name__
            if status != "invalid_answer":
                live += 1
                examples.append(f"{name} via {path}: {status}")
    return tried, live, examples


# --- rendering cuts ---------------------------------------------------------------------------------------


def hostile_diagnosis(size: int = 70_000) -> Diagnosis:
    """A diagnosis whose every field holds code spans around active payloads, `size` characters of it."""
    span = f"see `{PAYLOAD}` and "
    prose = (span * (size // len(span) + 1))[:size]
    return Diagnosis.model_validate(
        {
            "classification": "server_bug",
            "root_cause": prose,
            "evidence": [
                {"kind": "log", "log_line": f"`{PAYLOAD}`", "explanation": f"`{PAYLOAD}` {PAYLOAD}"},
                {"kind": "file", "path": f"a`{PAYLOAD}`.py", "line": 3, "explanation": prose[:2_000]},
            ],
            "suggested_fix": "\n".join([prose[:3_000]] * 4),
            "confidence": "medium",
            "missing_observability": [f"`{PAYLOAD}`"] * 12,
            "suggested_error_code": f"E`{PAYLOAD}`",
        }
    )


_ALLOWED_TAGS = "p|code|pre|br|em|strong|del|h2|h3|ul|ol|li|hr|details|summary|sub|table|thead|tbody|tr|th|td"


def rendered_live(markdown: str) -> list[str]:
    """What GitHub's renderer (cmark-gfm, raw HTML on) shows live outside code: images, links, HTML, a
    mention or a reference to an issue. rounds' own section tags are expected; none of them carry `pwn`."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    markdown = re.sub(r"<!-- rounds:marker v\d+ \{.*?\} -->\s*\Z", "", markdown, flags=re.S)  # rounds' own
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    outside = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    checks = {
        "image": r"<img\b",
        "link": r"<a\b",
        "raw html": rf"<(?!/?(?:{_ALLOWED_TAGS})\b)[A-Za-z!/]|<details>pwn",
        "mention": r"(?<![\w\u200b])@pwn",
        "reference": r"(?<![\w\u200b])#70\d\d",
    }
    return [name for name, pattern in checks.items() if re.search(pattern, outside)]


def cut_positions(length: int, count: int) -> list[int]:
    """`count` positions spread over a text of `length`, and every position of its first 1,000 characters
    (where code spans open and close at every few characters)."""
    step = max(length // count, 1)
    return sorted(set(range(0, min(length, 1_000))) | set(range(0, length, step)))


def cut_family(
    body: Callable[[Diagnosis, int, int], str] | None = None,
    cutter: Callable[[str, int], str] | None = None,
    positions: int = 600,
) -> Family:
    """A hostile diagnosis rendered, then cut: by `markdown.cut` at each position, and in an issue body whose
    stack trace's length moves the body's own cut. `body` renders an issue from a diagnosis and a trace
    length (the round's renderer unless given)."""
    from rounds_bot.render.diagnosis import render_diagnosis

    diagnosis = hostile_diagnosis()
    markdown = render_diagnosis(diagnosis)
    tried = live = 0
    examples: list[str] = []
    for keep in cut_positions(len(markdown), positions):
        tried += 1
        found = rendered_live(str(cutter(markdown, keep) if cutter else md.cut(markdown, keep, "_(cut)_")))
        if found:
            live += 1
            if len(examples) < 5:
                examples.append(f"markdown.cut at {keep}: {', '.join(found)}")
    render = body or issue_body
    for trace_lines in range(0, 3_000, 60):
        for copies in (1, 2):
            tried += 1
            found = rendered_live(render(diagnosis, trace_lines, copies))
            if found:
                live += 1
                if len(examples) < 10:
                    examples.append(f"issue body, {trace_lines}-line trace, x{copies}: {', '.join(found)}")
    return tried, live, examples


def issue_body(diagnosis: Diagnosis, trace_lines: int, copies: int = 1) -> str:
    """An issue body with `diagnosis` (`copies` times over: twice is over the body's limit whatever the
    field limits) and a `trace_lines`-line stack trace, as filed."""
    from rounds_bot.marker import MarkerState
    from rounds_bot.render.diagnosis import render_diagnosis
    from rounds_bot.render.issue import IssueView, render_body

    trace = "\n".join(f'  File "shop/pay.py", line {n}, in charge {"x" * 40}' for n in range(trace_lines))
    view = IssueView(
        signature_id="sig_cut",
        service="checkout",
        error_type="PaymentError",
        normalized_message="payment failed",
        title="payment failed",
        tier="fingerprint",
        explanation="exception type: PaymentError",
        round_count=1,
        total_count=1,
        first_seen="2026-03-02T09:00:00+00:00",
        last_seen="2026-03-02T09:00:00+00:00",
        message="payment failed",
        stacktrace=trace or None,
        diagnosis_markdown=render_diagnosis(diagnosis) * copies,
        marker=MarkerState(signature_id="sig_cut"),
    )
    return render_body(view)


# --- evidence ---------------------------------------------------------------------------------------------


def invented_evidence() -> list[dict[str, Any]]:
    return [
        {"kind": "file", "path": "shop/invented.py", "line": 12, "explanation": "a file that is not there"},
        {"kind": "file", "path": "shop/pay.py", "line": 900, "explanation": "a line past the end"},
        {"kind": "file", "path": "../../etc/passwd", "line": 1, "explanation": "outside the repository"},
        {"kind": "event", "event_id": "evt-made-up", "explanation": "an event nobody saw"},
        {"kind": "log", "log_line": "FATAL: a log line nobody wrote", "explanation": "an invented log"},
        {"kind": "log", "log_line": "err", "explanation": "too short to prove anything"},
    ]


def evidence_family(checkout: Path) -> Family:
    """Each invented item alone in a `high` server-bug answer, through the checks into the issue's rendering
    and the auto-fix gate's test (`Diagnosis.evidence_verified` at `high`)."""
    from diagnosis_samples import sample_request

    from rounds_bot.diagnosis.evidence import check_evidence
    from rounds_bot.render.diagnosis import render_diagnosis

    request = sample_request(checkout)
    tried = live = 0
    examples: list[str] = []
    for item in invented_evidence():
        tried += 1
        answer = Diagnosis.from_answer(good_answer(confidence="high", evidence=[item]))
        outcome = DiagnosisOutcome(
            status="ok", diagnosis=answer, evidence_checks=check_evidence(answer, request)
        )
        diagnosis = outcome.diagnosis
        assert diagnosis is not None
        markdown = render_diagnosis(diagnosis)
        problems = []
        if "unverified" not in markdown:
            problems.append("rendered unflagged")
        if diagnosis.confidence == "high":
            problems.append("still high")
        if diagnosis.confidence == "high" and getattr(diagnosis, "evidence_verified", True):
            problems.append("qualifies for an automatic fix")
        if problems:
            live += 1
            examples.append(f"{item['explanation']}: {', '.join(problems)}")
    return tried, live, examples


def checks_for(diagnosis: Diagnosis, verified: bool) -> list[EvidenceCheck]:
    return [EvidenceCheck(index=n, verified=verified, reason="x") for n in range(len(diagnosis.evidence))]


# --- commands ---------------------------------------------------------------------------------------------

#: look-alikes of `/rounds pause`: compatibility forms NFKC folds, confusables (Unicode TR39), marks
LOOK_ALIKES = {
    "long s (U+017F)": "/round\u017f pause",
    "long s in the command word": "/rounds pau\u017fe",
    "dotless i": "/rounds un\u0131gnore",
    "Cyrillic o": "/r\u043eunds pause",
    "Cyrillic dze": "/round\u0455 pause",
    "Cyrillic a in the command word": "/rounds p\u0430use",
    "Greek omicron": "/r\u03bfunds pause",
    "Armenian vo": "/rou\u0578ds pause",
    "fullwidth letters": "/\uff52\uff4f\uff55\uff4e\uff44\uff53 pause",
    "fullwidth solidus": "\uff0frounds pause",
    "division slash": "\u2215rounds pause",
    "mathematical bold": "/\U0001d42b\U0001d428\U0001d42e\U0001d427\U0001d41d\U0001d42c pause",
    "combining dot below": "/rounds\u0323 pause",
    "r with acute": "/\u0155ounds pause",
    "Latin alpha": "/rounds p\u0251use",
    "small capital": "/rounds p\u1d00use",
    "Cherokee s": "/round\uabaa pause",
    "superscript s": "/round\u02e2 pause",
    "circled letters": "/\u24e1ounds pause",
    "fullwidth merge number": "/rounds merge #\uff11\uff12",
    "Arabic-Indic digits": "/rounds merge #\u0661\u0662",
}

#: lines a blockquote continues lazily (CommonMark 0.31, 5.1 "laziness"): quoted, so never commands
LAZY_QUOTES = {
    "after a quoted paragraph": "> I would write\n/rounds pause",
    "two lines on": "> quoted\nstill quoted\n/rounds pause",
    "nested quote": "> > deep\n/rounds resume",
    "quote in a list item": "> - item\n/rounds pause",
    "quote after text": "Hello\n\n> quoted line\n/rounds merge #3",
    "indented quote marker": "   > quoted\n/rounds pause",
    "quote without a space": ">quoted\n/rounds pause",
}


def command_family() -> Family:
    from rounds_bot.commands.grammar import parse_comment

    tried = live = 0
    examples: list[str] = []
    for name, body in {**LOOK_ALIKES, **LAZY_QUOTES}.items():
        tried += 1
        obeyed = parse_comment(body).commands
        if obeyed:
            live += 1
            examples.append(f"{name}: obeyed as {obeyed[0].name}")
    return tried, live, examples
