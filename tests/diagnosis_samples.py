"""Shared inputs for the diagnosis tests: a small repository checkout and a request about it, and the
real Claude Code CLI run against the fake Messages API."""

from __future__ import annotations

import inspect
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fake_messages_api import FakeMessagesApi

from rounds_bot.diagnosis.claude_cli import ClaudeCli
from rounds_bot.diagnosis.claude_code import ClaudeCodeDiagnoser
from rounds_bot.diagnosis.model import (
    DiagnosisRequest,
    LogLine,
    OccurrenceStats,
    RelatedSignature,
)
from rounds_bot.models import ErrorEvent
from rounds_bot.redact.event import redact_event

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PROJECT_ROOT = Path(__file__).resolve().parent.parent

CART_SOURCE = "\n".join(
    [
        '"""Shopping cart totals."""',
        "",
        "",
        "def average_price(cart):",
        '    """The mean price of the items in a cart."""',
        "    total = sum(item.price for item in cart.items)",
        "    return total / len(cart.items)",
        "",
        "",
        "def checkout(cart):",
        "    return average_price(cart)",
        "",
    ]
)

PYTHON_TRACE = """Traceback (most recent call last):
  File "/srv/app/shop/cart.py", line 11, in checkout
    return average_price(cart)
  File "/srv/app/shop/cart.py", line 7, in average_price
    return total / len(cart.items)
ZeroDivisionError: division by zero"""


def make_checkout(root: Path) -> Path:
    """A tiny repository: the code the sample trace points at."""
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "cart.py").write_text(CART_SOURCE, encoding="utf-8")
    (root / "shop" / "__init__.py").write_text("", encoding="utf-8")
    (root / "README.md").write_text("# shop\n", encoding="utf-8")
    return root


def sample_events(count: int = 6, *, message: str = "division by zero") -> list[ErrorEvent]:
    """Occurrences as a diagnosis receives them: through the one redaction boundary, as a round reads them."""
    return [
        redact_event(
            ErrorEvent(
                event_id=f"evt-{index}",
                timestamp=START + timedelta(seconds=30 * index),
                service="shop",
                error_type="ZeroDivisionError",
                message=message,
                stacktrace=PYTHON_TRACE,
                trace_id=f"trace-{index % 2}",
                service_version="1.4.0" if index % 3 else "1.3.9",
                attributes={"http.route": "/checkout", "enduser.id": "alice@example.com"},
            )
        )
        for index in range(count)
    ]


def sample_request(checkout: Path, **changes: object) -> DiagnosisRequest:
    events = sample_events()
    request = DiagnosisRequest(
        signature_id="sig-zero-division",
        title="ZeroDivisionError: division by zero",
        service="shop",
        error_type="ZeroDivisionError",
        normalized_message="division by zero",
        stacktrace=PYTHON_TRACE,
        sample_events=events,
        stats=OccurrenceStats(
            total=42,
            in_window=6,
            first_seen=events[0].timestamp,
            last_seen=events[-1].timestamp,
            services=["shop"],
            service_versions=["1.3.9", "1.4.0"],
        ),
        related_logs=[
            LogLine(
                timestamp=START + timedelta(seconds=31),
                service="shop",
                severity="ERROR",
                body="checkout failed for cart 991: empty cart",
            )
        ],
        related=[
            RelatedSignature(
                signature_id="sig-key-error",
                title="KeyError: 'price'",
                relation="previously_diagnosed",
                classification="server_bug",
                root_cause="items without a price were not rejected",
            )
        ],
        checkout=checkout,
        code_revision="0123abcd",
    )
    return request.model_copy(update=changes) if changes else request


def good_answer(**changes: object) -> dict[str, object]:
    answer: dict[str, object] = {
        "classification": "server_bug",
        "root_cause": "average_price divides by the number of items, which is 0 for an empty cart.",
        "evidence": [
            {
                "kind": "file",
                "path": "shop/cart.py",
                "line": 7,
                "explanation": "the division by len(cart.items)",
            },
            {"kind": "event", "event_id": "evt-1", "explanation": "an occurrence"},
            {
                "kind": "log",
                "log_line": "checkout failed for cart 991: empty cart",
                "explanation": "the cart was empty",
            },
        ],
        "suggested_fix": "Return 0 (or reject checkout) when the cart has no items.",
        "confidence": "high",
        "missing_observability": ["the item count is not recorded on the span"],
        "suggested_error_code": "CART_EMPTY",
    }
    answer.update(changes)
    return answer


def find_claude() -> str | None:
    """ROUNDS_CLAUDE_BIN, else `.ci/node/node_modules/.bin/claude` under the project root (where the CI
    script installs the CLI from `rounds_bot/pins/claude-code` with npm ci), else `claude` on PATH; None
    without one."""
    candidates = [
        os.environ.get("ROUNDS_CLAUDE_BIN"),
        str(PROJECT_ROOT / ".ci" / "node" / "node_modules" / ".bin" / "claude"),
        shutil.which("claude"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def require_claude() -> str:
    """`find_claude()`; without one the test skips, except under CI (CI set), where it fails: CI must
    never skip the real-CLI tests silently."""
    found = find_claude()
    if found is None:
        message = (
            "the Claude Code CLI was not found: set ROUNDS_CLAUDE_BIN or run "
            "cp rounds_bot/pins/claude-code/package*.json .ci/node/ && npm ci --prefix .ci/node"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def fake_api_diagnoser(binary: str, api: FakeMessagesApi, **overrides: Any) -> ClaudeCodeDiagnoser:
    """The real CLI pointed at the fake Messages API: model `sonnet`, no retries, a 90-second timeout."""
    settings: dict[str, Any] = {
        "binary": binary,
        "model": "sonnet",
        "credentials": {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.url},
        "inherited_env": {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        "timeout_seconds": 90,
        "max_retries": 0,
    }
    settings.update(overrides)
    return claude_code_diagnoser(**settings)


_CLI_PARAMETERS = frozenset(inspect.signature(ClaudeCli).parameters)


def claude_code_diagnoser(**settings: Any) -> ClaudeCodeDiagnoser:
    """A diagnoser from keyword settings of both the CLI (`ClaudeCli`'s) and the diagnoser."""
    cli = {key: value for key, value in settings.items() if key in _CLI_PARAMETERS}
    rest = {key: value for key, value in settings.items() if key not in _CLI_PARAMETERS}
    return ClaudeCodeDiagnoser(ClaudeCli(**cli), **rest)


def diagnosis_error_count(checkout: Path, event: ErrorEvent, url: str, api_key: str | None) -> int:
    """What the diagnosis' error-count look-up over the SigNoz at `url` counts, in five-minute points, of
    the problem whose one sample is `event` (its count the whole group's)."""
    from rounds_bot.diagnosis.lookups.scope import SignozBackend, scope_for_request
    from rounds_bot.diagnosis.lookups.signoz import SignozLookups

    request = sample_request(checkout).model_copy(
        update={
            "service": event.service,
            "error_type": event.error_type,
            "sample_events": [event],
            "related_logs": [],
            "stats": OccurrenceStats(total=event.count, in_window=event.count, services=[event.service]),
        }
    )
    scope = scope_for_request(request, backend=SignozBackend(url=url))
    with SignozLookups.connect(scope, api_key=api_key) as lookups:
        points = lookups.error_counts(
            event.service, event.error_type, scope.window_start, scope.window_end, timedelta(minutes=5)
        )
    return sum(point.count for point in points)
