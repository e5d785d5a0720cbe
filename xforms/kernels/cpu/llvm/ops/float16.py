"""float16's rounding on the direct path: the compiled tier holds float16 values in float32
and rounds every float16 result (xforms/kernels/cpu/float16.py); this is that rounding as
LLVM IR, the runtime helper's arithmetic (xforms/kernels/runtime/float16.py), so a float16
program compiles here instead of falling back to a Numba kernel (float16 special.exp1: a
Numba kernel of ~600 statements).

    m.emit(round_float16(m, "%r", "%x"))      # %r = float16's nearest of float32 %x
"""
from ..scalar import llvm_const


def round_float16(m, r, x):
    """The line binding `r` to float16's nearest of float32 `x`, in float32: rint(x / u) * u
    at float16's ulp u = 2**max(E - 10, -24) (E: x's exponent, read from its bits; both steps
    exact, rint rounds half to even), and past 65504 inf (x * inf: NaN stays NaN).  Integer
    and float steps only: no half type, so no F16C instruction or libcall on any host.

        >>> round_float16(m, "%r", "%x")     # 0.1 -> 0.099975586, 65520.0 -> inf
    """
    b, e, em, low, ue, ub, u, ulp, q, n, rr, a, ok, big = (m.fresh() for _ in range(14))
    m.decls.add("declare float @llvm.rint.f32(float)")
    m.decls.add("declare float @llvm.fabs.f32(float)")
    m.emit(f"{b} = bitcast float {x} to i32")
    m.emit(f"{e} = lshr i32 {b}, 23")
    m.emit(f"{em} = and i32 {e}, 255")
    m.emit(f"{low} = icmp ult i32 {em}, 113")            # (below 2**-14: a subnormal's ulp)
    m.emit(f"{ue} = select i1 {low}, i32 113, i32 {em}")
    m.emit(f"{ub} = sub i32 {ue}, 10")
    m.emit(f"{u} = shl i32 {ub}, 23")
    m.emit(f"{ulp} = bitcast i32 {u} to float")
    m.emit(f"{q} = fdiv float {x}, {ulp}")
    m.emit(f"{n} = call float @llvm.rint.f32(float {q})")
    m.emit(f"{rr} = fmul float {n}, {ulp}")
    m.emit(f"{a} = call float @llvm.fabs.f32(float {rr})")
    m.emit(f"{ok} = fcmp ole float {a}, {llvm_const(65504.0, 'float')}")
    m.emit(f"{big} = fmul float {rr}, {llvm_const(float('inf'), 'float')}")
    return f"{r} = select i1 {ok}, float {rr}, float {big}"
