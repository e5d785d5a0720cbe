"""CPU lowering of conv_general_dilated: one call of the precompiled, shape-generic
`conv_run` (xforms/kernels/runtime/conv.py) per convolution.

The generated code passes the operands and the output as flat views of their buffers, in
their own layouts, with each one's sizes and element strides along the logical axes
((batch, feature, *spatial) and (out-feature, in-feature, *spatial), spatial padded in front
to three axes), the convolution's geometry and 0 (conv_run picks its threads).  Nothing
about a convolution is compiled per call site: the helper is compiled once per dtype and
kept in Numba's disk cache.
Sizes pass through `ints`, so they are not literal types to Numba.
(An earlier lowering emitted transposes, reshapes and copy loops around per-call helpers;
Numba compiling those -- np.transpose alone pulls in its string-formatting error paths --
was most of a small CNN's 20-40 s compile.)

    # c:f32[8,11,11,64] = conv_general_dilated[...] a b        model.py:12 (conv2)
    _conv_runtime_conv_run(A.reshape(-1), B.reshape(-1), C.reshape(-1), _conv_runtime_ints((
        8, 32, 1, 13, 13, 5408, 1, 0, 416, 32, 64, 32, 1, 3, 3, 1, 64, 0, 6144, 2048,
        8, 64, 1, 11, 11, 7744, 1, 0, 704, 64, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0)))
"""
import numpy as np

from ..cpu.emit import OP_RULES, _unsupported


def _prod(xs):
    out = 1
    for v in xs:
        out = out * v
    return out


def _pad3(xs, fill):
    """A spatial tuple padded in front to 3 entries."""
    return (fill,) * (3 - len(xs)) + tuple(xs)


def logical(shape, spec):
    """(sizes, element strides) of a C-contiguous array of `shape` along the axes `spec`
    names (two leading axes, then the spatial ones), spatial padded in front to three."""
    strides = [_prod(shape[d + 1:]) for d in range(len(shape))]
    sizes = (shape[spec[0]], shape[spec[1]]) + _pad3([shape[d] for d in spec[2:]], 1)
    st = (strides[spec[0]], strides[spec[1]]) + _pad3([strides[d] for d in spec[2:]], 0)
    return sizes, st


def geometry(p):
    """The `geo` tuple of conv_run: strides, low paddings, lhs and rhs dilations (three each,
    padded in front), feature_group_count, batch_group_count."""
    return (_pad3(p["window_strides"], 1) + _pad3([lo for lo, _ in p["padding"]], 0)
            + _pad3(p["lhs_dilation"], 1) + _pad3(p["rhs_dilation"], 1)
            + (p["feature_group_count"], p["batch_group_count"]))


def _text(t):
    return "(" + ", ".join(f"{v}" for v in t) + ")"


def _conv(em, eqn):
    lhs, rhs = eqn.invars
    out = eqn.outvars[0]
    p = eqn.params
    if np.dtype(out.aval.dtype).kind == "b":
        raise _unsupported(eqn, "boolean convolution; convert the operands to a number type")
    em.alloc(out)
    if 0 in tuple(out.aval.shape):
        return
    plan = ()
    for v, spec in zip((lhs, rhs, out), p["dimension_numbers"]):
        sizes, strides = logical(tuple(v.aval.shape), spec)
        plan += sizes + strides
    flat = [f"{em.atom(v) if v is not out else em.A(out)}.reshape(-1)" for v in (lhs, rhs, out)]
    em.globals.setdefault("_conv_runtime", "__import__('xforms.kernels.runtime.conv', fromlist=['_'])")
    run = em.global_name("_conv_runtime.conv_run")
    ints = em.global_name("_conv_runtime.ints")
    # last, the number of parts: 0, conv_run chooses per call (xforms/kernels/runtime/conv.py)
    em.line(f"{run}({', '.join(flat)}, {ints}({_text(plan + geometry(p) + (0,))}))")


OP_RULES["conv_general_dilated"] = _conv
