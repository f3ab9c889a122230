"""The manifest dialects plugyard reads and writes."""

from __future__ import annotations

from plugyard.manifest.dialects.base import Dialect
from plugyard.manifest.dialects.canonical import DIALECT as CANONICAL
from plugyard.manifest.dialects.homeclaw import DIALECT as HOMECLAW
from plugyard.manifest.dialects.mrp import DIALECT as MRP
from plugyard.manifest.dialects.olo import DIALECT as OLO
from plugyard.manifest.dialects.shu import DIALECT as SHU

#: Every dialect, in the order ties in detection are broken.
DIALECTS: tuple[Dialect, ...] = (CANONICAL, OLO, HOMECLAW, MRP, SHU)
BY_NAME: dict[str, Dialect] = {d.name: d for d in DIALECTS}

__all__ = ["BY_NAME", "CANONICAL", "DIALECTS", "HOMECLAW", "MRP", "OLO", "SHU", "Dialect"]
