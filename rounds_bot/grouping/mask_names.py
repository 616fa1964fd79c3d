"""Keep rules for the names a runtime's message gives a piece of code, added in `rounds-fp:7` (more of them
in `rounds-fp:8`: `mask_code_names`).

In these messages the quoted word is a name in the code or the schema, fixed per bug: `'NoneType' object
has no attribute 'email'` and `... 'id'` are two bugs. Before, the quoted-value rules
(`mask_rules.quoted_text`) masked it as they mask a value the statement was given, which merged every
such pair into one problem. Each rule keeps the name only after its runtime's exact wording, so a
quoted word anywhere else stays a value (`KeyError: 'alice'`: a key is data), and so do the other
values of the same message (the type in CPython's `'%.100s' object`, PostgreSQL's DETAIL values). The
wordings, from each runtime's source:
- CPython: `'%.100s' object has no attribute '%U'` (Objects/object.c), `module '%U' has no attribute
  '%U'` (Objects/moduleobject.c), `type object '%.100s' has no attribute '%U'` (Objects/typeobject.c);
  `name '%.200s' is not defined` (Python/ceval.c, NAME_ERROR_MSG); `%U() got an unexpected keyword
  argument '%S'` and `%U() missing %i required %s argument%s: %U` (Python/ceval.c, whose
  `format_missing` lists the names as `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`);
- V8 (src/common/message-template.h): `Cannot read properties of % (reading '%')`
  (NonObjectPropertyLoadWithProperty) and `% is not a function` (CalledNonCallable), whose callee is
  the call's expression as the source wrote it (`this.items.map`);
- Ruby's NoMethodError (error.c, vm_eval.c): `undefined method 'name' for nil` since Ruby 3.4,
  `` undefined method `name' for nil:NilClass `` before;
- PostgreSQL (src/backend/utils/errcodes.txt 23505, 42P01): `duplicate key value violates unique
  constraint "%s"` (nbtinsert.c), `relation "%s" does not exist` (namespace.c), unqualified (a schema per
  tenant names the tenant). Its `column "%s" does not exist` (42703) stays a value: a string literal written
  in double quotes is read as a column (`WHERE name = "alice"`), one bug whatever the value.
A name is an identifier of its language (a number read as a property, `(reading '0')`, is an index:
a value); a name that holds a digit is read with its digits as the shape memo reads every message of
its shape, all zero (`shapes`): names that differ in their digits alone (a table's monthly partitions'
constraints) are one name.
"""

from __future__ import annotations

from rounds_bot.grouping.mask_code_names import CODE_NAME_RULES
from rounds_bot.grouping.mask_rule import MaskRule

# a Python identifier (the language reference's, which allows any letter)
_PYTHON = r"'[^\W\d]\w{0,127}+'"
# a JavaScript identifier of ASCII letters, digits, `_` and `$`
_JS = r"[A-Za-z_$][\w$]{0,127}+"
# a Ruby method name: an identifier with its `?`, `!` or `=`, an index or an operator
_RUBY = r"(?:[A-Za-z_]\w{0,127}+[?!=]?|\[\]=?|[-+*/%<>=!~^&|]{1,3}+)"
# a PostgreSQL identifier (NAMEDATALEN - 1 = 63 bytes; `$` allowed after the first character)
_SQL = r"[^\W\d][\w$]{0,62}+"

# where CPython names one attribute, name or keyword argument
_ONE_NAME = (
    r"(?:(?<=has no attribute )|(?<=unexpected keyword argument )"
    # NameError's own message, not another product's `user name 'x' is not defined`
    r"|(?:(?<=^name )|(?<=NameError: name ))(?=" + _PYTHON + " is not defined))"
)
# where it lists the arguments a call missed (`format_missing`: `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`)
_MISSING = (
    r"(?:(?<=required positional argument: )|(?<=required positional arguments: )"
    r"|(?<=required keyword-only argument: )|(?<=required keyword-only arguments: ))"
)

PYTHON_NAME = MaskRule(
    "python_name",
    "Q",
    None,
    f"{_ONE_NAME}{_PYTHON}(?![A-Za-z0-9])"
    f"|{_MISSING}{_PYTHON}(?:, {_PYTHON}){{0,254}}+(?:,? and {_PYTHON})?(?![A-Za-z0-9])",
    "the attribute, name or argument CPython's AttributeError, NameError and TypeError name is the code's "
    "(`has no attribute 'email'`, `name 'usr' is not defined`, `missing 1 required positional argument: "
    "'order_id'`), fixed per bug",
)

V8_NAME = MaskRule(
    "v8_name",
    "QHLU",
    None,
    # a property with a digit is a map's key, data (`(reading 'u_8f3a2c')`: a map keyed by id was undefined)
    r"(?<=\(reading )'[A-Za-z_$][A-Za-z_$]{0,127}+'(?=\))"
    # (a callee starting with `$` is left to the value rules: no character kind starts a match there)
    r"|(?<![\w$.])[A-Za-z_]"
    + _JS[len("[A-Za-z_$]") :]
    + r"(?:\."
    + _JS
    + r"){0,16}+(?= is not a function\b)",
    "the property V8 was reading (`Cannot read properties of undefined (reading 'id')`) and the callee it "
    "could not call (`x.map is not a function`) are the code's",
)

RUBY_METHOD = MaskRule(
    "ruby_method",
    "QG",
    None,
    r"(?<=undefined method )(?:'" + _RUBY + "'|`" + _RUBY + "')(?= for )",
    "the method Ruby's NoMethodError names (`undefined method 'name' for nil`, before Ruby 3.4 "
    "`` undefined method `name' for nil:NilClass ``) is the code's",
)

SQL_NAME = MaskRule(
    "sql_name",
    "Q",
    None,
    r"(?<=violates unique constraint )\"" + _SQL + r"\"(?![A-Za-z0-9])"
    # an unqualified relation only: a schema per tenant (`"acme.orders"`) names the tenant; and no column,
    # which a literal in double quotes becomes (`WHERE name = "alice"`: `column "alice" does not exist`)
    r"|(?<=\brelation )\"" + _SQL + r"\"(?= does not exist)",
    "the constraint or relation PostgreSQL names (`violates unique constraint "
    '"users_email_key"`, `relation "orders" does not exist`) is the schema\'s',
)

#: the keep rules of code names `rounds-fp:7` added
SEVENTH_NAME_RULES = (PYTHON_NAME, V8_NAME, RUBY_METHOD, SQL_NAME)
#: the keep rules of code names, those `rounds-fp:8` added last (`mask_code_names`), in the order
#: `mask_rules.RULES` lists them
NAME_RULES = (*SEVENTH_NAME_RULES, *CODE_NAME_RULES)
