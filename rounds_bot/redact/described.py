"""Secrets a framework's failure message describes under their property's name, the name and the value
apart, as Spring Boot writes them (spring-boot's `InvalidConfigurationPropertyValueException`, its
`InvalidConfigurationPropertyValueFailureAnalyzer` and `BindFailureAnalyzer`):

    Property spring.datasource.password with value '...' is invalid: ...
    Invalid value '...' for configuration property 'spring.datasource.password' (originating from ...)
    Additionally, this property is also set in the following property sources:
        - In 'systemEnvironment' with the value '...'.
    Property: spring.mail.password
        Value: "..."

The value is written as it is, in quotes that do not escape a quote inside it (`with value 'it's ...'`), so
a quoted value runs to the quote the message's own words follow. The name is a secret's as
`keys.secret_category` reads it; a placeholder (`${MAIL_PASSWORD}`) stays.
"""

from __future__ import annotations

import re

from rounds_bot.redact.keys import secret_category
from rounds_bot.redact.pair_values import _accept_named, _placeholder
from rounds_bot.redact.rule import Rule, rule

#: a property's name as Spring Boot writes it: dotted, dashed, indexed (`app.keys[0]`)
_KEY = r"(?P<key>[A-Za-z_][\w.\[\]-]{0,120}+)"


def _quoted_until(words: str) -> str:
    """A value in single quotes up to the quote `words` follow, or else the line's last quote."""
    return r"'(?P<value>[^\n]{1,500}?)'(?=" + words + r"|[^'\n]{0,500}$)"


#: `InvalidConfigurationPropertyValueException`'s message (the name bare; quoted too, as some logs print it)
_WITH_VALUE = (
    r"(?m)\bProperty[ \t]'?" + _KEY + r"'?[ \t]with[ \t]value[ \t]" + _quoted_until(r"[ \t]is[ \t]invalid")
)
#: the failure analysis' first line
_INVALID_VALUE = (
    r"(?m)\bInvalid[ \t]value[ \t]"
    + _quoted_until(r"[ \t]for[ \t]configuration[ \t]property")
    + r"[ \t]for[ \t]configuration[ \t]property[ \t]'"
    + _KEY
    + "'"
)
#: the analysis' line for each other source the property is set in (the property named lines before)
_IN_SOURCE = r"(?m)\bIn[ \t]'[^'\n]{1,200}'[ \t]with[ \t]the[ \t]value[ \t]" + _quoted_until(
    r"[ \t]\(originating|\.[ \t]{0,10}\r?$"
)
#: the property an analysis names, looked for before each source's line, within reach
_NAMED_PROPERTY = re.compile(r"\bproperty[ \t]'" + _KEY + "'")
_REACH = 3000
#: the binding failure's analysis: `Property: <name>`, then `Value: <value>` on the next line (quoted since
#: Spring Boot 2.5, unescaped, so to the line's last quote: `"it"s"`; bare before: then to the line's end,
#: blanks inside it kept)
_VALUE_LINE = (
    r"(?m)\bProperty:[ \t]" + _KEY + r"[ \t]{0,10}\r?\n[ \t]{0,20}Value:[ \t]"
    r"""(?P<value>"[^\n]{0,500}"(?=[^"\n]{0,500}$)|[^\s"](?:[^\n"]{0,498}[^\s"])?)"""
)


def _in_source(match: re.Match[str]) -> bool:
    """A source's value of the property the analysis named last before it, a secret's."""
    start = match.start()
    named = match.string.rfind("property '", max(0, start - _REACH), start)
    found = _NAMED_PROPERTY.match(match.string, named) if named >= 0 else None
    if found is None or secret_category(found.group("key")) is None:
        return False
    return not _placeholder(match.group("value").strip())


DESCRIBED: tuple[Rule, ...] = (
    rule("key_value_secret", _WITH_VALUE, "with value", group=2, accept=_accept_named),
    rule("key_value_secret", _INVALID_VALUE, "invalid value", group=1, accept=_accept_named),
    rule("key_value_secret", _IN_SOURCE, "with the value", group=1, accept=_in_source),
    rule("key_value_secret", _VALUE_LINE, "value:", group=2, accept=_accept_named),
)
