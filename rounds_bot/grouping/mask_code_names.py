"""Keep rules for more names a runtime's message gives a piece of code, added in `rounds-fp:8`.

As in `mask_names` (`rounds-fp:7`), each rule keeps a quoted name only after its runtime's exact wording,
so the same quoted word anywhere else stays a value. The wordings, from each runtime's source:
- CPython: `No module named '%U'` (Lib/importlib/_bootstrap.py, `_ERR_MSG_PREFIX` and the name's `repr`;
  Python/import.c), `cannot import name %R from %R (%S)` and `... from partially initialized module %R
  (most likely due to a circular import) (%S)` (Python/ceval.c, `import_from`): the module and the name
  are the code's; the file after them is a path, masked;
- Node: `Cannot find module '%s'` (lib/internal/modules/cjs/loader.js) and ESM's `Cannot find package
  '%s' imported from %s` / `Cannot find module ...` (lib/internal/errors.js, ERR_MODULE_NOT_FOUND): a
  package (`lodash`, `@scope/pkg/sub`) or a relative specifier (`./routes/admin`); an absolute path names
  where a release was deployed, and stays masked;
- PHP: `Class "%s" not found` since PHP 8, `Class '%s' not found` before, and the same for an interface,
  a trait and an enum (Zend/zend_execute_API.c, `zend_fetch_class`);
- .NET (System.Private.CoreLib's Strings.resx): `(Parameter '{0}')` (Arg_ParamName_Name, an
  `ArgumentException`'s `ParamName`, `nameof` a parameter), `Method not found: '{0}'.` (MissingMethod_Name,
  the method's signature) and `Could not load file or assembly '{0}'` (IO_FileLoad, IO_FileNotFound_FileName),
  whose assembly's simple name is kept, its version and public key token masked after it. The key of
  `The given key '{0}' was not present in the dictionary.` is data, like CPython's `KeyError`;
- SQL engines' missing table or column. A qualifier before a table (`db.` or `schema.`) stays masked
  (`MaskRule.masked`): a database or schema per tenant names the tenant. A column is kept only where a
  value concatenated into the statement cannot stand: MySQL's `Unknown column '%s' in '%s'`
  (ER_BAD_FIELD_ERROR, share/messages_to_clients.txt, was errmsg-utf8.txt) in a select list, a join's
  condition, an ORDER BY or a GROUP BY (`'field list'`, `'on clause'`, `'order clause'`, `'group
  statement'`), kept with its clause; in `'where clause'` it is as often a value written without quotes
  (`WHERE name = alice`), data. SQLite's `no such column: %s` is such a value too, as is SQL Server's
  `Invalid column name '%.*ls'.` (error 207), and PostgreSQL's. Tables: MySQL's `Table '%s.%s' doesn't
  exist` (ER_NO_SUCH_TABLE), SQL Server's `Invalid object name '%.*ls'.` (error 208), SQLite's `no such
  table: %s` (src/build.c, `sqlite3LocateTable`), unquoted, so kept only when it is a plain identifier
  with no digest or long number in it (an address or a hash there stays masked as it was), and
  PostgreSQL's `relation "%s.%s" does not exist` (its unqualified form is `mask_names.SQL_NAME`'s);
- graphql-js's validation rules: `Cannot query field "%s" on type "%s".` (FieldsOnCorrectTypeRule) and
  `Unknown argument "%s" on field "%s.%s".` / `... on directive "@%s".` (KnownArgumentNamesRule): the
  query's field and argument, and the schema's type, are the code's; a suggestion after them is masked.
A batch's variability rule finds these names in a skeleton (`variability`), where a masked qualifier is a
parameter of its own (`<*> .orders'`, `shapes`): each qualified pattern reads that form as well.
"""

from __future__ import annotations

from rounds_bot.grouping.mask_rule import MaskRule

# a Python identifier, and a dotted module name of them
_PY = r"[^\W\d]\w{0,127}+"
_MODULE = _PY + r"(?:\." + _PY + r"){0,16}+"
# an npm package name, with its scope and a path inside it, or a relative specifier
_NODE = r"(?:\.{1,2}/|@[\w.-]{1,214}+/)?[\w.-]{1,214}+(?:/[\w.@-]{1,214}+){0,32}+"
# a PHP class name, qualified by its namespace
_PHP = r"\\?[A-Za-z_]\w{0,127}+(?:\\[A-Za-z_]\w{0,127}+){0,16}+"
# a C# identifier
_CS = r"[A-Za-z_]\w{0,127}+"
# an SQL identifier (MySQL's 64 characters, SQL Server's 128), and its qualifier before a `.`: quoted, or
# as a skeleton reads it once masked
_SQL = r"[^\W\d][\w$]{0,127}+"
# SQLite's unquoted table name, kept: an ASCII identifier (SQL-92's regular identifier), up to 3 dotted,
# followed by a space, a punctuation mark or the end (not `@`: an address), and holding no run of 16 hex
# characters (a digest) or 5 digits (an id), which the rules after it mask as before
_SQLITE_TABLE = (
    r"(?![\w.]{0,400}?(?:[0-9a-fA-F]{16}|\d{5}))"
    r"[A-Za-z_]\w{0,127}+(?:\.[A-Za-z_]\w{0,127}+){0,2}+(?=[\s,;:)\]'\"]|$)"
)
#: the clauses of MySQL's `Unknown column` where no value can stand
_COLUMN_CLAUSES = r"'(?:field list|on clause|order clause|group statement)'"
# a GraphQL Name (the spec's `/[_A-Za-z][_0-9A-Za-z]*/`)
_GQL = r"[_A-Za-z]\w{0,127}+"


