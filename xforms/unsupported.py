"""The names of JAX's top-level API that xforms does not implement, each present so that
using it says why (an AttributeError would not): calling one, or any attribute of one
(`xf.export.export(f)`), raises NotImplementedError with the reason and what to use.

    >>> xf.new_ref(x)
    NotImplementedError: jax.new_ref: mutable array references are not implemented ...
"""


class Unsupported:
    """A JAX name (a function, class or module) xforms lacks: NotImplementedError on use."""

    def __init__(self, name, reason):
        self._name, self._reason = name, reason

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"jax.{self._name}: {self._reason}")

    def __getattr__(self, attr):
        if attr.startswith("__"):          # (introspection: copy, pickle, inspect, pytest)
            raise AttributeError(attr)
        return Unsupported(f"{self._name}.{attr}", self._reason)

    def __repr__(self):
        return f"<xforms: jax.{self._name} is not supported>"


_REFS = ("mutable array references are not implemented in xforms: carry state through "
         "lax.scan / lax.fori_loop carries or return new arrays")
_PLACEMENT = ("xforms places each array on its one device (one copy, on the host or its "
              "GPU): split work with shard_map over a one-dimensional mesh (xf.make_mesh)")
_INTERNAL = ("a module of JAX's XLA-based internals; xforms' own are xforms.core, "
             "xforms.transforms and xforms.extend (user primitives)")

GAPS = {
    "export": "serialises a StableHLO program; xforms compiles with Numba and has no portable "
              "serialised form (xf.jit(f).lower(...) gives the IR, `.compile()` the code)",
    "ffi": "calls foreign functions through XLA custom calls; xforms has no XLA: call host "
           "code with xf.pure_callback, or define a primitive with xforms.extend",
    "distributed": "initialises multi-process XLA; xforms' processes are MPI ranks: see "
                   "xforms.mpi (mpi.make_mesh, pmap over ranks)",
    "new_ref": _REFS, "empty_ref": _REFS, "free_ref": _REFS, "freeze": _REFS, "Ref": _REFS,
    "ref": _REFS,
    "reshard": _PLACEMENT, "set_mesh": _PLACEMENT, "auto_pcast": _PLACEMENT,
    "Shard": _PLACEMENT, "memory": _PLACEMENT, "make_user_context": _PLACEMENT,
    "smap": "use xf.shard_map with a one-dimensional mesh (smap is shard_map over one axis)",
    "ds": "Pallas' dynamic slice helper; xforms has no Pallas: use lax.dynamic_slice",
    "ad": _INTERNAL, "api_util": _INTERNAL, "interpreters": _INTERNAL, "lib": _INTERNAL,
}
globals().update({name: Unsupported(name, reason) for name, reason in GAPS.items()})
__all__ = sorted(GAPS)
