"""Secrets found by what names them: `password=...`, `Authorization: Basic ...`, `Cookie: ...`,
`postgres://user:pass@host`, `ALTER USER ... WITH PASSWORD '...'`.

A `name=value` pair is a secret when its name is one (`keys.secret_category`: Sentry's default scrubbing
list, the words gitleaks' generic rule looks for, and their spellings). Its value is replaced, its name kept.
The same holds in the other shapes code and configuration give a name and its value, those gitleaks samples
its rules in: a typed declaration (`var apiToken string = ...`), every assignment operator (`:=`, `::=`,
`.=`, `??=`, `+=`, `=>`), an XML element or attribute, a JSON name/value pair, a YAML block scalar, a
property set in a call, a CSV row.
After a name and a colon and a space, a value is only taken when it looks like a credential, not prose;
those tests, and the ones each rule below passes its match to, are in `pair_values.py`.
"""

from __future__ import annotations

import re

from rounds_bot.redact.arguments import ARGUMENT, SAME_COMMAND
from rounds_bot.redact.keys import REFUSED_NAME_ENDINGS, SECRET_NAME_WORDS
from rounds_bot.redact.pair_values import (
    _accept_basic,
    _accept_bearer,
    _accept_block,
    _accept_listed,
    _accept_named,
    _accept_pair,
    _accept_prose,
    _code_like,
    _has_pair,
    _next_line_value,
    _placeholder,
    _prose_like,
    _reset_token,
    _token_like,
)
from rounds_bot.redact.rule import Rule, rule

# A name is read possessively (`{0,60}+`): no character that can follow it (a quote, a separator, a space)
# can be part of it, so giving characters back could never make a match; not trying saves most of the time.
_PAIR_BODY = (
    r"""["']?(?P<key>[A-Za-z_$@][\w.$@-]{0,60}+)["']?\]?"""
    # a declared type between the name and the value: `var apiToken string = ...` (Go), `apiToken: String =`
    # (Kotlin, Swift, TypeScript), `api_token: &str =` (Rust)
    r"""(?:[ \t]{0,3}:?[ \t]{0,3}"""
    r"""(?:string|String|str|bytes|&str|&'static[ \t]str|\[\]byte|CharSequence|SecureString)\??)?"""
    # every language's assignments (`::=`, `.=`, `??=`, `+=`), blanks aligning a column (MySQL's option
    # files); `%3D`, `%3A`: in a percent-encoded URL; Erlang's binary (`=> <<"...">>`): the string inside
    r"""(?P<sep>[ \t]{0,40}(?:=>|:{1,3}=|\?\?=|\?=|\+=|\.=|=|:|%3[Dd]|%3[Aa])[ \t]{0,40}"""
    r"""(?:<<(?="[^"\n]{0,500}">>))?)"""
    # the value is read ahead, not consumed: when the pair is not a secret (`"msg": "..."`), the scan goes
    # on inside its value, where a secret's own pair may stand (`"msg": "login password=..."`); a value in
    # escaped quotes (`token=\"...\"`, inside a quoted string) is read whole
    # (a Python literal's prefix, `b'...'`, is no bare value: `literals.py` reads the literal);
    r"""(?=(?P<value>\\"(?:[^"\\\n]){1,500}\\"|\\'(?:[^'\\\n]){1,500}\\'"""
    r"""|"(?:[^"\\\n]|\\.){1,500}"|'(?:[^'\\\n]|\\.){1,500}'|`[^`\n]{1,500}`"""
    # nor a compiled pattern (`re.compile(r'password')`, Java's `Pattern.compile`): a call, code
    r"""|(?!(?i:[rbuf]|br|rb|fr|rf)["'])(?![A-Za-z_][\w.]{0,60}\.compile\()[^\s,;&"'`<>{}()\[\]|]{1,500}))"""
)
_PAIR = re.compile(r"""(?:(?<![\w.-])|(?<=%3[Ff])|(?<=%26))""" + _PAIR_BODY)
#: a pair behind a command line's `-D` (a Java system property) or `--`, or a cookie named with a leading dot
_PREFIXED_PAIR = re.compile(r"""(?:(?<=[\s"'`\[({<,=;])|\A)(?:-D|--|\.)""" + _PAIR_BODY)
_FLAG = re.compile(
    r"""(?i)(?<![\w-])--?(?:password|passwd|pass|token|secret|api-key|apikey|auth-token|access-token"""
    # OAuth clients', the AWS CLI's, MinIO's and `az storage`'s secrets (not a switch: `--ask-vault-password`)
    r"""|(?:client|api|app|consumer|webhook)[-_]secret|(?:aws[-_])?secret[-_](?:access[-_])?key|account[-_]key"""
    # keytool's and jarsigner's store and key passwords (`-storepass`, `-srckeypass`, `-deststorepass`)
    r"""|(?:src|dest)?(?:store|key)pass"""
    # OpenSSL's pre-shared key, in hex (`openssl s_client -psk`; its `-psk_identity` is the key's name)
    r"""|psk)"""
    # the value after a space, or an argument list's next item (`Command '['mysql', '--password', '...']'`)
    r"""(?:=|[ \t]{1,3}|(?<=\w)["'][ \t]{0,3},?[ \t]{0,3}["'])"""
    r"""("[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"']{1,200})"""
)


