"""The code of the weather example, beside its manifest: one function named after the
operation (HomeClaw's style), its parameters those the manifest declares.

An example, not a forecast: it answers from a small fixed table and never goes online,
so it runs anywhere and always gives the same answer.
"""

from __future__ import annotations

# city → (°C, conditions): made-up figures.
_TABLE = {
    "lisbon": (21.0, "sunny"),
    "oslo": (4.0, "light snow"),
    "nairobi": (24.0, "scattered showers"),
    "tokyo": (16.0, "cloudy"),
}


def fetch_weather(city: str, units: str = "metric") -> dict[str, object]:
    found = _TABLE.get(city.strip().lower())
    if found is None:
        raise ValueError(f"no example weather for {city!r}; try one of {', '.join(sorted(_TABLE))}")
    celsius, conditions = found
    temperature = celsius if units == "metric" else round(celsius * 9 / 5 + 32, 1)
    return {"city": city, "temperature": temperature, "units": units, "conditions": conditions}
