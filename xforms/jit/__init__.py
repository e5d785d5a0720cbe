"""`jit` and what it stands on: `jitted` (the Jitted wrapper: signature keys, executables,
fast calls), `backends` (the registry of compilers, the one import of `xforms.kernels`),
`misses` (explain_cache_misses) and `where_data` (eager transforms that run where their
device arrays live).

>>> f = xforms.jit(lambda x: x * 2.0); f(1.0)
"""
from .backends import Backend, default_backend, get_backend, register_backend
from .jitted import Jitted, jit
from .where_data import eval_where_data, follows_data

__all__ = ["Backend", "Jitted", "default_backend", "eval_where_data", "follows_data",
           "get_backend", "jit", "register_backend"]
