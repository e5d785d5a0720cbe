"""Every environment flag xforms reads, in one place (documented in README.md)."""
import os


def _flag(name, default="0"):
    return os.environ.get(name, default).strip().lower() in ("1", "true", "yes", "on")


ENABLE_CHECKS = _flag("XFORMS_ENABLE_CHECKS")      # type-check every IR a transform produces
DUMP = _flag("XFORMS_DUMP")                        # print fusion plans and generated file paths
DISABLE_JIT = _flag("XFORMS_DISABLE_JIT")          # run generated modules as plain Python
DISABLE_CACHE = _flag("XFORMS_DISABLE_CACHE")      # no on-disk compile cache
BACKEND = os.environ.get("XFORMS_BACKEND", "").strip().lower() or None


def cache_dir():
    d = os.environ.get("XFORMS_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "xforms")
