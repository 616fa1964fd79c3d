"""Passwords a file or a string holds by its layout, not after a `name=value` pair, each layout as its
format's own documentation gives it:

    user:password@tcp(host:3306)/db              the Go MySQL driver's DSN (go-sql-driver/mysql, "DSN")
    <property name="...password">...</property>  an XML element named by its `name` or `key` attribute:
                                                 Hibernate's configuration, `java.util.Properties` in XML,
                                                 .NET's `<setting><value>` (not Android's `<string>`: text
                                                 the UI shows; nor its `<dimen>`, `<integer>`, `<bool>`,
                                                 `<color>`, `<fraction>`, `<item type=...>` holding what
                                                 their type holds: `16dp`, `true`, `#FF0000`, `@dimen/x`)
    <name>...secret.key</name><value>...</value>  a name element before a value element: Hadoop's
                                                 `*-site.xml`, a servlet's `web.xml` (`<param-name>`)
    ["password"]=> string(12) "..."              PHP's `var_dump` of an array or an object

A name is a secret's as `keys.secret_category` reads it; a placeholder (`${DB_PASSWORD}`, `*`), a resource's
reference (`@string/db_password`) and a number (`<entry key="password.expiry.days">90</entry>`) stay.
Applied after `pairs.py`: a value a pair names is counted under its name, as before; but `var_dump`'s
`DUMPS` before it, whose pair rules would read its `string` as the value.
"""

from __future__ import annotations

import re

from rounds_bot.redact.pair_values import _accept_named
from rounds_bot.redact.rule import Rule, rule

#: the driver's `[username[:password]@][protocol[(address)]]/dbname`: the password holds no `@` here, as the
#: user name holds no `:`; the protocols are the driver's (`tcp`, `tcp6`, `unix`, and Cloud SQL's)
_GO_MYSQL = (
    r"(?<![^\s\"'`=(,;])[^\s:@/\"'`]{1,64}:([^\s@\"'`]{1,200}+)@(?:tcp6?|unix|udp|cloudsql(?:-mysql)?)\("
)

#: `<tag ... name="key" ...>value</tag>`, and .NET's `<setting name="key"><value>value</value></setting>`
#: (not Android's `<string>`: text the UI shows)
_NAMED_ELEMENT = (
    r"<(?!string[ \t>])(?P<tag>[A-Za-z][\w:.-]{0,40}+)[ \t](?P<attributes>[^<>\n]{0,200}?)"
    r"(?<![\w-])(?:name|key)=[\"']"
    r"(?P<key>[\w.:-]{1,80})[\"'](?P<more>[^<>\n]{0,200})>\s{0,40}(?:<value>\s{0,40})?"
    r"(?P<value>[^\s<>]{1,500})\s{0,40}(?:</value>\s{0,40})?</(?P=tag)>"
)
#: `<name>key</name>` then `<value>value</value>` (Hadoop), `<param-name>` then `<param-value>` (`web.xml`)
_NAME_THEN_VALUE = (
    r"<(?P<name>(?:param-)?name)>\s{0,40}(?P<key>[\w.:-]{1,80})\s{0,40}</(?P=name)>\s{0,80}"
    r"<(?:param-)?value>\s{0,40}(?P<value>[^\s<>]{1,500})\s{0,40}</(?:param-)?value>"
)
#: `["key"]=>` (a private or protected member: `["key":"Class":private]=>`, its class's name maybe redacted as
#: a JSON pair's value before), then `string(N) "value"`
_VAR_DUMP = (
    r"\[\"(?P<key>[^\"\n]{1,80})\"(?::[^\n]{1,120}?)?\]=>\s{0,40}string\(\d{1,9}\)[ \t]"
    r"\"(?P<value>[^\"\n]{1,500})\""
)


#: what an XML element's value is when it is no secret: a number (a lifetime, a count of days) or a
#: reference to a resource (Android's `@string/...`, `@null`)
_NOT_A_SECRET = re.compile(r"\d{1,20}|@[\w/+.:-]{1,200}")


#: what Android's value resources hold, by their tag (Android's "More resource types": a dimension with its
#: unit, an integer, a boolean, a colour `#RGB`..`#AARRGGBB`, a fraction `50%`/`50%p`), or a reference to
#: another resource or to a theme's attribute (`@dimen/...`, `?attr/...`); named after the field they size
#: or colour (`<dimen name="password_padding">16dp</dimen>`), they are no secret
_ANDROID_VALUES = {
    "dimen": re.compile(r"-?\d{1,9}(?:\.\d{1,9})?(?:dp|dip|sp|pt|px|mm|in)"),
    "integer": re.compile(r"-?\d{1,20}"),
    "bool": re.compile(r"true|false"),
    "color": re.compile(r"#(?:[0-9A-Fa-f]{3,4}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})"),
    "fraction": re.compile(r"-?\d{1,9}(?:\.\d{1,9})?%p?"),
}
_RESOURCE_REFERENCE = re.compile(r"[@?](?:[\w.]{1,100}:)?[\w]{1,40}/[\w.]{1,200}")
#: `<item type="dimen">`: Android's resource of a type its `type` attribute names
_ITEM_TYPE = re.compile(r"""(?<![\w-])type=["'](?P<type>\w{1,20})["']""")


def _android_value(match: re.Match[str]) -> bool:
    """An Android value resource holding what its type holds (`<dimen>` a dimension, `<item type="bool">`
    a boolean): `<item>` only with its `type`, and any other value (`<color name="secret">S3cr...`) no
    such resource's."""
    tag, value = match.groupdict().get("tag"), match.group("value")  # a Hadoop pair has no tag
    if tag is None:
        return False
    if tag == "item":
        typed = _ITEM_TYPE.search(match.group("attributes") + " " + match.group("more"))
        if typed is None:
            return False
        tag = typed.group("type")
    shape = _ANDROID_VALUES.get(tag)
    if shape is None:
        return False
    return shape.fullmatch(value) is not None or _RESOURCE_REFERENCE.fullmatch(value) is not None


def _element(match: re.Match[str]) -> bool:
    """A value named a secret's, not a number nor a resource's reference (`@string/db_password`), nor an
    Android value resource's value."""
    if _NOT_A_SECRET.fullmatch(match.group("value")) is not None or _android_value(match):
        return False
    return _accept_named(match)


#: PHP's `var_dump`, applied before `pairs.py`: on one line a pair rule reads `["password"]=> string` as a
#: name and its value
DUMPS: tuple[Rule, ...] = (rule("key_value_secret", _VAR_DUMP, "]=>", group=2, accept=_accept_named),)
LAYOUTS: tuple[Rule, ...] = (
    rule("password", _GO_MYSQL, "@tcp(", "@tcp6(", "@unix(", "@udp(", "@cloudsql", group=1),
    rule("key_value_secret", _NAMED_ELEMENT, "name=", "key=", group=5, accept=_element),
    rule("key_value_secret", _NAME_THEN_VALUE, "name>", group=3, accept=_element),
)
