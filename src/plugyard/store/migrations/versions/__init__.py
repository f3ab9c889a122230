"""One file per revision, named ``r<revision>_<slug>.py``; see docs/registry.md."""
