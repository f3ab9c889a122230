"""The plugins bundled with plugyard: real plugin folders, each a manifest beside its code.

``builtins/<family>/<id>/`` holds one plugin. Their manifests are written in all four
dialects (OLO, HomeClaw, Shu, MRP-VM) and their code in all three styles the in-process
runtime runs, so every reader and every calling convention is used for real. Nothing is
loaded at import time: the registry walks :data:`BUILTINS_DIR` when asked to.
"""

from pathlib import Path

#: The folder holding the bundled plugin folders.
BUILTINS_DIR = Path(__file__).resolve().parent
