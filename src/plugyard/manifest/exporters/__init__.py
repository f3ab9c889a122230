"""Writers from the canonical descriptor to other formats."""
