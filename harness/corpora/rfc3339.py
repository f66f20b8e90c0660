"""RFC 3339's `date-time`, `time` and `duration` as JSON Schema's test suite reads them.

`jsonschema` checks both formats with `rfc3339-validator`, whose seconds stop at 59: it
refuses every leap second, where RFC 3339 (section 5.7) allows second 60 and the
official JSON-Schema-Test-Suite (`optional/format/date-time.json`, `time.json`) calls
`23:59:60Z` valid, and `01:29:60+01:30` too (23:59:60 in UTC), but not `22:59:60Z`.
The judge uses these checkers instead, so an engine that writes a real leap second is
not blamed for it. Everything else is as strict as before: ASCII digits, `T`/`Z` in
either case, a real calendar date, hours to 23, minutes to 59, an offset of at most
23:59 (or `Z`).

`duration` (2019-09 on) is RFC 3339's appendix A grammar, which `jsonschema` checks only
with `isoduration` installed: `P` then a date part (days; months and days; years,
months and days, each part optional after the first) with an optional time part, or a
time part alone (`T` then hours, minutes and seconds in the same way), or weeks alone.
"""

from __future__ import annotations

import calendar
import re

_TIME = r"(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))"
TIME = re.compile(_TIME, re.ASCII)
DATE_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt]" + _TIME, re.ASCII)


def _time_ok(
    hour: str,
    minute: str,
    second: str,
    zulu: str | None,
    sign: str | None,
    off_hour: str | None,
    off_minute: str | None,
) -> bool:
    """Hours to 23, minutes to 59, seconds to 59, or 60 where the time in UTC is
    23:59:60; an offset of at most 23:59."""
    h, m, s = int(hour), int(minute), int(second)
    if h > 23 or m > 59 or s > 60:
        return False
    offset = 0
    if not zulu:
        oh, om = int(off_hour or 0), int(off_minute or 0)
        if oh > 23 or om > 59:
            return False
        offset = (oh * 60 + om) * (1 if sign == "+" else -1)
    return s < 60 or (h * 60 + m - offset) % (24 * 60) == 23 * 60 + 59


def is_time(value: object) -> bool:
    """The `time` format (a full-time: with an offset). Non-strings pass, as formats
    only constrain strings."""
    if not isinstance(value, str):
        return True
    match = TIME.fullmatch(value)
    return match is not None and _time_ok(*match.groups())


def is_date_time(value: object) -> bool:
    """The `date-time` format. Non-strings pass."""
    if not isinstance(value, str):
        return True
    match = DATE_TIME.fullmatch(value)
    if match is None:
        return False
    year, month, day = (int(g) for g in match.groups()[:3])
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return False
    return _time_ok(*match.groups()[3:])


_DUR_TIME = r"T(\d+H(\d+M(\d+S)?)?|\d+M(\d+S)?|\d+S)"
_DUR_DATE = r"(\d+D|\d+M(\d+D)?|\d+Y(\d+M(\d+D)?)?)"
DURATION = re.compile(rf"P({_DUR_DATE}({_DUR_TIME})?|{_DUR_TIME}|\d+W)", re.ASCII)


def is_duration(value: object) -> bool:
    """The `duration` format. Non-strings pass."""
    return not isinstance(value, str) or DURATION.fullmatch(value) is not None
