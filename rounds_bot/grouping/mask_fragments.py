"""The pieces the masking rules' patterns (`mask_rules`) are built from: names of months and days,
time zones and clocks, top-level domains, units.

Like the rules, they treat digits only through `\\d` and repeat only boundedly.
"""

from __future__ import annotations

MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
MONTH_NAME = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?"
)
LONG_DAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
ZONE = r"(?:[+-]\d{4}|[A-Z]{2,5})"
CLOCK = r"\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
ORDINAL = r"(?:st|nd|rd|th)?"
# A value in brackets, one level of brackets inside it (`(42, null, (1,2))`), bounded.
IN_PARENTHESES = r"\((?:[^()\n]|\([^()\n]{0,256}+\)){0,1024}+\)"
# Top-level domains a hostname may end with. Codes that double as file extensions or English
# words (py, rs, sh, pl, md, cc, so, ml, id, in, it, is, at, be, no, my, us ...) are left out on
# purpose: `setup.py` is a file and `mapred.task.id` a setting, not hosts.
TLD = (
    r"(?:com|net|org|edu|gov|mil|io|dev|cloud|ai|info|biz|local|localdomain|internal|lan|corp"
    r"|arpa|uk|de|fr|jp|cn|ru|br|au|ca|eu|nl|es|se|ch|kr|hk|tw|sg|om|pt|cz|dk|fi|nz|za|mx|ar"
    r"|il|ie|gr|hu|ro|tr|ua|vn|th|ph)"
)
HEX_WORD = r"[0-9a-f]"
SIZE_UNIT = r"(?:[KMGTPE]i?B|kB|B|bytes)"
SPELLED_TIME_UNIT = (
    r"(?:(?:milli|micro|nano)?(?:seconds?|secs?)|minutes?|mins?|hours?|hrs?|days?|msecs?|millis|ms|us|ns)"
)