#: between a command's words: spaces, or an argument list's quotes and comma (`', '`, `","`, Go's `" "`)
_ITEM = r"""(?:[ \t]+|["'][ \t]{0,3},?[ \t]{0,3}["'])"""
_FLAG_ITEM = r"""(?:[ \t]|["']?,?[ \t]{0,3}["'])"""

# Names and values in other shapes than `name=value`. Each names its groups `key` and `value`.
_QUOTED_VALUE = r"""(?P<value>"[^"\n]{1,500}"|'[^'\n]{1,500}')"""
#: `<apiToken>...</apiToken>`, the value alone in the element (whitespace and line breaks around it)
_ELEMENT = (
    r"""<(?P<key>[A-Za-z_][\w.-]{0,60}+)(?:[ \t][^<>\n]{0,200})?>"""
    r"""\s{0,40}(?P<value>[^\s<>]{1,500})\s{0,40}</(?P=key)>"""
)
#: `setProperty("API_TOKEN", "...")`, `headers.set('X-Api-Key', '...')`: quoted name, comma, quoted value
#: the first two arguments of a call or an initialiser, not any two strings of a list
_CALL = r"""[(\[{][ \t]{0,3}["'](?P<key>[A-Za-z_][\w.-]{0,60}+)["'][ \t]{0,3},[ \t]{0,3}""" + _QUOTED_VALUE
#: `<entry name="apiToken" value="..."/>`, `{"name": "api_token", "value": "..."}`, `Name=... Value=...`,
#: and a Kubernetes container's environment entry, whose YAML quotes neither (`- name: DB_PASSWORD` and,
#: on the next line, `value: ...`)
_NAME_VALUE = (
    r"""(?i)\b(?:name|key)["']?[ \t]{0,3}[:=][ \t]{0,3}"""
    r"""["']?(?P<key>[A-Za-z_][\w.-]{0,60}+)["']?[ \t]{0,3},?"""
    r"""\s{0,40}["']?value["']?[ \t]{0,3}[:=][ \t]{0,3}"""
    r"""(?P<value>"[^"\n]{1,500}"|'[^'\n]{1,500}'|[^\s"',;}]{1,500})"""
)
#: `apiToken,abc123...,`: a name and a value side by side in a comma-separated row
#: (read from the comma: the name is read behind it, `_named_behind`, which is faster than trying every word)
_LISTED = r""",[ \t]?(?P<value>[^\s,;"'<>]{8,500})(?=,|$)"""
#: YAML block scalars: `api_token: |` (or `>`) and the value on the next, indented line
_BLOCK = r""":[ \t]{0,3}[|>][-+]?[ \t]*\n[ \t]{1,40}(?P<value>[^\s]{1,500})"""


