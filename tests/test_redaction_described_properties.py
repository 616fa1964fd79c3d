"""A secret's value a framework's failure message describes under its property's name, as Spring Boot
prints it: `InvalidConfigurationPropertyValueException` (`Property x with value '...' is invalid`), its
analysis (`Invalid value '...' for configuration property 'x'`, and one `- In '<source>' with the value
'...'` line per source), and the binding failure's analysis (`Property: x` then, on the next line,
`Value: "..."`). A property that
names no secret keeps its value."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "Zq9vK2mLp8Rw"
DESCRIBED = (
    # `InvalidConfigurationPropertyValueException`: the name bare, the value quoted
    "Property spring.datasource.password with value '{v}' is invalid: must not be blank",
    "Property spring.datasource.password with value 'it's {v}' is invalid: must not be blank",
    # its failure analysis
    "Invalid value '{v}' for configuration property 'spring.datasource.password' (originating from "
    "'class path resource [application.properties] - 3:28')",
    # the analysis of a property set in several sources: a line for each other source
    "Invalid value 'x{v}' for configuration property 'spring.datasource.password' (originating from "
    "'class path resource [application.properties] - 3:28').\n\nAdditionally, this property is also set in "
    "the following property sources:\n\n\t- In 'systemEnvironment' with the value '{v}'.\n"
    "\t- In 'applicationConfig' with the value 'it's {v}' (originating from 'x - 1:1').\n",
    "Failed to bind properties under 'spring.mail.password' to java.lang.String:\n\n"
    '    Property: spring.mail.password\n    Value: "{v}"\n    Origin: System Environment Property',
    "    Property: app.api-token\n    Value: {v}\n    Origin: class path resource [application.yml] - 3:12",
    "    Property: app.api-token\n    Value: Pw9x {v}\n    Origin: System Environment Property",
    # Spring prints the value unescaped between its quotes: a quoted value runs to the line's last quote
    '    Property: spring.datasource.password\n    Value: "S3cr"{v}"\n    Origin: class path resource',
)
KEPT = (
    "Property server.port with value 'http' is invalid: not a number",
    "Invalid value 'http' for configuration property 'server.port' (originating from 'System Environment')",
    "Invalid value 'x' for configuration property 'server.port' (originating from 'System Environment').\n\n"
    "Additionally, this property is also set in the following property sources:\n\n"
    "\t- In 'systemEnvironment' with the value 'http'.\n",
    '    Property: spring.datasource.url\n    Value: "jdbc:postgresql://db/app"',
    '    Property: spring.mail.password\n    Value: "${MAIL_PASSWORD}"',
)


@pytest.mark.parametrize("text", DESCRIBED)
def test_a_secret_property_a_failure_describes_is_redacted(text: str) -> None:
    out = redact(text.format(v=SECRET))
    assert SECRET not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", KEPT)
def test_a_property_that_is_no_secret_keeps_its_value(text: str) -> None:
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_them() -> None:
    texts = [text.format(v=SECRET) for text in DESCRIBED] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)
