"""The typed plugin registry: what is installed, where it came from, and whether it can run."""
