"""The cron expressions a feed takes over HTTP, as one pattern the OpenAPI document
publishes and the feed route enforces.

Five fields of numbers, ``*``, ranges, lists and steps, each within its field's range;
a day of the month above 29 only when every month is allowed, so that every expression
the pattern admits names a date that comes (croniter accepts ``0 0 31 4 *``, then
finds no such day).
"""

from __future__ import annotations


def _field(value: str) -> str:
    item = rf"(\*|({value})(-({value}))?)(/[1-9][0-9]{{0,2}})?"
    return rf"({item}(,{item})*)"


_MINUTE = _field(r"[0-5]?[0-9]")
_HOUR = _field(r"[01]?[0-9]|2[0-3]")
_ANY_DAY = _field(r"0?[1-9]|[12][0-9]|3[01]")
_EVERY_MONTH_DAY = _field(r"0?[1-9]|[12][0-9]")
_MONTH = _field(r"0?[1-9]|1[0-2]")
_WEEKDAY = _field(r"[0-7]")

CRON = rf"^{_MINUTE} {_HOUR} ({_ANY_DAY} \*|{_EVERY_MONTH_DAY} {_MONTH}) {_WEEKDAY}$"
