"""Personal data in free text: e-mail addresses, phone numbers (E.164, international, and the national formats
of `PHONE_REGIONS`), US social security numbers, UK National Insurance numbers, Aadhaar, CPF, IBANs of every
country in SWIFT's registry, payment card numbers and client IP addresses.

Each is confirmed before it is replaced, so telemetry keeps its ids and times: a card number passes the Luhn
check *and* has a card network's prefix and length (an epoch-millisecond timestamp or a snowflake id does
neither); an IBAN passes its ISO 13616 check digits; `git@github.com:owner/repo` is a git remote, not an
address; an IP address is a real one (loopback and `0.0.0.0` are kept, and with `public`, private ranges)
and no version (`versions.py`: `version 10.2.3.4`, `Chrome/120.0.0.0`, `Version=4.0.0.0`).
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from typing import Literal

from rounds_bot.redact.rule import Rule, rule
from rounds_bot.redact.versions import is_version

# libphonenumber's metadata and python-stdnum are imported by the checks that read them, at a candidate's
# first confirmation: most rounds confirm no phone number, IBAN, Aadhaar or CPF, and importing both costs
# every process's start about 25 ms of CPU.

IpPolicy = Literal["all", "public", "off"]
_PRIVATE = tuple(
    ipaddress.ip_network(net)
    for net in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "169.254.0.0/16",
        "fc00::/7",
        "fe80::/10",
    )
)
# Card networks: (prefixes, allowed lengths)
_NETWORKS: tuple[tuple[tuple[str, ...], tuple[int, ...]], ...] = (
    (("4",), (13, 16, 19)),
    ((*(str(n) for n in range(51, 56)), *(str(n) for n in range(2221, 2721))), (16,)),
    (("34", "37"), (15,)),
    (("6011", "65", *(str(n) for n in range(644, 650))), (16, 17, 18, 19)),
    (tuple(str(n) for n in range(3528, 3590)), (16, 17, 18, 19)),
    (("36", "38", "39", *(str(n) for n in range(300, 306))), (14, 15, 16, 17, 18, 19)),
    (("62",), (16, 17, 18, 19)),
    (
        ("50", *(str(n) for n in range(56, 59)), "6304", "6759", "6761", "6762", "6763"),
        (12, 13, 16, 19),
    ),
)


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = int(char)
        if position % 2 == 1:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _card(match: re.Match[str]) -> bool:
    raw = match.group(0)
    digits = re.sub(r"\D", "", raw)
    separators = set(re.sub(r"\d", "", raw))
    if len(separators) > 1:
        return False
    if separators and not re.fullmatch(
        r"\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,3})?|\d{4}[ -]\d{6}[ -]\d{4,5}", raw
    ):
        return False
    network = any(digits.startswith(prefixes) and len(digits) in lengths for prefixes, lengths in _NETWORKS)
    return network and _luhn(digits)


def _iban_valid(candidate: str) -> bool:
    """ISO 13616: the country's length and BBAN structure in SWIFT's IBAN registry, and the mod-97 check
    digits (a country's own national check is not asked: a typo'd account number is still personal)."""
    from stdnum import iban
    from stdnum.exceptions import ValidationError

    try:
        iban.validate(candidate, check_country=False)
    except ValidationError:
        return False
    return True


def _aadhaar(match: re.Match[str]) -> bool:
    """UIDAI's 12 digits (not starting 0 or 1) with a Verhoeff check digit; grouped 4-4-4, or bare when the
    text says Aadhaar."""
    from stdnum import verhoeff

    digits = re.sub(r"\D", "", match.group(0))
    grouped = len(match.group(0)) > 12
    return (grouped or "aadhaar" in match.string.lower()) and verhoeff.is_valid(digits)


def _cpf(match: re.Match[str]) -> bool:
    """Receita Federal's CPF: 11 digits with two check digits; formatted `000.000.000-00`, or bare when the
    text says CPF."""
    from stdnum.br import cpf

    formatted = "." in match.group(0)
    return (formatted or "cpf" in match.string.lower()) and cpf.is_valid(match.group(0))


#: the regions whose national formats (without the country code) are recognised: a number is a phone number
#: when libphonenumber's metadata says it is a valid number of one of them. Regions whose numbers are two
#: groups of four digits without a trunk prefix (Hong Kong, Singapore) are not listed: in logs that shape is
#: mostly ids and counts; their numbers are redacted in international and E.164 format.
PHONE_REGIONS = (
    "GB", "DE", "FR", "IN", "BR", "JP", "AU", "ES", "IT", "NL", "MX", "ZA", "NG", "PL", "SE", "KR", "CA",
    "IE", "BE", "CH", "AT", "PT", "DK", "NO", "FI", "CZ", "RO", "GR", "TR", "IL", "AE", "SA", "EG", "KE",
    "AR", "CL", "CO", "PE", "CN", "MY", "ID", "PH", "TH", "VN", "PK", "BD", "NZ", "UA",
)  # fmt: skip
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{2}-\d{2}-\d{4}|\d{2}-\d{2}-\d{2}")


def _national_phone(match: re.Match[str]) -> bool:
    return _valid_national(match.group(0))


@lru_cache(maxsize=4096)
def _valid_national(raw: str) -> bool:
    """A valid number of one of `PHONE_REGIONS`, written as that region writes its numbers (libphonenumber's
    national format, groups and all): `3552 3534 3375` parses as a German number but no German writes one
    so, and fan speeds or dates stay. Remembered: logs repeat their numbers."""
    digits = sum(ch.isdigit() for ch in raw)
    if not 8 <= digits <= 13 or _DATE.fullmatch(raw):
        return False
    if raw[0] not in "0(" and raw.count(" ") + raw.count("-") < 2 and digits < 10:
        return False  # without a trunk prefix: three groups (`612 34 56 78`) or ten digits (`321 1234567`)
    import phonenumbers

    written = raw.replace("-", " ")
    for region in PHONE_REGIONS:
        try:
            number = phonenumbers.parse(raw, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number_for_region(number, region):
            national = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
            if national.replace("-", " ") == written:
                return True
    return False


def _iban(match: re.Match[str]) -> bool:
    return _iban_valid(match.group(0))


def _phone(match: re.Match[str]) -> bool:
    """An international number: 8 to 15 digits (E.164's limit), or a shorter one libphonenumber calls valid
    (Niue, Tokelau and Tristan da Cunha have 4- and 5-digit numbers)."""
    digits = sum(ch.isdigit() for ch in match.group(0))
    if 8 <= digits <= 15:
        return True
    if digits < 6:
        return False
    import phonenumbers

    try:
        return phonenumbers.is_valid_number(phonenumbers.parse(match.group(0)))
    except phonenumbers.NumberParseException:
        return False


def _not_git_remote(match: re.Match[str]) -> bool:
    after = match.string[match.end() : match.end() + 200]
    return (
        not re.match(r":[\w~.-]*/", after)
        and match.string[max(match.start() - 3, 0) : match.start()] != "://"
    )


#: Spaces, punctuation and symbols outside ASCII, which end an address in text as ASCII ones do: Latin-1's
#: (and the C1 controls), the Ogham space, General Punctuation's spaces, quotes and dashes, arrows,
#: mathematical and technical symbols, box drawing and other symbols, CJK punctuation, the small and
#: full-width forms' punctuation and symbols, the specials (U+FFF0-U+FFFF)
_ENDS_ADDRESS = (
    (0x80, 0xBF), (0xD7, 0xD7), (0xF7, 0xF7), (0x1680, 0x1680), (0x2000, 0x206F), (0x2190, 0x2BFF),
    (0x2E00, 0x2E7F), (0x3000, 0x303F), (0xFE10, 0xFE1F), (0xFE30, 0xFE6F), (0xFF01, 0xFF0F),
    (0xFF1A, 0xFF20), (0xFF3B, 0xFF40), (0xFF5B, 0xFF65), (0xFFF0, 0xFFFF),
)  # fmt: skip


def _non_ascii_in_address() -> str:
    """The class of the characters outside ASCII an address may hold: RFC 6532's UTF8-non-ascii in a local
    part, an IDNA U-label's letters, marks and digits in a domain; all but `_ENDS_ADDRESS`."""
    ranges, start = [], 0x80
    for first, last in _ENDS_ADDRESS:
        if start < first:
            ranges.append(f"\\U{start:08x}-\\U{first - 1:08x}")
        start = last + 1
    ranges.append(f"\\U{start:08x}-\\U0010ffff")
    return "".join(ranges)


#: The non-ASCII top-level labels an address can end at (U-labels): every IDN top-level domain of IANA's
#: root zone list (data.iana.org/TLD/tlds-alpha-by-domain.txt, version 2026100300: its 151 `XN--` entries,
#: decoded; `tests/test_redact_international_email.py` checks them against the copy the test dependencies
#: carry), IANA's eleven IDN evaluation domains (delegated 2007-2013, still in examples: `.испытание`,
#: `.δοκιμή`, `.テスト`, ...) and the labels of the internationalised examples documentation and test suites
#: copy (the `Email address` article's `用户@例子.广告`, `θσερ@εχαμπλε.ψομ`, `二ノ宮@黒川.日本`). A word of
#: running text after `@` and a full stop is none of them (`错误@支付模块。请重试`): it ends no address.
_IDN_TLDS = frozenset({
    # IANA's root zone list
    "vermögensberater", "vermögensberatung", "ελ", "ευ", "бг", "бел", "дети", "ею", "католик", "ком", "мкд",
    "мон", "москва", "онлайн", "орг", "рус", "рф", "сайт", "срб", "укр", "қаз", "հայ", "ישראל", "קום",
    "ابوظبي", "ارامكو", "الاردن", "البحرين", "الجزائر", "السعودية", "العليان", "المغرب", "امارات", "ایران",
    "بارت", "بازار", "بيتك", "بھارت", "تونس", "سودان", "سورية", "شبكة", "عراق", "عرب", "عمان", "فلسطين",
    "قطر", "كاثوليك", "كوم", "مصر", "مليسيا", "موريتانيا", "موقع", "همراه", "پاکستان", "ڀارت", "कॉम", "नेट",
    "भारत", "भारतम्", "भारोत", "संगठन", "বাংলা", "ভারত", "ভাৰত", "ਭਾਰਤ", "ભારત", "ଭାରତ", "இந்தியா",
    "இலங்கை", "சிங்கப்பூர்", "భారత్", "ಭಾರತ", "ഭാരതം", "ලංකා", "คอม", "ไทย", "ລາວ", "გე", "みんな",
    "アマゾン", "クラウド", "グーグル", "コム", "ストア", "セール", "ファッション", "ポイント", "世界",
    "中信", "中国", "中國", "中文网", "亚马逊", "企业", "佛山", "信息", "健康", "八卦", "公司", "公益",
    "台湾", "台灣", "商城", "商店", "商标", "嘉里", "嘉里大酒店", "在线", "大拿", "天主教", "娱乐", "家電",
    "广东", "微博", "慈善", "我爱你", "手机", "招聘", "政务", "政府", "新加坡", "新闻", "时尚", "書籍",
    "机构", "淡马锡", "游戏", "澳門", "点看", "移动", "组织机构", "网址", "网店", "网站", "网络", "联通",
    "谷歌", "购物", "通販", "集团", "電訊盈科", "飞利浦", "食品", "餐厅", "香格里拉", "香港", "닷넷",
    "닷컴", "삼성", "한국",
    # IANA's IDN evaluation domains
    "إختبار", "آزمایشی", "测试", "測試", "испытание", "परीक्षा", "δοκιμή", "테스트", "טעסט", "テスト",
    "பரிட்சை",
    # the examples' labels
    "广告", "ψομ", "日本",
})  # fmt: skip

# An e-mail address, ASCII or internationalised (RFC 6531, RFC 6532): a local part of up to 64 characters,
# labels of up to 63 (IDNA U-labels, or punycode A-labels `xn--...`), dots between them (and the ideographic
# and full-width full stops IDNA counts as dots, RFC 3490 3.1), a top-level label of letters, an A-label
# (`xn--p1ai`) or a U-label of `_IDN_TLDS` (`рф`, `广告`, in any case). The top-level label must be a real
# one because CJK text runs on without spaces and ends its sentences with `。`: any word there would do
# (`エラー@ログイン処理。再試行してください` was read as one address), and an address the sentence goes on
# after (`用户@例子.广告。请重试`) ends at its real top-level domain.
_U = _non_ascii_in_address()
_DOT = "[.\u3002\uff0e\uff61]"
_IDN_TLD = "(?i:" + "|".join(sorted(_IDN_TLDS, key=lambda label: (-len(label), label))) + ")"
_EMAIL = (
    f"(?<![\\w.+%{_U}-])[A-Za-z0-9._%+{_U}-]{{1,64}}@[A-Za-z0-9{_U}-]{{1,63}}"
    f"(?:{_DOT}[A-Za-z0-9{_U}-]{{1,63}}){{0,6}}{_DOT}"
    f"(?:[A-Za-z]{{2,24}}|[Xx][Nn]--[A-Za-z0-9-]{{1,59}}|{_IDN_TLD})(?![\\w{_U}-])"
)


def _ip_accepts(policy: IpPolicy) -> tuple[Rule, ...]:
    def accept(match: re.Match[str]) -> bool:
        try:
            address = ipaddress.ip_address(match.group(1).split("%")[0])
        except ValueError:
            return False
        if address.is_loopback or address.is_unspecified:
            return False
        if is_version(match.string, match.start(1), match.end(1)):
            return False
        return not (
            policy == "public" and any(address in net for net in _PRIVATE if net.version == address.version)
        )

    return (
        rule(
            "ip_address",
            r"(\d(?<![\w.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3})(?![\w]|\.\d)",
            ".",
            group=1,
            accept=accept,
        ),
        rule(
            "ip_address",
            r"([0-9A-Fa-f:](?<![\w:.][0-9A-Fa-f:])[0-9A-Fa-f]{0,3}+:[0-9A-Fa-f:]{1,37}+(?:%\w{1,16})?)(?![\w:])",
            ":",
            group=1,
            accept=accept,
        ),
    )


PERSONAL: tuple[Rule, ...] = (
    rule("email", _EMAIL, "@", accept=_not_git_remote),
    rule(
        "iban",
        r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)"
        r"(?![A-Za-z0-9])",
        accept=_iban,
    ),
    rule("card_number", r"\d(?<![\w.-]\d)(?:[ -]?\d){11,18}(?![\w-]|\.\d)", accept=_card),
    # A card followed by another number (`card 4038 1066 0631 6522 0`): the run above takes the stray
    # digits too and fails the check; the card's own groups, up to where that number starts, are checked.
    rule(
        "card_number",
        r"\d(?<![\w.-]\d)(?:\d{3}([ -])\d{4}\1\d{4}(?:\1\d{4})?|\d{3}([ -])\d{6}\2\d{4,5}|\d{11,18})"
        r"(?=[ -]\d)",
        accept=_card,
    ),
    rule("ssn", r"[0-8](?<![\w-][0-8])\d{2}(?<!000|666)-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])", "-"),
    rule("ssn", r"(?i)\bssn\b[^\w\n]{0,3}(\d{3}[ -]?\d{2}[ -]?\d{4})(?!\d)", "ssn", group=1),
    rule("phone", r"\+(?<![\w+]\+)\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w])", "+", accept=_phone),
    rule("phone", r"(?i)\btel:\+?[\d-]{7,20}", "tel:"),
    # national formats, in one scan: the US's (`(415) 555-0142`, `415-555-0142`, `415.555.0142`), and groups
    # of digits with a space, a hyphen or a trunk prefix's parentheses between them (`07400 123456`,
    # `(11) 96123-4567`, `06 12 34 56 78`, `090-1234-5678`) that are valid for a region
    rule(
        "phone",
        r"(?P<us>(?:\((?<![\w.-]\()[2-9]\d{2}\) ?|[2-9](?<![\w.-][2-9])\d{2}[ .-])\d{3}[ .-]\d{4}(?![\w.-]))"
        r"|(?:\((?<![\w.+/:%-]\()\d{1,5}\)[ ]?|\d(?<![\w.+/:%-]\d)(?<!\d[ ]\d)\d{1,5}[ -])\d{2,8}"
        r"(?:[ -]\d{2,8}){0,3}(?![\w.:/%-]|,\d| \d)",
        accept=lambda m: m["us"] is not None or _national_phone(m),
    ),
    # in one scan: a UK National Insurance number (HMRC's prefix letters: never D, F, I, Q, U, V; O not
    # second; BG, GB, KN, NK, NT, TN, ZZ unallocated; six digits; a suffix A to D), Aadhaar (12 digits,
    # grouped 4-4-4 or bare) and a formatted CPF (`000.000.000-00`)
    rule(
        "national_id",
        r"(?P<nino>[A-CEGHJ-PR-TW-Z](?<![A-Za-z0-9][A-Z])[A-CEGHJ-NPR-TW-Z](?<!BG|GB|KN|NK|NT|TN|ZZ)"
        r"(?: ?\d{2}){3} ?[A-D](?![A-Za-z0-9]))"
        # (an Aadhaar's last group may be followed by a lone number, not by a fourth group of four: a
        # card-shaped 4-4-4-4 number is the card rule's to judge)
        r"|\d(?<![\w.-]\d)(?:(?<=[2-9])(?<!\d[ ]\d)\d{3}(?P<sep>[ -]?)\d{4}(?P=sep)\d{4}"
        r"(?![\w-]| \d{4}(?![\w-]))"
        r"|\d{2}\.\d{3}\.\d{3}-\d{2}(?![\w.-]))",
        accept=lambda m: m["nino"] is not None or (_cpf(m) if "." in m.group(0) else _aadhaar(m)),
    ),
    rule("national_id", r"(?<![\w.-])\d{11}(?![\w.-])", "cpf", accept=_cpf),
)


def ip_rules(policy: IpPolicy) -> tuple[Rule, ...]:
    return () if policy == "off" else _ip_accepts(policy)
