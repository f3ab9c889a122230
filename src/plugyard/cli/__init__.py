"""The ``plugyard`` command line."""
