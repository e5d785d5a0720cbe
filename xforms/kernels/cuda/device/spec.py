"""The device's properties as the emitter's launch configuration (`DeviceSpec`): the
current device's (`device_spec()`), the simulator's (`SIM_SPEC`), a named one's
(`spec_for`, for PTX compiled without a GPU).

>>> spec_for((8, 0), sms=108).max_blocks
864
"""
from dataclasses import dataclass

from .available import cuda, ensure_available, simulating


@dataclass(frozen=True)
class DeviceSpec:
    """What the emitter needs to know about the target device.

    block: threads per block of 1-D kernels (a power of two); tile: side of the square
    thread block of the matmul kernel; max_blocks: cap on a grid-stride kernel's grid (a
    few waves of blocks over the multiprocessors); max_split: most blocks that share one
    reduction output (combined by a second pass); cc: compute capability; vendor: whether
    NVIDIA's libraries may compute (vendor/: never on the simulator or for PTX-only specs)."""
    name: str
    cc: tuple
    block: int = 256
    tile: int = 16
    warp: int = 32
    max_blocks: int = 1024
    max_split: int = 64
    sms: int = 80
    vendor: bool = False

    def key(self):
        return (self.cc, self.block, self.tile, self.warp, self.max_blocks, self.max_split,
                self.vendor)


# Small blocks and grids on the simulator (each simulated thread is a Python thread); still
# several blocks, so that grid-stride loops and two-pass reductions are exercised.
SIM_SPEC = DeviceSpec("simulator", (8, 0), block=8, tile=4, warp=4, max_blocks=3,
                      max_split=3, sms=1)


def spec_for(cc, sms=108, name=None):
    """A DeviceSpec of a real device (for tests that compile PTX without a GPU)."""
    return DeviceSpec(name or f"sm_{cc[0]}{cc[1]}", tuple(cc), block=256, tile=16, warp=32,
                      max_blocks=sms * 8, max_split=min(64, sms), sms=sms)


_spec = None


def device_spec():
    """The spec of the current device (from its properties), or SIM_SPEC."""
    global _spec
    if _spec is None:
        ensure_available()
        if simulating():
            _spec = SIM_SPEC
        else:
            dev = cuda.get_current_device()
            cc = tuple(dev.compute_capability)
            sms = int(dev.MULTIPROCESSOR_COUNT)
            block = min(256, int(dev.MAX_THREADS_PER_BLOCK))
            _spec = DeviceSpec(dev.name.decode() if isinstance(dev.name, bytes) else
                               str(dev.name), cc, block=block, tile=16,
                               warp=int(dev.WARP_SIZE), max_blocks=sms * (2048 // block) * 2,
                               max_split=min(64, sms), sms=sms, vendor=True)
    return _spec


def peak_bandwidth():
    """The device's theoretical memory bandwidth in bytes/s (double data rate x bus width),
    or None where the driver does not say (the simulator)."""
    if simulating():
        return None
    try:
        dev = cuda.get_current_device()
        return 2.0 * int(dev.MEMORY_CLOCK_RATE) * 1e3 * int(dev.GLOBAL_MEMORY_BUS_WIDTH) / 8
    except Exception:
        return None
