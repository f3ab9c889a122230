from runtimes.subprocess.helpers import runtime

__all__ = ["runtime"]
