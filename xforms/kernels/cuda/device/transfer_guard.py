"""xf.transfer_guard: log or refuse a host <-> device copy, as the guard level in force says.

>>> guard("device-to-host", describe(x))     # under xf.transfer_guard("disallow"): raises
"""
import logging

import numpy as np

from xforms import config
from xforms.errors import BackendError

_GUARDS = {"host-to-device": "transfer_guard_host_to_device",
           "device-to-host": "transfer_guard_device_to_host"}
_log = logging.getLogger("xforms.transfer_guard")


def describe(x):
    """`x`'s dtype and shape, as the guard's messages name a copied array: float64[3]."""
    return f"{np.dtype(x.dtype).name}{list(x.shape)}"


def guard(direction, what, explicit=False):
    """Log or refuse one copy as the guard level in force for `direction` says (JAX's
    transfer guard): "log"/"disallow" act on implicit copies, "log_explicit" and
    "disallow_explicit" on every copy."""
    level = config.transfer_level(getattr(config, _GUARDS[direction]))
    if level == "allow" or (explicit and not level.endswith("_explicit")):
        return
    msg = f"{direction} transfer: {what}"
    if level.startswith("disallow"):
        raise BackendError(f"Disallowed {msg} (xf.transfer_guard is {level!r}: copy "
                           "explicitly with xf.device_put / xf.device_get)")
    _log.warning(msg)

