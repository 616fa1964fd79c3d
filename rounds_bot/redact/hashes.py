"""Password hashes, recognised by their format: a hash in a public issue can be cracked offline, so it is a
secret whatever name (if any) stands before it.

Each format is written from its public reference:

- crypt(3)'s modular crypt format (passlib's and libxcrypt's crypt(5) pages): bcrypt `$2a$`/`$2b$`/`$2x$`/
  `$2y$`, two digits of cost, 22 characters of salt and 31 of checksum; SHA-crypt `$5$` and `$6$`, an optional
  `rounds=N$`, up to 16 characters of salt, a checksum of 43 or 86; MD5-crypt `$1$` and Apache's `$apr1$`,
  up to 8 of salt, 22 of checksum; yescrypt `$y$` (and `$gy$`) and scrypt `$7$`, each hash 43 characters.
  All in crypt's base64 alphabet, `./A-Za-z0-9`.
- the PHC string format (Argon2's reference, passlib): `$argon2id$v=19$m=65536,t=3,p=4$<salt>$<hash>`,
  passlib's `$scrypt$ln=...` and `$pbkdf2-sha256$<rounds>$<salt>$<hash>`; base64 without padding (passlib's
  with `.` for `+`).
- Django's `<algorithm>$<iterations>$<salt>$<hash>` (its "Password management" page): `pbkdf2_sha256`,
  `pbkdf2_sha1`, `scrypt$<n>$<salt>$<r>$<p>$<hash>`, the legacy `sha1$<salt>$<hex>` and `md5$<salt>$<hex>`;
  its `argon2$argon2id$...` and `bcrypt_sha256$$2b$...` hold a PHC or bcrypt string, found as one.

A checksum has its format's exact length and ends where crypt's alphabet does (a sentence's full stop may
follow), so a stack frame's JVM names, which hold `$1$` and `$5$` too (`Outer$1$Inner.lambda$run$0`), stay:
there a `$`, a `(` or a further name follows what would be the checksum.
"""

from __future__ import annotations

from rounds_bot.redact.rule import Rule, rule

_C = "[./A-Za-z0-9]"  # crypt's base64 alphabet
#: a checksum ends here: no character of crypt's alphabet, `$` or `(` follows, save a full stop after which
#: none of the alphabet does
_END = r"(?![A-Za-z0-9$(/]|\.[./A-Za-z0-9])"
_W = r"(?<![A-Za-z0-9_])"  # an algorithm's name starts a word

PASSWORD_HASHES: tuple[Rule, ...] = (
    rule(
        "password_hash",
        r"\$2[abxy]?\$\d{2}\$" + _C + "{53}" + _END,
        *("$2a$", "$2b$", "$2x$", "$2y$", "$2$"),
    ),
    rule(
        "password_hash",
        r"\$(?:(?:5|6)\$(?:rounds=\d{1,9}\$)?" + _C + r"{0,16}\$(?:" + _C + "{86}|" + _C + "{43})"
        r"|(?:1|apr1)\$" + _C + r"{0,8}\$" + _C + "{22})" + _END,
        *("$1$", "$5$", "$6$", "$apr1$"),
    ),
    rule(
        "password_hash",
        r"\$(?:g?y\$" + _C + r"{1,16}\$" + _C + r"{1,86}|7\$" + _C + r"{11,97})\$" + _C + "{43}" + _END,
        *("$y$", "$gy$", "$7$"),
    ),
    rule(
        "password_hash",
        r"\$(?:argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha(?:1|256|512))?)(?:\$v=\d{1,4})?"
        r"\$(?:\d{1,10}|[a-z]{1,8}=[A-Za-z0-9+/.-]{1,32}(?:,[a-z]{1,8}=[A-Za-z0-9+/.-]{1,32}){0,7})"
        r"\$[A-Za-z0-9+/.]{4,128}\$[A-Za-z0-9+/.]{16,512}",
        *("$argon2", "$scrypt$", "$pbkdf2"),
    ),
    rule(
        "password_hash",
        _W + r"(?:pbkdf2_sha(?:1|256)\$\d{1,10}\$[A-Za-z0-9./+_-]{1,128}"
        r"|scrypt\$\d{1,10}\$[A-Za-z0-9./+_-]{1,128}\$\d{1,3}\$\d{1,3})"
        r"\$[A-Za-z0-9+/]{20,172}={0,2}",
        *("pbkdf2_sha", "scrypt$"),
    ),
    rule(
        "password_hash",
        _W + r"(?:sha1\$[A-Za-z0-9]{0,64}\$[0-9a-f]{40}|md5\$[A-Za-z0-9]{0,64}\$[0-9a-f]{32})(?![0-9A-Za-z])",
        *("sha1$", "md5$"),
    ),
)
