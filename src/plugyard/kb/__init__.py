"""The knowledge base behind Shu's ``host.kb``, ``host.query`` and ``host.ocr``: text
extraction (PDF, HTML, DOCX, plain text, OCR), chunks, embeddings and search, kept in the
store (docs/shu.md)."""
