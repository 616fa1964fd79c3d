"""A password named in another language than English is redacted as `password=` is: `Passwort: ...`,
`senha=...`, `пароль: ...`, `密码：...`; a sentence that only names the word (`Passwort ist falsch`,
`密码错误`), a placeholder, words of a caseless script (`密码：错误`) and, after a colon and a space, the
first word of a sentence (`Passwort: falsch`, `Пароль: неверный`, `Passwort: Mindestens 8 Zeichen`) stay."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "s3cr3tP4ssw0rd2024"
NAMED = (
    "Passwort: {v}",
    "Datenbank-Kennwort={v}",
    "DatenbankPasswort = {v}",
    "mot de passe: {v}",
    "motdepasse={v}",
    "contraseña: {v}",
    "contrasena={v}",
    "senha='{v}'",
    "wachtwoord: {v}",
    "lösenord={v}",
    "passord: {v}",
    "salasana={v}",
    "hasło: {v}",
    "heslo={v}",
    "jelszó: {v}",
    "şifre: {v}",
    "Şifre={v}",
    "mật khẩu: {v}",
    "kata sandi: {v}",
    "пароль: {v}",
    "Пароль={v}",
    "κωδικός: {v}",
    "סיסמה: {v}",
    "كلمة المرور: {v}",
    "पासवर्ड: {v}",
    "密码: {v}",
    "数据库密码：{v}，请检查",
    "密碼={v}",
    "パスワード: {v}",
    "パスワード「{v}」",  # no separator: not taken (below), here for the shape's sake
    "비밀번호: {v}",
    "토큰={v}",
    "ŞİFRE: {v}",  # Turkish upper case: the dotted capital İ folds to no `i`
    "Passwort: S3cr3t!x{v}",
    "Passwort: Geheimnis{v}",  # a capitalised word alone is a value, as after `password: `
    "contraseña: Dragon{v}",
    "密码=秘密口令{v}",  # after `=` a caseless script's words are a value
    "密码：Zx9中q7Lm{v}",  # ASCII letters among them: a generated value
)
PLACES = (
    "{pair}",
    "connexion refusée ({pair}) pour l'utilisateur app",
    "ERROR db.connect failed: host=db user=app {pair}",
)


@pytest.mark.parametrize("shape", [one for one in NAMED if "「" not in one])
@pytest.mark.parametrize("place", PLACES)
def test_a_password_named_in_another_language_is_redacted(shape: str, place: str) -> None:
    text = place.format(pair=shape.format(v=SECRET))
    out = redact(text)
    assert SECRET not in out and SECRET[:10] not in out, out
    assert "[REDACTED:" in out


KEPT = (
    "Passwort ist falsch",
    "Passwort: falsch",
    "Passwortlänge: 12 Zeichen",
    "mot de passe incorrect",
    "contraseña: incorrecta",
    "senha=${DB_SENHA}",
    "пароль: неверный",
    "密码错误，请重试",
    "パスワードが間違っています",
    "비밀번호가 틀렸습니다",
    "wachtwoord=********",
    # an error message after the name: words of a caseless script, with or without a space after the colon
    "密码：长度不足",
    "密码：错误",
    "パスワード：8文字以上必要です",
    "비밀번호: 일치하지 않습니다",
    "סיסמה: שגויה",
    "كلمة المرور: غير صحيحة",
    "รหัสผ่าน: ไม่ถูกต้อง",
    # a sentence's first word with more words after it, or a lowercase word (as after `password: `)
    "Passwort: Mindestens 8 Zeichen erforderlich",
    "Пароль: неверный",
)


@pytest.mark.parametrize("text", KEPT)
def test_a_sentence_that_names_the_word_stays(text: str) -> None:
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_foreign_names() -> None:
    texts = [place.format(pair=shape.format(v=SECRET)) for shape in NAMED for place in PLACES] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)


@pytest.mark.parametrize(
    "text",
    [
        "Passwort: Geheimnis",
        "senha: Flamengo",
        "mot de passe: Soleil",
        "пароль: Секрет",
        "密码=秘密口令",
        "密码：Zx9中q7Lm",
    ],
)
def test_a_one_word_value_after_a_foreign_name_is_redacted_as_after_password(text: str) -> None:
    name, _, _ = text.partition(next(sep for sep in ("：", "=", ": ") if sep in text))
    assert redact(text).startswith(name) and redact(text).endswith("[REDACTED:key_value_secret]")
