"""What the CUDA device is, below everything that runs on it: whether CUDA is here
(`available`), the device's properties as the emitter's launch configuration (`spec`), and
which host <-> device copies xf.transfer_guard lets happen (`transfer_guard`).

>>> from xforms.kernels.cuda.device.spec import SIM_SPEC; SIM_SPEC.block
8
"""
