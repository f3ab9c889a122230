"""Shu manifest in Python: plugyard reads the literal below with ``ast`` and never runs it."""

PLUGIN_MANIFEST = {
    "name": "text-stats",
    "display_name": "Text Statistics",
    "version": "1.0.0",
    "description": (
        "Counts the words, sentences, paragraphs and characters of a text and estimates "
        "its reading and speaking time, average sentence length, lexical diversity and "
        "most frequent words. Use it to check a length limit, size up a document or "
        "describe a writing style."
    ),
    "module": "plugin:TextStatsPlugin",
    "capabilities": [],
    "x-plugyard": {
        "examples": [
            "how many words are in this essay",
            "how long would it take to read this article aloud",
            "what are the most frequent words in this text",
            "is this paragraph under 150 words",
            "how many characters are in this tweet",
        ]
    },
}