#: a secret's name in a sentence and the value the sentence gives it (`password is '...'`, `DB password
#: was ...`, `set password to ...`, `api key is ...`, `PASSWORD -> ...`, `using password ... for user`):
#: words, not the separators of gitleaks' generic rule, stand between them; `verb` is empty when none does
_PROSE = (
    r"(?i)(?<![A-Za-z0-9])(?P<key>pass(?:word|wd|phrase)|pwd|secret|token"
    r"|(?:api|access|secret|private|client|auth|refresh)[ _-]?(?:key|token|secret))(?![A-Za-z0-9])"
    r"[ \t]{1,3}(?P<verb>(?:(?:is|was)[ \t]{1,3})?(?:(?:set|changed|reset)[ \t]{1,3})?"
    r"(?:is|was|to|->)[ \t]{1,3})?"
    # the value ends before a sentence's punctuation (`... was X.`), or is quoted
    r"""(?P<value>'[^'\s]{1,200}'|"[^"\s]{1,200}"|[^\s"'`,;()<>\[\]{}]{1,200}?)"""
    r"""(?=[.,;:!?]?(?![^\s"'`<>()\[\]{}]))"""
)


#: Oracle's and MySQL's `CREATE USER` / `ALTER USER` (and `ROLE`) statement, up to its `IDENTIFIED BY`, and
#: Oracle's `GRANT CONNECT TO scott IDENTIFIED BY tiger` (which creates the user): prose (`the user was
#: identified by email`) names no statement
_IDENTIFIED = (
    r"(?i)\b(?:(?:create|alter)[ \t]+(?:user|role)|grant[ \t]+[^\n;]{1,200}?[ \t]to)[ \t]+[^\s;]{1,128}"
    r"[ \t]+identified[ \t]+by[ \t]+"
)
#: an authentication plugin's name, as MySQL's `IDENTIFIED WITH` and MariaDB's `IDENTIFIED VIA` give it (any
#: name: ClickHouse's `plaintext_password`, TiDB's `'tidb_sm3_password'` are not MySQL's)
_PLUGIN = r"['\"`]?\w{1,64}['\"`]?"
#: an `Authorization:` or `Proxy-Authorization:` header's name, as a header, a pair or a JSON member gives it
#: (or Go's fmt of an `http.Header` or gRPC's `metadata.MD`: `map[Authorization:[Bearer ...]]`; Python's
#: bytes, `{'Authorization': b'Basic ...'}`)
_AUTHORIZATION = r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]{0,3}[:=][ \t]{0,3}(?:[bu]?[\"']|\[)?"
#: one of an authentication scheme's parameters (RFC 9110, 11.2: `token BWS "=" BWS ( token / quoted-string
#: )`; its quotes escaped too inside a JSON string), RFC 8187's extended form (`username*=UTF-8''...`, RFC
#: 7616 3.4.4) and a quoted-pair inside the quotes (`"CORP\\\\svc"`, RFC 9110 5.6.4)
_AUTH_PARAM = r"""[\w-]{1,40}\*?=(?:\\?"(?:[^"\\\n]|\\[^"\n]){0,4000}\\?"|[^\s,"\\]{1,4000})"""
#: a password as those statements give it: quoted, or bare where Oracle needs no quotes
_SQL_VALUE = r"""('(?:[^'\\\n]|''|\\.){1,200}'|"(?:[^"\\\n]|\\.){1,200}"|[^\s'";,()]{1,200})"""
#: the value after a name that ends its line: `password:` / `"api_token":` / `DB_PASSWORD=` / `secret was`
_NEXT_LINE = (
    r"""(?m)(?::|=>|=|was|is)"""
    r"""[ \t]*\r?\n[ \t]{0,40}(?P<value>"[^"\n]{1,500}"|'[^'\n]{1,500}'|[^\s"']{1,500})[ \t,;]*$"""
)


PAIRS: tuple[Rule, ...] = (
    rule(
        "url_password",
        # the user name holds no bracket: `[REDACTED:...]` left by a token rule is not a user name
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,20}://[^\s:/@\[\]]{0,128}:([^\s@/]{1,256})@",
        "://",
        group=1,
    ),
    # a token as a URL's user name, with no password: a Sentry DSN's key, `https://<token>@host/...`
    rule(
        "url_password",
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,20}://([A-Za-z0-9_\-.~]{16,256})@",
        "://",
        group=1,
        accept=_token_like,
    ),
    # HTTP Digest's credentials (RFC 7616, 3.4) are its auth-params: `response` is a hash of the password that
    # can be cracked offline, `username` the user's name; up to the header's end, a quote that closes its
    # value in JSON, or what follows the last parameter
    rule(
        "authorization",
        _AUTHORIZATION
        + r"digest[ \t]+("
        + _AUTH_PARAM
        + r"(?:[ \t]{0,3},[ \t]{0,3}"
        + _AUTH_PARAM
        + r"){0,30})",
        "authorization",
        group=1,
    ),
    rule(
        "authorization",
        _AUTHORIZATION
        + r"(?:(?:basic|bearer|token|digest|negotiate|ntlm|apikey|sharedaccesssignature|aws4-hmac-sha256)"
        # or any scheme (RFC 9110 11.1: `SSWS`, `Klaviyo-API-Key`: letters, dash-joined; never a token itself)
        r"[ \t]+|[a-z]{1,12}(?:-[a-z0-9]{1,12}){0,3}[ \t]+(?=[\w.~+/:-]{16})(?![\w-]{1,40}\*?=))?"
        # Rails' token scheme names its token (`Token token="..."`: `ActionController::HttpAuthentication`)
        r"(?:token=\\?[\"']?)?"
        r"([^\s\"',;]{1,2000})",
        "authorization",
        group=1,
    ),
    rule(
        "basic_auth",
        r"(?i)\bbasic[ \t]+([A-Za-z0-9+/]{8,2000}={0,2})",
        "basic",
        group=1,
        accept=_accept_basic,
    ),
    # RFC 6750's b64token, read on through an `=` inside it (one no b64token has, but a token sent as one
    # may): `_accept_bearer` tells the next pair's name (`token_type=Bearer expires_in=3600`) from a token
    rule(
        "bearer_token",
        r"(?i)\bbearer[ \t]+([A-Za-z0-9_\-.~+/][A-Za-z0-9_\-.~+/=]{7,3999})",
        "bearer",
        group=1,
        accept=_accept_bearer,
    ),
    rule(
        "bearer_token",
        r"(?i)\btoken[ \t]+([A-Za-z0-9_\-.~+/]{16,4000}=*)",
        "token",
        group=1,
        accept=_token_like,
    ),
    rule(
        "cookie",
        r"(?i)\b(?:set-)?cookie[\"']?[ \t]{0,3}[:=][ \t]{0,3}[\"']?([^\"'\r\n]{1,4000})",
        "cookie",
        group=1,
        accept=_has_pair,
    ),
    # connection strings and client command lines, as each engine's documentation writes them
    rule(
        "password",
        r"(?i)\b(?:pwd|password)[ \t]*=[ \t]*(\{(?:[^}\n]|\}\}){1,200}\})",
        "pwd",
        "password",
        group=1,
    ),
    # client command lines: MySQL's `-pSECRET`, `redis-cli -a`, OpenLDAP's `-w`, `sshpass -p`, `smbclient -U
    # user%password`, `curl -u user:password`
    rule(
        "password",
        r"(?i)\b(?:(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlsh|mariadb|mariadb-dump)\b"
        + SAME_COMMAND
        # (an argument list's next item: `"-u", "root", "-pSECRET"`; the password joined to `-p`, as MySQL's
        # manual has it: after a quoted `'-p'` item, `'-p', 'appdb'` is the database's name, its quotes no
        # password; a quote after a bare `-p` opens the password, `-p',S3cr3t'`)
        + r"""(?:[ \t,]-p|(?:["']|"[ \t]{0,3},[ \t]{0,3}")-p(?!["'][ \t]{0,3}[,\]]))"""
        r"|redis-cli\b" + SAME_COMMAND + r"[ \t]-a[ \t]+"
        r"|ldap\w{0,10}\b" + SAME_COMMAND + r"[ \t]-w[ \t]+"
        r"|sshpass[ \t]+-p[ \t]*"
        r"|smbclient\b" + SAME_COMMAND + r"[ \t]-U[ \t]*[^\s%]{1,64}%"
        r"|(?:curl|wget)\b"
        + SAME_COMMAND
        + r"[ \t](?:-u|--user)(?:=|[ \t]{1,5})[\"']?[^\s:\"'\[]{1,100}:)"
        + ARGUMENT,
        *("mysql", "mariadb", "redis-cli", "ldap", "sshpass", "smbclient", "curl", "wget"),
        group=1,
    ),
    # the logins whose password flag is a lone letter, after their command only (`-p` is a port elsewhere):
    # `docker login -p` (and Podman's, Buildah's, Helm's and ORAS' registry logins), `az login -p`, and
    # SQL Server's clients' `-P` (`sqlcmd`, `bcp`, `osql`: their `-p` is another option), also in a list
    rule(
        "password",
        r"\b(?:(?:(?:docker|podman|buildah|oras|helm[ \t]+registry|az)"
        + _ITEM
        + r"login)\b"
        + (SAME_COMMAND + _FLAG_ITEM + r"-p|(?:sqlcmd|bcp|osql)\b" + SAME_COMMAND + _FLAG_ITEM + r"-P)")
        + _ITEM
        + ARGUMENT,
        "login",
        "sqlcmd",
        "bcp",
        "osql",
        group=1,
    ),
    # Oracle's `user/password@host` (JDBC thin URLs, sqlplus and other clients' connect strings)
    rule(
        "password",
        r"(?i)(?:jdbc:oracle:\w{1,10}:"
        r"|\b(?:sqlplus|sqlldr|expdp|impdp|rman|exp|imp)\w{0,4}[ \t]+(?:-\w+[ \t]+){0,3})"
        r"[\w$#.-]{1,64}/([^\s@/\"']{1,200})@",
        "jdbc:oracle",
        "sqlplus",
        "sqlldr",
        "expdp",
        "impdp",
        "rman",
        group=1,
    ),
    # an OAuth 2.0 authorization code (RFC 6749 4.1.2) or verifier in a URL; a magic link's token
    rule(
        "oauth_code",
        r"(?i)[?&#;](?:code|oauth_verifier|oauth_token|auth_code|authorization_code|ticket|otp)"
        r"=([A-Za-z0-9_\-.~%/+]{8,500})",
        "=",
        group=1,
        accept=_code_like,
    ),
    rule(
        "link_token",
        r"/(?i:reset|reset-password|reset_password|password-reset|password_reset|password/reset|verify"
        r"|verify-email|confirm|confirmation|activate|activation|invite|invitation|invitations|magic|magic-link"
        r"|unsubscribe|unlock|recover|recovery|onboarding|signup|sign-in|login|token|tokens)/"
        r"([A-Za-z0-9_\-.~%]{16,400})",
        "/",
        group=1,
        accept=_reset_token,
    ),
    # Redis `AUTH [user] password` (a span's name or `db.statement`), wherever it is quoted or bracketed
    rule(
        "password",
        r"(?<![\w-])AUTH[ \t]+(?:[\w.@-]{1,64}[ \t]+)?([^\s\"'`<>()\[\]{}]{1,200}?)"
        r"(?=[.,;]?(?:[\s\"'`<>()\[\]{}]|$))",
        "auth",
        group=1,
        accept=lambda m: not _prose_like(m.group(1)) and not _placeholder(m.group(1)),
    ),
    # `ALTER USER app IDENTIFIED BY new REPLACE old`: the old password a user changing their own gives
    # (Oracle, MySQL 8); before the new one is redacted, while the statement still reads as written
    rule(
        "sql_password",
        _IDENTIFIED + _SQL_VALUE + r"[ \t]+replace[ \t]+" + _SQL_VALUE,
        "replace",
        group=2,
        accept=lambda m: not _placeholder(m.group(2).strip("'\"")),
    ),
    rule(
        "sql_password",
        # MySQL names the authentication plugin between: `IDENTIFIED WITH caching_sha2_password BY 'x'`, or
        # gives its stored string: `... AS '<hash>'` (the password's hash, as secret as the password)
        # (MariaDB: `IDENTIFIED VIA ed25519 USING PASSWORD('x')` or `USING '<hash>'`, one plugin `OR` another)
        r"(?i)\b(?:password[ \t]+|identified[ \t]+(?:(?:with|via)[ \t]+"
        + _PLUGIN
        + r"(?:[ \t]+or[ \t]+"
        + _PLUGIN
        + r"){0,3}"
        r"[ \t]+(?:by|as|using)[ \t]+(?:password[ \t]*\([ \t]*)?|by[ \t]+))"
        r"(?:values[ \t]+)?"
        r"('(?:[^'\\\n]|''|\\.){1,200}'|\"(?:[^\"\\\n]|\\.){1,200}\")",
        "password",
        "identified",
        group=1,
    ),
    # Oracle quotes a password only when it needs to: `CREATE USER app IDENTIFIED BY s3cret;` (`ALTER ROLE`)
    rule(
        "sql_password",
        _IDENTIFIED + r"([^\s'\";,()]{1,200})",
        "identified",
        group=1,
        accept=lambda m: m.group(1).lower() not in {"values", "password"} and not _placeholder(m.group(1)),
    ),
    rule(
        "sql_password",
        r"(?i)\bset[ \t]+password\b[^=\n]{0,100}=[ \t]*(?:password[ \t]*\([ \t]*)?"
        r"('[^'\n]{1,200}'|\"[^\"\n]{1,200}\")",
        "set",
        group=1,
    ),
    rule(
        "password",
        r"(?i)<add[ \t]+key=\"(?:cleartext)?password\"[ \t]+value=\"([^\"\n]{1,200})\"",
        "password",
        group=1,
    ),
    Rule("password", _FLAG, ("pass", "token", "secret", "key", "psk"), 1),
    # a value a sentence gives a secret's name, only when it looks generated (`password is incorrect` stays)
    rule(
        "key_value_secret",
        _PROSE,
        "pass",
        "pwd",
        "secret",
        "token",
        "key",
        group=3,
        accept=_accept_prose,
    ),
    # `_accept_pair` takes a pair only under a name `secret_category` or `maybe_secret` takes
    Rule(
        "key_value_secret",
        _PAIR,
        ("=", ":", "%3d", "%3a"),
        3,
        _accept_pair,
        key_words=SECRET_NAME_WORDS,
        key_refused_endings=REFUSED_NAME_ENDINGS,
    ),
    Rule(
        "key_value_secret",
        _PREFIXED_PAIR,
        ("-d", "--", " .", ";."),
        3,
        _accept_pair,
        key_words=SECRET_NAME_WORDS,
        key_refused_endings=REFUSED_NAME_ENDINGS,
    ),
    rule("key_value_secret", _ELEMENT, "</", group=2, accept=_accept_named),
    rule("key_value_secret", _CALL, ",", group=2, accept=_accept_named),
    rule("key_value_secret", _NAME_VALUE, "value", group=2, accept=_accept_named),
    rule("key_value_secret", _LISTED, ",", group=1, accept=_accept_listed),
    rule("key_value_secret", _BLOCK, "|", ">", group=1, accept=_accept_block),
    rule(
        "key_value_secret",
        _NEXT_LINE,
        "\n",
        group=1,
        accept=_next_line_value,
    ),
)
