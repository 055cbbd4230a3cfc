"""Numbers formatted for people: 11.68M params, 21.8 GFLOP, 44.6 MB.

Decimal (SI) prefixes throughout, as papers and model cards quote sizes. Bytes have one unit across
the app, the CLI and every message: kB / MB / GB = 10^3 / 10^6 / 10^9 bytes (never KiB / MiB / GiB),
so a budget, an estimate and a device size printed side by side compare directly.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

_SI = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def _scaled(value: float, digits: int) -> tuple[str, str]:
    sign = "-" if value < 0 else ""
    v = abs(value)
    units = ((1.0, ""), *reversed(_SI))  # ascending
    # The largest unit not above the value; then one up if rounding would print 1000 (999,999 at
    # two digits is '1.00M', not '1000.00k').
    i = max(k for k, (scale, _) in enumerate(units) if v >= scale or k == 0)
    if i + 1 < len(units) and round(v / units[i][0], digits) >= 1000:
        i += 1
    scale, prefix = units[i]
    if not prefix:
        return f"{sign}{v:.{digits if v != int(v) else 0}f}", ""
    return f"{sign}{v / scale:.{digits}f}", prefix


def fmt_params(n: float, digits: int = 2) -> str:
    """11,683,584 -> '11.68M'; 108,891,648 -> '108.89M'; 512 -> '512'."""
    text, prefix = _scaled(float(n), digits)
    return f"{text}{'B' if prefix == 'G' else prefix}"


def fmt_flops(n: float, digits: int = 1) -> str:
    """21,800,000,000 -> '21.8 GFLOP'."""
    text, prefix = _scaled(float(n), digits)
    return f"{text} {prefix}FLOP"


def fmt_macs(n: float, digits: int = 1) -> str:
    """Multiply-accumulates (half the FLOPs): 11,200,000,000 -> '11.2 GMAC'."""
    text, prefix = _scaled(float(n), digits)
    return f"{text} {prefix}MAC"


def fmt_bytes(n: float, digits: int = 1) -> str:
    """44,600,000 -> '44.6 MB'; 2**30 -> '1.1 GB' (decimal units, the module's one unit)."""
    sign = "-" if n < 0 else ""
    v = abs(float(n))
    units = ((1.0, "B"), *((1000.0 ** (k + 1), name) for k, name in enumerate(("kB", "MB", "GB", "TB"))))
    i = max(k for k, (scale, _) in enumerate(units) if v >= scale or k == 0)
    if i + 1 < len(units) and round(v / units[i][0], digits) >= 1000:
        i += 1
    scale, unit = units[i]
    if unit == "B":
        return f"{sign}{int(v)} B"
    return f"{sign}{v / scale:.{digits}f} {unit}"


# The unit words of each kind of number, as fmt_params / fmt_flops / fmt_bytes print them after the prefix.
_UNIT_FORMATS = {"params": (2, "{}", {"G": "B"}), "flops": (1, " {}FLOP", {}), "bytes": (1, " {}B", {})}


def column_unit(values: Iterable[float], kind: str) -> tuple[float, str]:
    """One unit for a column of numbers of one ``kind`` ("params", "flops" or "bytes"), for a table whose cells
    must stay numbers (they sort): the prefix fmt_params / fmt_flops / fmt_bytes would give the column's smallest
    value, as the divisor and a printf format of the scaled value with the same decimals. [11,683,584,
    109,482,240] params -> (1e6, "%.2fM"), shown 11.68M and 109.48M; [22.4e9, 1.33e12] FLOPs -> (1e9,
    "%.1f GFLOP"), shown 22.4 GFLOP and 1330.2 GFLOP (one unit a column, so the digits line up)."""
    digits, word, renamed = _UNIT_FORMATS[kind]
    positive = [abs(float(v)) for v in values if v]
    smallest = min(positive, default=1.0)
    units = ((1.0, ""), *reversed(_SI))  # ascending, as _scaled picks them
    i = max(k for k, (scale, _) in enumerate(units) if smallest >= scale or k == 0)
    if i + 1 < len(units) and round(smallest / units[i][0], digits) >= 1000:  # 999,999 is 1.00M, not 1000.00k
        i += 1
    scale, prefix = units[i]
    return scale, f"%.{digits if prefix else 0}f" + word.format(renamed.get(prefix, prefix))


def fmt_count(n: int) -> str:
    """Exact count with thousands separators: 11683584 -> '11,683,584'."""
    return f"{int(n):,}"


def fmt_ratio(x: float) -> str:
    """0.1067 -> '0.11x'; 9.37 -> '9.4x'."""
    return f"{x:.2f}x" if x < 10 else f"{x:.1f}x"


# Every sentence that compares two figures (the Explorer's twin, Compare, Scaling, the Hardware page) calls them
# "nearly equal" when they are within this fraction of each other, and "down" / "up" (fewer / more, faster /
# slower) otherwise: one threshold, so a sentence never says "nearly equal" beside a metric of -17.7%.
NEARLY_EQUAL = 0.02


def direction(value: float, base: float) -> int:
    """-1 when ``value`` is below ``base`` by `NEARLY_EQUAL` of it or more, +1 when above by as much, else 0
    ("nearly equal"). A base of 0: the sign of ``value``."""
    if base == 0:
        return (value > 0) - (value < 0)
    change = value / base - 1
    return 0 if abs(change) < NEARLY_EQUAL else (1 if change > 0 else -1)


def change_words(value: float, base: float, down: str = "down", up: str = "up") -> str:
    """``value`` against ``base`` in words that follow its sign: 'down 9.72x' (base / value), 'up 1.35x'
    (value / base), or 'nearly equal, 0.99x' within `NEARLY_EQUAL`. ``down`` / ``up``: the words for a
    smaller / larger value ('faster' / 'slower' for times)."""
    way = direction(value, base)
    if way == 0:
        return f"nearly equal, {fmt_ratio(value / base)}" if base else "nearly equal"
    if way < 0:
        return f"{down} {fmt_ratio(base / value)}" if value > 0 else f"{down} to {value:g}"
    return f"{up} {fmt_ratio(value / base)}" if base > 0 else f"{up} from {base:g}"


def fmt_pct(x: float, digits: int = 1, signed: bool = False) -> str:
    """0.8291 -> '82.9%'; signed=True: '+82.9%' / '-82.9%'."""
    return f"{x * 100:+.{digits}f}%" if signed else f"{x * 100:.{digits}f}%"


def fmt_share(x: float) -> str:
    """A part of a whole that may exceed it: 0.829 -> '82.9%'; above the whole a multiple: 216.3 -> '216x'."""
    if x <= 1:
        return fmt_pct(x)
    return f"{x:,.0f}x" if x >= 10 else f"{x:.1f}x"


def fmt_nat_gap(gaps: Iterable[float], level: str = "") -> str:
    """How far losses sit from ``level`` (gaps = level's loss - the loss: positive below it), the direction in
    words from the sign: '0.18 nat below the frequency-only model', '0.05 nat above', '0.02-0.45 nat below',
    'from 0.05 nat above to 0.10 nat below' (two decimals; 'level with' at 0.00)."""
    values = list(gaps)
    lo, hi = round(min(values), 2), round(max(values), 2)

    def one(g: float) -> str:
        return "level with" if g == 0 else f"{abs(g):.2f} nat {'below' if g > 0 else 'above'}"

    if lo == hi:
        words = one(lo)
    elif lo >= 0:
        words = f"{lo:.2f}-{hi:.2f} nat below"
    elif hi <= 0:
        words = f"{-hi:.2f}-{-lo:.2f} nat above"
    else:
        words = f"from {one(lo)} to {one(hi)}"
    return f"{words} {level}" if level else words


def sentence_case(text: str) -> str:
    """``text`` with its first character upper-cased and the rest as written (`str.capitalize` would also
    lower-case the rest: "separated here (E=64 better)" -> "Separated here (e=64 better)")."""
    return text[:1].upper() + text[1:]


def escape_markdown(text: str) -> str:
    """Backslash-escape every ASCII punctuation mark, so that Markdown or HTML in user-influenced text
    (URL values, error messages, config labels) renders as plain text in Streamlit."""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text)


