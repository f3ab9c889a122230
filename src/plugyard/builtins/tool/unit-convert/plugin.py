"""Unit conversion from an exact table of factors (HomeClaw style: one function per
capability). Every unit of a kind converts through that kind's base unit (metre,
kilogram, litre, kelvin, byte, second); temperatures add their offsets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11

Category = Literal["length", "mass", "volume", "temperature", "data", "time"]


class InvalidInput(ValueError):
    code = "invalid_parameters"


@dataclass(frozen=True)
class Unit:
    symbol: str
    category: Category
    factor: float  # base units per one of this unit
    names: tuple[str, ...] = ()


def _units() -> list[Unit]:
    u = Unit
    return [
        # length (metre)
        u("m", "length", 1, ("metre", "meter", "metres", "meters")),
        u("km", "length", 1e3, ("kilometre", "kilometer", "kilometres", "kilometers")),
        u("cm", "length", 1e-2, ("centimetre", "centimeter", "centimetres", "centimeters")),
        u("mm", "length", 1e-3, ("millimetre", "millimeter", "millimetres", "millimeters")),
        u("µm", "length", 1e-6, ("um", "micrometre", "micrometer", "micron", "microns")),
        u("nm", "length", 1e-9, ("nanometre", "nanometer", "nanometres", "nanometers")),
        u("mi", "length", 1609.344, ("mile", "miles")),
        u("yd", "length", 0.9144, ("yard", "yards")),
        u("ft", "length", 0.3048, ("foot", "feet", "'")),
        u("in", "length", 0.0254, ("inch", "inches", '"')),
        u("nmi", "length", 1852, ("nautical mile", "nautical miles")),
        # mass (kilogram)
        u("kg", "mass", 1, ("kilogram", "kilograms", "kilo", "kilos")),
        u("g", "mass", 1e-3, ("gram", "grams", "gramme", "grammes")),
        u("mg", "mass", 1e-6, ("milligram", "milligrams")),
        u("µg", "mass", 1e-9, ("ug", "mcg", "microgram", "micrograms")),
        u("t", "mass", 1e3, ("tonne", "tonnes", "metric ton", "metric tons")),
        u("lb", "mass", 0.45359237, ("lbs", "pound", "pounds")),
        u("oz", "mass", 0.028349523125, ("ounce", "ounces")),
        u("st", "mass", 6.35029318, ("stone", "stones")),
        u("short_ton", "mass", 907.18474, ("ton", "tons", "us ton", "short ton")),
        u("long_ton", "mass", 1016.0469088, ("imperial ton", "long ton")),
        # volume (litre)
        u("L", "volume", 1, ("l", "litre", "liter", "litres", "liters")),
        u("mL", "volume", 1e-3, ("ml", "millilitre", "milliliter", "millilitres", "milliliters")),
        u("cL", "volume", 1e-2, ("cl", "centilitre", "centiliter")),
        u("dL", "volume", 1e-1, ("dl", "decilitre", "deciliter")),
        u("m3", "volume", 1e3, ("m³", "cubic metre", "cubic meter", "cubic metres")),
        u("cm3", "volume", 1e-3, ("cm³", "cc", "cubic centimetre", "cubic centimeter")),
        u("ft3", "volume", 28.316846592, ("ft³", "cubic foot", "cubic feet")),
        u("in3", "volume", 0.016387064, ("in³", "cubic inch", "cubic inches")),
        u("gal", "volume", 3.785411784, ("gallon", "gallons", "us gallon", "us gallons")),
        u("qt", "volume", 0.946352946, ("quart", "quarts")),
        u("pt", "volume", 0.473176473, ("pint", "pints", "us pint")),
        u("cup", "volume", 0.2365882365, ("cups",)),
        u("fl_oz", "volume", 0.0295735295625, ("floz", "fl oz", "fluid ounce", "fluid ounces")),
        u("tbsp", "volume", 0.01478676478125, ("tablespoon", "tablespoons")),
        u("tsp", "volume", 0.00492892159375, ("teaspoon", "teaspoons")),
        u("imp_gal", "volume", 4.54609, ("imperial gallon", "imperial gallons", "uk gallon")),
        u("imp_pt", "volume", 0.56826125, ("imperial pint", "imperial pints", "uk pint")),
        u("imp_fl_oz", "volume", 0.0284130625, ("imperial fluid ounce", "uk fluid ounce")),
        # temperature (kelvin; factor unused, see _to_kelvin)
        u("°C", "temperature", 1, ("c", "degc", "celsius", "centigrade", "deg c")),
        u("°F", "temperature", 1, ("f", "degf", "fahrenheit", "deg f")),
        u("K", "temperature", 1, ("k", "kelvin", "kelvins")),
        u("°R", "temperature", 1, ("r", "degr", "rankine")),
        # data (byte); byte units come first so a lower-case "mb" reads as megabytes
        u("B", "data", 1, ("byte", "bytes")),
        u("kB", "data", 1e3, ("kb", "kilobyte", "kilobytes")),
        u("MB", "data", 1e6, ("mb", "megabyte", "megabytes")),
        u("GB", "data", 1e9, ("gb", "gigabyte", "gigabytes")),
        u("TB", "data", 1e12, ("tb", "terabyte", "terabytes")),
        u("PB", "data", 1e15, ("pb", "petabyte", "petabytes")),
        u("KiB", "data", 2**10, ("kib", "kibibyte", "kibibytes")),
        u("MiB", "data", 2**20, ("mib", "mebibyte", "mebibytes")),
        u("GiB", "data", 2**30, ("gib", "gibibyte", "gibibytes")),
        u("TiB", "data", 2**40, ("tib", "tebibyte", "tebibytes")),
        u("PiB", "data", 2**50, ("pib", "pebibyte", "pebibytes")),
        u("bit", "data", 0.125, ("b", "bits")),
        u("kbit", "data", 125, ("kb/s", "kilobit", "kilobits", "kbps")),
        u("Mbit", "data", 125e3, ("Mb", "megabit", "megabits", "mbps")),
        u("Gbit", "data", 125e6, ("Gb", "gigabit", "gigabits", "gbps")),
        u("Tbit", "data", 125e9, ("Tb", "terabit", "terabits")),
        # time (second)
        u("ns", "time", 1e-9, ("nanosecond", "nanoseconds")),
        u("µs", "time", 1e-6, ("us", "microsecond", "microseconds")),
        u("ms", "time", 1e-3, ("millisecond", "milliseconds")),
        u("s", "time", 1, ("sec", "secs", "second", "seconds")),
        u("min", "time", 60, ("mins", "minute", "minutes")),
        u("h", "time", 3600, ("hr", "hrs", "hour", "hours")),
        u("d", "time", 86400, ("day", "days")),
        u("wk", "time", 604800, ("week", "weeks")),
        u("mo", "time", 2629746, ("month", "months")),  # 1/12 of a Gregorian year
        u("yr", "time", 31556952, ("y", "year", "years")),  # 365.2425 days
    ]


UNITS = _units()
_EXACT = {name: unit for unit in UNITS for name in (unit.symbol, *unit.names)}
assert len(_EXACT) == sum(1 + len(unit.names) for unit in UNITS), "a unit name is used twice"
_FOLDED: dict[str, Unit] = {}
for _unit in UNITS:
    for _name in (_unit.symbol, *_unit.names):
        _FOLDED.setdefault(_name.lower(), _unit)


class Conversion(TypedDict):
    value: float
    from_unit: str
    to_unit: str
    category: Category
    result: float
    text: str


class UnitInfo(TypedDict):
    symbol: str
    category: Category
    names: list[str]


class UnitList(TypedDict):
    units: list[UnitInfo]


def find(text: str) -> Unit:
    """The unit a symbol or name stands for (case matters only where it must: Mb, MB)."""
    key = text.strip()
    found = _EXACT.get(key) or _FOLDED.get(key.lower())
    if found is None and key.lower().startswith(("°", "deg ")):
        found = _FOLDED.get(key.lower().removeprefix("°").removeprefix("deg ").strip())
    if found is None:
        raise InvalidInput(f"unknown unit {text!r}; list_units shows the known ones")
    return found


def convert(value: float, from_unit: str, to_unit: str) -> Conversion:
    source, target = find(from_unit), find(to_unit)
    if source.category != target.category:
        raise InvalidInput(
            f"cannot convert {source.category} ({source.symbol}) to "
            f"{target.category} ({target.symbol})"
        )
    if source.category == "temperature":
        kelvin = _to_kelvin(value, source.symbol)
        if kelvin < 0:
            raise InvalidInput("that temperature is below absolute zero")
        result = _from_kelvin(kelvin, target.symbol)
    else:
        result = value * source.factor / target.factor
    result = float(f"{result:.12g}")  # hide binary noise: 1 ft in inches is 12, not 12.000…1
    return {
        "value": value,
        "from_unit": source.symbol,
        "to_unit": target.symbol,
        "category": source.category,
        "result": result,
        "text": f"{value:g} {source.symbol} = {result:.12g} {target.symbol}",
    }


convert.__plugyard_inline__ = True  # type: ignore[attr-defined]


def list_units(category: Category | None = None) -> UnitList:
    return {
        "units": [
            {"symbol": u.symbol, "category": u.category, "names": list(u.names)}
            for u in UNITS
            if category is None or u.category == category
        ]
    }


list_units.__plugyard_inline__ = True  # type: ignore[attr-defined]


def _to_kelvin(value: float, symbol: str) -> float:
    if symbol == "°C":
        return value + 273.15
    if symbol == "°F":
        return (value - 32) * 5 / 9 + 273.15
    if symbol == "°R":
        return value * 5 / 9
    return value


def _from_kelvin(kelvin: float, symbol: str) -> float:
    if symbol == "°C":
        return kelvin - 273.15
    if symbol == "°F":
        return (kelvin - 273.15) * 9 / 5 + 32
    if symbol == "°R":
        return kelvin * 9 / 5
    return kelvin
