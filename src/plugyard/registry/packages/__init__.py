"""Shu plugin packages: a zip with a manifest, the plugin's Python package(s) and an
optional ``vendor/``, extracted safely, installed under the packages root and read back
as a plugin source on every start (docs/packages.md)."""

from plugyard.registry.packages.archive import Extracted, Limits, extract
from plugyard.registry.packages.installer import InstalledPackage, Installer
from plugyard.registry.packages.manager import Installed, PackageManager
from plugyard.registry.packages.source import PackageSource, place, pyworker_runtime

__all__ = [
    "Extracted",
    "InstalledPackage",
    "Installed",
    "Installer",
    "Limits",
    "PackageManager",
    "PackageSource",
    "extract",
    "place",
    "pyworker_runtime",
]
