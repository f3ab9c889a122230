"""Cutting text into chunks for embedding: consecutive slices of about ``size``
characters, cut at a paragraph, sentence or word boundary where one is near. The slices
cover the text exactly, so joining a knowledge object's chunks gives its text back."""

from __future__ import annotations

CHUNK_CHARS = 1200
_BREAKS = ("\n\n", "\n", ". ", " ")


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    if size <= 0:
        raise ValueError("size must be positive")
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            window = text[start:end]
            for mark in _BREAKS:
                cut = window.rfind(mark)
                if cut >= size // 2:
                    end = start + cut + len(mark)
                    break
        out.append(text[start:end])
        start = end
    return out