def _significant(x: float, digits: int) -> str:
    """``x`` >= 0 to ``digits`` significant digits, trailing zeros dropped, never in scientific notation
    (12.30 -> '12.3'; 1234.5 -> '1,230')."""
    if x == 0:
        return "0"
    rounded = round(x, digits - 1 - math.floor(math.log10(x)))  # 356 -> 360 at 2 digits
    decimals = max(digits - 1 - math.floor(math.log10(rounded)), 0)  # 9.996 rounds up to 10.0
    text = f"{rounded:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


_DURATION_UNITS = ((1e-6, 1000, "µs"), (1e-3, 1000, "ms"), (1, 120, "s"), (60, 120, "min"), (3600, 48, "h"))


def fmt_duration(seconds: float, digits: int = 3) -> str:
    """The one duration format: 0.000123 -> '123 µs', 0.356 -> '356 ms', 5400 -> '90 min', 3e6 -> '34.7 days',
    1.1e9 -> '12,731 days (34.9 years)' (never scientific notation). ``digits`` significant digits: 3 for a
    measured or computed figure, 2 for a rough one ('about 22 s', '2.5 min', '300 ms')."""
    s = float(seconds)
    if s < 0 or not math.isfinite(s):
        raise ValueError(f"seconds must be a finite number >= 0, got {seconds!r:.40}")
    if s == 0:
        return "0 s"
    for scale, limit, unit in _DURATION_UNITS:
        text = _significant(s / scale, digits)
        if float(text.replace(",", "")) < limit:
            return f"{text} {unit}"
    days = s / 86_400
    if days < 1000:
        return f"{_significant(days, digits)} days"
    years = days / 365.25
    return (f"{days:,.0f} days ({years:,.0f} years)" if years >= 100
            else f"{days:,.0f} days ({_significant(years, 3)} years)")
