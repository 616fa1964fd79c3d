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
    (`ŞİFRE`), so it is spelled out; and lower-cased again it is an `i` with a combining dot above (U+0307:
    `"ŞİFRE".lower()` is `şi̇fre`, as a system that lower-cases keys writes it)."""
    return re.escape(word).replace("i", "(?:i\u0307|[iİ])")


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
    r"(?=(?P<more>[ \t]{1,3}\w)?)"
)


def _caseless(char: str) -> bool:
    """A letter of a script without case (Han, kana, Hangul, Hebrew, Arabic, Thai, Devanagari: Unicode's
    categories Lo and Lm), which a generated secret is not written in."""
    return unicodedata.category(char) in {"Lo", "Lm"}


def _caseless_words(bare: str) -> bool:
    """Words of a caseless script after a colon (`密码：长度不足`, `密码：错误`): what an error message says,
    unless an ASCII letter stands among them (`密码：Zx9中q7Lm` is a generated value). After `=`
    such words are a value (`密码=秘密口令`)."""
    ascii_mixed = any(char.isascii() and char.isalpha() for char in bare)
    return not ascii_mixed and any(_caseless(char) for char in bare)


def _prose(bare: str, more: bool) -> bool:
    """After a colon and a space, the first word of what an error message says, not a secret: a lowercase
    word, as the English name's rule reads one (`Passwort: falsch`), or a word of letters that more words
    follow (`Passwort: Mindestens 8 Zeichen erforderlich`). A capitalised word alone is a value, as it is
    after `password: ` (`Passwort: Geheimnis`)."""
    if _prose_like(bare):
        return True
    return more and bare.isalpha() and len(bare) < 24


def _accept_foreign(match: re.Match[str]) -> bool:
    """As `pair_values._accept_pair` takes a value under a secret's name: not a placeholder, not words of a
    caseless script after a colon (those scripts put no space after one), and after a colon and a space not
    the first word of a sentence."""
    value = match["value"]
    bare = value.strip("\"'「」").strip()
    colon = match["sep"].strip() in {":", "："}
    if not bare or _placeholder(bare) or (colon and _caseless_words(bare)):
        return False
    loose = colon and match["sep"][-1:] in {" ", "\t"}
    return value[:1] in "\"'「" or not loose or not _prose(bare, bool(match["more"]))


FOREIGN: tuple[Rule, ...] = (
    rule("key_value_secret", _FOREIGN_PAIR, *_KEYWORDS, group=3, accept=_accept_foreign),
)
