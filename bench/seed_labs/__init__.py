"""Per-system labs of bench/seedplugins.py: each runs one seed system's real plugins."""
