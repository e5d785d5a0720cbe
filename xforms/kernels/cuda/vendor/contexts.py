"""What a library makes in a CUDA context (cuBLAS and cuSOLVER handles, cuFFT plans with their
work areas) belongs to that context: `PerContext` keeps one binding's objects for the context
the calls come from, forgets them when calls come from another one, and destroys them at exit.

    plans = PerContext(lambda entry: lib.cufftDestroy(entry[0]))
    entry = plans.get(context, key, make)        # make() on first use in this context

`context` is the runtime's key of the current context (runtime._context_key: the driver's
handle and a serial, so that a context made after numba.cuda.close() differs from the closed
one even where the driver hands out the same handle).  Objects of a context that calls no
longer come from are forgotten, not destroyed: the usual cause is numba.cuda.close(), whose
teardown freed their device memory already, and a library call on a destroyed context is
undefined.  At exit they are destroyed, the context still current: numba-cuda frees its
device objects by weakref.finalize, whose exit hook is registered before this module's (a
binding is first made after a device array exists), and exit hooks run last-in first-out.
"""
import atexit
import logging
import threading
import weakref

logger = logging.getLogger(__name__)

_STORES = weakref.WeakSet()


class PerContext:
    """One binding's objects (any value; `destroy(value)` releases one) in one context."""

    def __init__(self, destroy):
        self._destroy = destroy
        self._lock = threading.Lock()
        self.context, self.items = None, {}
        _STORES.add(self)

    def get(self, context, key, make):
        """The object `key` of `context`, made by `make()` on first use there; objects of
        another context are forgotten first."""
        with self._lock:
            if context != self.context:
                if self.items:
                    logger.info("xforms: the CUDA context changed; %d library object(s) of "
                                "the old one forgotten", len(self.items))
                self.context, self.items = context, {}
            if key not in self.items:
                self.items[key] = make()
            return self.items[key]

    def close(self):
        """Destroy every object (their context is current: at exit, or on request)."""
        with self._lock:
            items, self.context, self.items = self.items, None, {}
        for value in items.values():
            try:
                self._destroy(value)
            except Exception as e:       # noqa: BLE001 - at exit, a failure only to report
                logger.warning("xforms: destroying a CUDA library object failed: %s", e)


def close_all():
    """Destroy what every binding made in the current context (registered for exit)."""
    for store in list(_STORES):
        store.close()


atexit.register(close_all)
