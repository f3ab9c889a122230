"""The one call path: every way of running a plugin goes through the executor."""
