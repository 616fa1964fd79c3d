"""Passwords written as a literal argument of a call, as a traceback prints the line that failed: by the
argument's place in the call's documented signature, or by the setter named after them.

    server.login(user, password)                 Python's `smtplib`, `ftplib`, `imaplib`; the mongo
                                                 shell's `db.auth`; superagent's `.auth`; python-ldap's
                                                 `simple_bind_s` (`login` and `auth`: a user's literal
                                                 before it, or a password no lower-case word)
    req.SetBasicAuth(username, password)         Go's `net/http`
    HTTPBasicAuth(username, password)            requests' (`HTTPDigestAuth`, `HTTPProxyAuth`), aiohttp's and
                                                 httpx' `BasicAuth`, pika's `PlainCredentials`, Apache
                                                 HttpClient's `UsernamePasswordCredentials`, `java.net`'s
                                                 `PasswordAuthentication`; requests' `auth=(user, password)`,
                                                 Elasticsearch's `basic_auth=(...)`, `http_auth=(...)`
    getConnection(url, user, password)           `java.sql.DriverManager`
    mysqli_connect(host, user, password, db)     PHP's `mysqli` (`new mysqli`), `new PDO(dsn, user,
                                                 password)`, `ldap_bind(link, dn, password)`; Sequelize's
                                                 `new Sequelize(database, username, password)`
    factory.setPassword("...")                   a setter or a builder's `with...` named exactly after a
                                                 secret (`withApiKey`; not `setPasswordStrength`)

Only a quoted literal in the password's place is taken: a variable or an expression there is no secret,
and a placeholder (`""`, `${...}`) stays. A password with a blank in it is not read (a title's words are).
"""

from __future__ import annotations

import re

from rounds_bot.redact.pair_values import _accept_named, _placeholder
from rounds_bot.redact.rule import Rule, rule

#: an argument before the password: a quoted string or a bare expression (a name, `$this->user`,
#: `self.user`, `os.environ['X']`), with the blanks and the comma after it
_ARG = r"""[ \t]{0,10}(?:"[^"\n]{0,200}"|'[^'\n]{0,200}'|[\w.$>\[\]'"-]{1,100}+)[ \t]{0,10},"""
#: the password: a quoted literal, then the end of the argument (or Java's `.toCharArray()`)
_LITERAL = r"""[ \t]{0,10}(?P<q>["'])(?P<value>[^\s"'\\]{1,200})(?P=q)(?=[ \t]{0,10}[,)]|\.toCharArray\(\))"""

#: the calls whose second argument is the password
_SECOND = (
    r"(?:\.(?:simple_bind_s|simple_bind|bind_s)|\bSetBasicAuth|\b(?:HTTP(?:Basic|Digest|Proxy)Auth"
    r"|BasicAuth|DigestAuth|PlainCredentials|UsernamePasswordCredentials|PasswordAuthentication)"
    r"|(?<!\w)(?:basic_|http_)?auth[ \t]{0,3}=[ \t]{0,3})\("
)
#: a `login` or an `auth` method and its first argument: many take no password second (Django's
#: `auth.login(request, user)`, Flask-Login's, Passport's `app.auth(strategy, 'google')`)
_LOGIN = (
    r"""\.(?:login|auth)\([ \t]{0,10}"""
    r"""(?P<first>"[^"\n]{0,200}"|'[^'\n]{0,200}'|[\w.$>\[\]'"-]{1,100}+)[ \t]{0,10},"""
)
#: a word of lower-case letters alone (`'default'`, `'google'`): a backend's or a strategy's name
_LOWER_WORD = re.compile(r"[a-z]{1,40}")
#: an authentication mechanism's name, as a driver's `auth(mechanism, name)` takes it: IANA's "SASL
#: Mechanisms" registry (RFC 4422: `SCRAM-SHA-256`, `PLAIN`, `GSSAPI`) and MongoDB's (`MONGODB-X509`)
_MECHANISM = re.compile(
    r"(?:SCRAM-SHA-(?:1|224|256|384|512)(?:-PLUS)?|PLAIN|LOGIN|GSSAPI|GS2-KRB5(?:-PLUS)?|EXTERNAL|ANONYMOUS"
    r"|CRAM-MD5|DIGEST-MD5|NTLM|OAUTHBEARER|XOAUTH2?|MONGODB-(?:X509|AWS|CR|OIDC))"
)
#: the calls whose third argument is the password
_THIRD = r"(?:\bgetConnection|\bmysqli?_connect|\bldap_bind|\bnew[ \t]+(?:mysqli|PDO|Sequelize))\("
#: a setter or a builder's method named exactly after what it sets (`setPassword`, `withClientSecret`): a
#: longer name sets something about it (`setPasswordStrength`, `setApiKeyHeader`, `withSecretId`)
_SETTER = (
    r"""\.(?:set|with)(?P<key>Password|Secret|ClientSecret|ApiKey|Token|AccessToken|SecretKey)\([ \t]{0,10}"""
    r"""(?P<q>["'])(?P<value>[^\s"'\\]{1,200})(?P=q)[ \t]{0,10}\)"""
)


def _literal(match: re.Match[str]) -> bool:
    """A password written out, not a placeholder (`${SMTP_PASSWORD}`, `***`)."""
    return not _placeholder(match.group("value"))


def _login_password(match: re.Match[str]) -> bool:
    """Two literals (`smtp.login("me@acme.com", "...")`), or a name then a literal no lower-case word, nor
    an authentication mechanism's name (`client.auth(mech, 'SCRAM-SHA-256')`)."""
    first = match.group("first")
    quoted = len(first) > 1 and first[0] in "\"'" and first[-1] == first[0]
    value = match.group("value")
    if _MECHANISM.fullmatch(value):
        return False
    return _literal(match) and (quoted or _LOWER_WORD.fullmatch(value) is None)


CALLS: tuple[Rule, ...] = (
    rule("password", _LOGIN + _LITERAL, ".login(", ".auth(", group=3, accept=_login_password),
    rule(
        "password",
        _SECOND + _ARG + _LITERAL,
        *("bind_s(", ".simple_bind(", "setbasicauth(", "auth(", "credentials(", "authentication("),
        *("auth=", "auth =", "auth  =", "auth   =", "auth\t"),
        group=2,
        accept=_literal,
    ),
    rule(
        "password",
        _THIRD + _ARG + _ARG + _LITERAL,
        *("getconnection(", "_connect(", "ldap_bind(", "mysqli(", "pdo(", "sequelize("),
        group=2,
        accept=_literal,
    ),
    rule("password", _SETTER, ".set", ".with", group=3, accept=_accept_named),
)
