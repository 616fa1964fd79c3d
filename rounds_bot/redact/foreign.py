"""A password named in another language than English: `Passwort: ...`, `mot de passe=...`, `senha=...`,
`пароль: ...`, `密码：...`, `パスワード=...`, `비밀번호: ...`.

Logs, configuration and error messages are written in the language of the people who run the service, and
the name of a password in theirs is as plain a sign of one as `password` (`keys.py`, whose names are split
into ASCII words, cannot see it). The words are the usual translations of "password" (and, in the languages
whose scripts run words together, of "secret key" and "token"), each read whatever precedes it: German and
Dutch compound it (`Datenbankpasswort`), Chinese and Japanese write no space (`数据库密码`). A value follows a
separator (`=`, `:`, `=>`, the full-width colon `：`) and is judged as a value under `password` is
(`pair_values`): a placeholder (`${...}`, `***`) stays, and so does what reads as the sentence of an error
message rather than a secret (`_prose`). A sentence that only names the word (`Passwort ist falsch`,
`密码错误`) has no separator and stays.
"""

from __future__ import annotations

import re
import unicodedata

from rounds_bot.redact.pair_values import _placeholder, _prose_like
from rounds_bot.redact.rule import Rule, rule

#: "password" in the languages telemetry is commonly written in (and the Latin-script spellings without
#: their accents, as ASCII-only systems write them)
_PASSWORD = (
    "passwort", "kennwort",  # German
    "mot de passe", "mot_de_passe", "motdepasse",  # French
    "contraseña", "contrasena",  # Spanish
    "senha",  # Portuguese
    "wachtwoord",  # Dutch
    "lösenord", "losenord",  # Swedish
    "adgangskode", "passord",  # Danish, Norwegian
    "salasana",  # Finnish
    "hasło", "haslo", "heslo",  # Polish, Czech and Slovak
    "jelszó", "jelszo",  # Hungarian
    "parolă", "şifre", "şifresi", "sifre",  # Romanian, Turkish
    "mật khẩu", "mat khau", "kata sandi", "kata laluan",  # Vietnamese, Indonesian, Malay
    "пароль", "пароля",  # Russian, Ukrainian, Bulgarian
    "κωδικός", "συνθηματικό",  # Greek
    "סיסמה", "סיסמא",  # Hebrew
    "كلمة المرور", "كلمة السر", "رمز عبور",  # Arabic, Persian
    "पासवर्ड", "รหัสผ่าน",  # Hindi, Thai
    "密码", "密碼", "口令", "密钥", "秘钥", "令牌",  # Chinese: password, secret key, token
    "パスワード", "暗証番号", "秘密鍵", "トークン",  # Japanese: password, PIN, private key, token
    "비밀번호", "암호", "토큰",  # Korean: password, cipher, token
)  # fmt: skip


def _spelled(word: str) -> str:
    """The word's pattern: Turkish upper-cases `i` as a dotted `İ`, which no case-folding makes an `i`
    (`ŞİFRE`), so it is spelled out."""
    return re.escape(word).replace("i", "[iİ]")


#: the keywords the rule runs on, matched in the lowercased text: `ŞİFRE` lowercases to `şi̇fre` (an `i`
#: and a combining dot), which the plain spelling is not part of
_KEYWORDS = _PASSWORD + tuple(word.replace("i", "İ").lower() for word in _PASSWORD if "i" in word)

_FOREIGN_PAIR = (
    r"(?i)(?P<key>" + "|".join(_spelled(word) for word in _PASSWORD) + r")"
    r"(?![^\W\d_])"  # the word ends there: `Passwortlänge` is another word
    r"(?P<sep>[ \t]{0,3}(?:=>|[:=：])[ \t]{0,3})"
    r"""(?P<value>"[^"\n]{1,200}"|'[^'\n]{1,200}'|「[^」\n]{1,200}」"""
    r"""|[^\s,;"'`<>{}()\[\]|，。、；）」]{1,200})"""
    # a word after the value, on the same line: the value begins a sentence (`Passwort: Mindestens 8 ...`)
    r"(?=(?P<more>[ \t]{1,3}[^\W\d_])?)"
)


def _caseless(char: str) -> bool:
    """A letter of a script without case (Han, kana, Hangul, Hebrew, Arabic, Thai, Devanagari: Unicode's
    categories Lo and Lm), which a generated secret is not written in."""
    return unicodedata.category(char) in {"Lo", "Lm"}


def _prose(bare: str, more: bool) -> bool:
    """After a colon and a space, the first word of what an error message says, not a secret: a word of
    letters alone that is lowercase or capitalised, as a sentence's first word is in German or Russian
    (`Passwort: falsch`, `Пароль: Неверный`), or that more words follow (`Passwort: Mindestens 8 Zeichen
    erforderlich`)."""
    if _prose_like(bare):
        return True
    worded = bare.isalpha() and len(bare) < 24
    return worded and (more or bare[1:].islower())


def _accept_foreign(match: re.Match[str]) -> bool:
    """As `pair_values._accept_pair` takes a value under a secret's name: not a placeholder, not words of a
    caseless script (whatever the separator: those scripts put no space after a colon), and after a colon
    and a space not the first word of a sentence."""
    value = match["value"]
    bare = value.strip("\"'「」").strip()
    if not bare or _placeholder(bare) or any(_caseless(char) for char in bare):
        return False
    loose = match["sep"].strip() in {":", "："} and match["sep"][-1:] in {" ", "\t"}
    return value[:1] in "\"'「" or not loose or not _prose(bare, bool(match["more"]))


FOREIGN: tuple[Rule, ...] = (
    rule("key_value_secret", _FOREIGN_PAIR, *_KEYWORDS, group=3, accept=_accept_foreign),
)
