"""xforms: JAX-style composable transformations (grad, jvp, vjp, vmap, hessian, ...) of
NumPy-style Python functions, compiled with Numba for CPUs and CUDA GPUs.

    import xforms as xf, xforms.numpy as xnp
    loss = lambda w, x: xnp.sum(xnp.tanh(x @ w) ** 2)
    g = xf.jit(xf.grad(loss))(w, x)
"""
from . import numpy, tree_util, tree, flatten_util, scipy
from . import primitives as _primitives  # noqa: F401  (fills the rule tables)
from .api import (grad, hvp, jvp, linearize, make_jaxpr, stop_gradient, value_and_grad, vjp)
from .batching_api import hessian, jacfwd, jacrev, vmap
from .batching_api import jacrev as jacobian    # JAX's alias
from .core.trace import Array
from .custom import checkpoint, checkpoint_policies, custom_jvp, custom_vjp, hook, remat
from .errors import ConcretizationError, UnexpectedTracerError
from .jit import default_backend, jit
from .device import (device_get, device_put, live_arrays, make_array_from_callback,
                     make_array_from_process_local_data, make_array_from_single_device_arrays)
from .pmap import pmap
from .api_extras import (ShapeDtypeStruct, closure_convert, custom_gradient, enable_x64,
                         ensure_compile_time_eval, eval_shape, fwd_and_bwd, linear_transpose,
                         named_call, named_scope, typeof)
from .core.jit_switch import disable_jit
from .sharding import NamedSharding, P, make_mesh  # noqa: F401
from .shard_map import shard_map  # noqa: F401
from .runtime import (Device, block_until_ready, clear_caches, copy_to_host_async,
                      default_device, device_count, devices, effects_barrier, host_count,
                      host_id, host_ids, local_device_count, local_devices,
                      print_environment_info, process_count, process_index, process_indices)
from . import config, dtypes, typing  # noqa: F401  (jax.config, jax.dtypes, jax.typing)
from .config import (debug_infs, debug_nans, default_matmul_precision, explain_cache_misses,
                     log_compiles, no_tracing, numpy_dtype_promotion, numpy_rank_promotion)
from .config import (allow_f16_reductions, array_garbage_collection_guard, check_tracer_leaks,
                     checking_leaks, debug_key_reuse, default_prng_impl, enable_checks,
                     enable_custom_prng, legacy_prng_key,
                     no_execution, remove_size_one_mesh_axis_from_type, softmax_custom_jvp,
                     thread_guard, threefry_partitionable, transfer_guard,
                     transfer_guard_device_to_device, transfer_guard_device_to_host,
                     transfer_guard_host_to_device)
from .config import jax2tf_scan_reductions as jax2tf_associative_scan_reductions
from .dtypes import float0
from . import ad_checkpoint, custom_batching, custom_derivatives
from . import nn
from . import lax
from .lax import linalg as _lax_linalg  # noqa: F401  (lax.linalg, as jax.lax.linalg)
from . import mpi  # noqa: F401  (imports mpi4py only when used)
from . import random
from . import debug, dlpack, experimental, image, monitoring, ops, profiler, stages
from .callbacks import pure_callback

from .unsupported import *  # noqa: E402,F401,F403  (JAX's names xforms lacks: each says why)

from .version import __version__  # noqa: F401

# last: the compiler package starts importing on a thread of its own (XFORMS_PRELOAD)
from .jit.backends import preload as _preload_compiler
_preload_compiler()
