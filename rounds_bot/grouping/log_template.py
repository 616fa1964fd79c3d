"""An error log's own template: the log statement's format string, which its logging library exports beside
the formatted body.

Sentry groups a log entry by its format string (`logentry.message`), not by the formatted text; so does
rounds, for an error log with no stack trace whose library sends its template as an attribute
(`TEMPLATE_ATTRIBUTES`). The template names the statement in the code: `Payment {PaymentId} failed for
customer {Email}` is one problem whatever ids, emails and reasons its lines print, and two statements are two
problems even when their lines read alike once masked (`Order {OrderId} failed` and `Order {OrderId}
{Status}` both print `Order 7 failed`). The template replaces the body's mined template; the service, the
exception type and everything else group as before.

A template is read as a message is (`normalize`, `skeletons`): its placeholders become parameters. A template
that is the body itself (`$"Payment {id} failed"` in C# makes the formatted text the template) is not one: the
line is grouped by its body, whose values the batch's variability can tell. It is kept as an *exact* template
(`templates`: matched only by the very same skeleton, never widened, never merged by the words that vary
across a batch), behind `TEMPLATE_MARK`, so no body's skeleton can ever match it nor it a body's template. A
template that keeps no word of the statement (`{Message}`, `{0}: {1}`: a helper that logs whatever text it is
given, from anywhere) names no statement: the line is grouped by its body, as is a template that is empty or
not text.
"""

from __future__ import annotations

from collections.abc import Mapping

from rounds_bot.grouping.logged_traces import LOG_BODY
from rounds_bot.grouping.skeletons import EXACT_MARK, has_constant_word, is_exact_skeleton
from rounds_bot.models import AttributeValue, EventKind

#: where logging libraries export a log statement's template beside the formatted body, in this order:
#: - `{OriginalFormat}`: OpenTelemetry .NET's OTLP exporter (OpenTelemetry.Exporter.OpenTelemetryProtocol,
#:   `ProtobufOtlpLogSerializer.WriteLogRecord`): with `IncludeFormattedMessage` the body is the formatted
#:   message and the ILogger template is exported as this attribute; without it the template *is* the body
#:   and the attribute is not sent (then the body groups as it always did);
#: - `message_template.text`: Serilog.Sinks.OpenTelemetry (`SemanticConventions.AttributeMessageTemplateText`,
#:   written by `LogRecordBuilder` under `IncludedData.MessageTemplateTextAttribute`, on by default); the
#:   body is the rendered message. Its MD5 (`message_template.hash.md5`, `message_template.md5_hash` in
#:   older releases) is off by default and is not read: a hash cannot tell a template that names no
#:   statement, and the text comes with it;
#: - `log.body.template`: the OpenTelemetry Java appenders (opentelemetry-java-instrumentation's logback
#:   appender `LoggingEventMapper.captureArguments`, its JBoss LogManager `capture_template`): the body is
#:   the formatted message and this the SLF4J / JBoss pattern (`log message {} and {}`).
#: NLog's OTLP target (NLog.Targets.OpenTelemetryProtocol, `includeFormattedMessage`) serialises through the
#: .NET exporter and sends `{OriginalFormat}` the same way (its `TargetTests`); the log4j appender sends none.
TEMPLATE_ATTRIBUTES = ("{OriginalFormat}", "message_template.text", "log.body.template")
#: characters of a template read at most: a format string is a line of code, and a longer text is cut (as
#: `normalize` cuts a message) before it is read, so what it costs and what an issue shows are bounded
MAX_TEMPLATE_CHARS = 1_000
#: the word after `EXACT_MARK` that makes a logged template's skeleton its own: an exact skeleton of a body
#: holds no letter (`skeletons`), so none can ever be this
TEMPLATE_MARK = "log-template:"


def logged_template(
    kind: EventKind, stacktrace: str | None, attributes: Mapping[str, AttributeValue], body: str
) -> str | None:
    """The template an error log's library exported beside its body (`TEMPLATE_ATTRIBUTES`), cut to
    `MAX_TEMPLATE_CHARS`; None for an event of another kind, with a stack trace (its frames group it), whose
    message is not its body (an exception's message, a structured body's field: `LOG_BODY` is then kept
    beside it, and the template is the body's), with no template that is non-blank text, or whose template is
    its body: the caller formatted the text itself (C#'s `LogError($"... {name}")`, what analyzer CA2254
    warns of, or Serilog's), so the library's template holds the values and names no statement."""
    if kind != "log" or not attributes or (stacktrace and not stacktrace.isspace()) or LOG_BODY in attributes:
        return None
    for key in TEMPLATE_ATTRIBUTES:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            template = value.strip()[:MAX_TEMPLATE_CHARS]
            return None if template == body.strip()[:MAX_TEMPLATE_CHARS] else template
    return None


def template_tokens(template_skeleton: tuple[str, ...]) -> tuple[str, ...] | None:
    """The exact skeleton a logged template, read into `template_skeleton` as a message is, is mined as; None
    when it keeps no word of the statement (only placeholders, or nothing a body would not mask)."""
    if is_exact_skeleton(template_skeleton) or not has_constant_word(template_skeleton):
        return None
    return (EXACT_MARK, TEMPLATE_MARK, *template_skeleton)
