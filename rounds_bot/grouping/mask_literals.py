"""Masking rules for literals a runtime prints into a message, added in `rounds-fp:6`.

Each is a value written in a format its runtime documents, whose words and length vary between
occurrences of one statement; before, each occurrence kept its own words and so its own template:
- a request target of one segment with its query (`/search?q=shoes&page=2`): the query is the
  request's data (RFC 3986 section 3.4), as a path of two segments already is (`mask_rules.path`);
- a Python bytes literal as `repr` writes one (`b'\\xff\\xfe'`, `b"it's"`: the Python Language
  Reference, "String and Bytes literals"; `bytes.__repr__` escapes a byte outside printable ASCII as
  `\\xhh`), the same value as a quoted string (`mask_rules.quoted_text`);
- a Ruby object as `inspect` writes it: `Object#inspect`'s `#<Order:0x000055d5c6a3b2f8 @id=12>`
  (its class, its address and its instance variables, each inspected) and ActiveRecord's
  `#<User id: 5, email: "a@b.c">` (its attributes): the class stays, what it holds is one value;
- a string quoted with escapes, as Go's `%q` (`strconv.Quote`) and JSON write one
  (`parsing "say \\"hi there\\"": invalid syntax`): the escaped quote does not end it.
Neither Sentry's parameterisation (`sentry/grouping/parameterization.py`: quoted strings only after
`=`, URLs only with a scheme) nor Drain3's default masking (ids, IPs, hex, numbers) masks these, and
Drain's parse tree takes a token for a parameter only when it holds a digit, as `skeletons` does.
"""

from __future__ import annotations

from rounds_bot.grouping.mask_rule import MaskRule

#: the methods a request line starts with: a quoted request line is not data (see `quoted_text`)
_METHODS = r"(?:GET|HEAD|POST|PUT|DELETE|CONNECT|OPTIONS|TRACE|PATCH) "
# a quoted string with one escape at least: runs without quote, backslash or line end, and escapes
_ESCAPED = r"(?:[^{q}\\\n]{{0,512}}+\\.){{1,64}}+[^{q}\\\n]{{0,512}}+"
# a Ruby class name: `User`, `ActiveRecord::Relation`
_RUBY_CLASS = r"#<[A-Z]\w{0,63}+(?:::[A-Z]\w{0,63}+){0,8}+"

BYTES_LITERAL = MaskRule(
    "bytes_literal",
    "H",
    "str",
    # (`b` and a quote first: most words that start with a `b` end there, before any lookbehind is tried)
    r"(?=b['\"])(?<![\w.])(?<!\d{3}, )(?!\Ab(?:'[^'\n]{0,512}+'|\"[^\"\n]{0,512}+\")\Z)"
    r"b(?:'(?:[^'\\\n]|\\.){0,512}+'|\"(?:[^\"\\\n]|\\.){0,512}+\")(?![A-Za-z0-9])",
    "a Python bytes literal as `repr` writes it (`b'\\xff\\xfe'`, `b\"it's\"`) is data, as a quoted string "
    "is; not smtplib's reply after its code (`(421, b'4.7.0 Service not available')`: it names the "
    "failure) nor a whole message (a `KeyError`'s is its key)",
)

QUERY_PATH = MaskRule(
    "query_path",
    "S",
    "path",
    r"(?<![\w/.~-])/[\w.@%+~,*=-]{0,255}+\?[\w.~%!$&*+,;=:@/?-]{0,1999}[\w~%$&*+=/-]",
    "a request target of one segment with its query (`/search?q=shoes&page=2`, RFC 3986 section 3.4): "
    "the query is the request's data, as a path of two segments is",
)

RUBY_OBJECT = MaskRule(
    "ruby_object",
    "N",
    "data",
    _RUBY_CLASS + r"(?::\d[xX][0-9a-fA-F]{1,16}+(?: (?=[^>\n]))?| (?=[^>\n]))"
    r"(?:[^<>\n]|<[^<>\n]{0,256}+>){0,1024}+>",
    "a Ruby object as `inspect` writes it (`#<Order:0x000055d5c6a3b2f8 @id=12>`, ActiveRecord's "
    '`#<User id: 5, email: "a@b.c">`): what it holds is one value, however many attributes it shows',
    kept=_RUBY_CLASS + "(?: |:)",
)

QUOTED_ESCAPED = MaskRule(
    "quoted_escaped",
    "Q",
    "str",
    r"(?<![A-Za-z0-9])(?<!panicked at )(?!\A(?:\"[^\"\n]{0,512}+\"|'[^'\n]{0,512}+')\Z)"
    r"(?:\"(?!" + _METHODS + ")" + _ESCAPED.format(q='"') + r"\"|'" + _ESCAPED.format(q="'") + r"')"
    r"(?![A-Za-z0-9])",
    'a quoted string with escaped quotes in it (Go\'s `%q`, JSON: `"say \\"hi\\""`) ends at its last '
    "quote, not at the first escaped one",
)