def _qualified(quote: str) -> str:
    """A table after its qualifier, quoted with `quote`: the qualifier as written (`'shop.orders'`) or as
    the skeleton reads it, masked (`<*> .orders'`)."""
    return f"(?:{quote}{_SQL}(?:\\.{_SQL}){{0,2}}|<\\*> )\\.{_SQL}{quote}"


#: the qualifier a qualified name's rule masks: all that is before its last `.`
_QUALIFIER = (
    r"(?<=['\"])[^'\"]{1,400}?(?=\.[^.'\"]{1,128}['\"]$)"
    r"|(?<=no such table: )[^\s.]{1,128}?(?=\.[^.\s]{1,128}$)"
)

PYTHON_IMPORT = MaskRule(
    "python_import",
    "Q",
    None,
    r"(?<=No module named )'" + _MODULE + r"'(?![\w'])"
    r"|(?<=cannot import name )'" + _PY + r"' from (?:partially initialized module )?'" + _MODULE + "'",
    "the module CPython could not import (`No module named 'yaml'`) and the name it could not import "
    "from one (`cannot import name 'foo' from 'app.utils'`) are the code's",
)

NODE_MODULE = MaskRule(
    "node_module",
    "Q",
    None,
    r"(?:(?<=Cannot find module )|(?<=Cannot find package ))'" + _NODE + r"'(?![\w'])",
    "the package or relative module Node could not resolve (`Cannot find module 'lodash'`, "
    "`... './routes/admin'`) is the code's",
)

PHP_CLASS = MaskRule(
    "php_class",
    "Q",
    None,
    r"(?:(?<=Class )|(?<=Interface )|(?<=Trait )|(?<=Enum ))"
    r"(?:\"" + _PHP + r"\"|'" + _PHP + r"')(?= not found)",
    'the class PHP could not load (`Class "App\\Services\\Mailer" not found`) is the code\'s',
)

DOTNET_NAME = MaskRule(
    "dotnet_name",
    "Q",
    None,
    r"(?<=\(Parameter )'" + _CS + r"'(?=\))"
    r"|(?<=Method not found: )'" + _CS + r"[\w.,<>\[\]`&*() +]{0,512}+'(?=\.?(?:\s|$))"
    # the assembly's simple name: its version and public key token after it are masked as such
    r"|(?<=Could not load file or assembly )'" + _CS + r"(?:\.[A-Za-z_]\w{0,127}+){0,16}+(?=[,'])",
    "the parameter an `ArgumentException` names (`(Parameter 'order')`), the method .NET could not find and "
    "the assembly it could not load are the code's",
)

SQL_TABLE = MaskRule(
    "sql_table",
    "QHL",
    "str",
    r"(?<=Unknown column )'"
    + _SQL
    + r"(?:\."
    + _SQL
    + r")?' in "
    + _COLUMN_CLAUSES
    + r"|(?<=Table )"
    + _qualified("'")
    + r"(?= doesn't exist)"
    r"|(?<=Invalid object name )(?:" + _qualified("'") + "|'" + _SQL + r"')(?=\.)"
    r"|(?<=\brelation )" + _qualified('"') + r"(?= does not exist)"
    r"|(?<=no such table: )(?:<\*> \.)?" + _SQLITE_TABLE,
    "the table or column an SQL engine could not find (MySQL's `Unknown column 'totl' in 'field list'`, "
    "`Table 'shop.ordrs' doesn't exist`, SQL Server's `Invalid object name 'dbo.Orders'.`, SQLite's `no such "
    "table: orders`) is the schema's; a table's qualifier may name a tenant, and is masked",
    masked=_QUALIFIER,
)

GRAPHQL_NAME = MaskRule(
    "graphql_name",
    "Q",
    None,
    r"(?<=Cannot query field )\"" + _GQL + r"\" on type \"" + _GQL + r"\"(?=\.)"
    r"|(?<=Unknown argument )\""
    + _GQL
    + r"\" on (?:field \""
    + _GQL
    + r"\."
    + _GQL
    + r"\"|directive \"@"
    + _GQL
    + r"\")(?=\.)",
    'the field, argument and type graphql-js\'s validation names (`Cannot query field "emial" on type '
    "\"User\".`) are the query's and the schema's",
)

#: a literal part of every wording above: a message that holds none has no name these rules keep, and is
#: looked at no further
CODE_NAME_WORDS = (
    "No module named ",
    "cannot import name ",
    "Cannot find ",
    " not found",
    "(Parameter ",
    "Could not load file or assembly ",
    "Unknown column ",
    " doesn't exist",
    "Invalid object name ",
    " does not exist",
    "no such table: ",
    "Cannot query field ",
    "Unknown argument ",
)

#: the keep rules of code names `rounds-fp:8` adds, in the order `mask_rules.RULES` lists them
CODE_NAME_RULES = (PYTHON_IMPORT, NODE_MODULE, PHP_CLASS, DOTNET_NAME, SQL_TABLE, GRAPHQL_NAME)
