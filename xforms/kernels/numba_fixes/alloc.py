"""Array allocation in compiled code without a compile per array type (a Numba patch).

Numba allocates every new array (`np.empty`, `a.copy()`, `np.full`, array expressions)
through `numba.np.arrayobj._empty_nd_impl`, which reaches the allocator by compiling a
trampoline (`_call_allocator`, calling the `_allocate` class method overloaded on the array
type, which calls the NRT allocator) with `compile_internal`.  That compile is keyed by the
array type, so each dtype and rank a kernel allocates costs two small Numba compiles, in
every process: 0.1-0.25 s of an MLP gradient's 1-2 s first call here (nothing of it is
kept on disk).  For plain `types.Array` -- whose `_allocate` is Numba's default, the NRT
allocator -- the replacement below calls `NRT_MemInfo_alloc_safe_aligned` directly: the same
call the trampoline ends in, the same size, alignment, overflow check and error, so the
same machine code once inlined.  Other array types (whose class may overload `_allocate`)
keep Numba's path.  (No upstream issue found; the behaviour is Numba's `_empty_nd_impl` in
numba/np/arrayobj.py.)

    >>> from xforms.kernels.numba_fixes import alloc as numba_alloc
    >>> numba_alloc.install()      # done by xforms.kernels.numba_fixes.patches.apply()
"""
ORIGINAL = None


def _check(src):
    """Numba's `_empty_nd_impl` still allocates as this module assumes."""
    return ("compile_internal(builder, _call_allocator, argtypes, args)" in src
            and "get_preferred_array_alignment(dtype)" in src
            and "smul_with_overflow(arrlen, itemsize)" in src)


def _make(original):
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.np.arrayobj import get_itemsize, make_array, populate_array

    def _empty_nd_impl(context, builder, arrtype, shapes):
        if type(arrtype) is not types.Array or arrtype.layout not in "CF":
            return original(context, builder, arrtype, shapes)
        ary = make_array(arrtype)(context, builder)
        datatype = context.get_data_type(arrtype.dtype)
        itemsize = context.get_constant(types.intp, get_itemsize(context, arrtype))
        arrlen = context.get_constant(types.intp, 1)
        overflow = ir.Constant(ir.IntType(1), 0)
        for s in shapes:
            mult = builder.smul_with_overflow(arrlen, s)
            arrlen = builder.extract_value(mult, 0)
            overflow = builder.or_(overflow, builder.extract_value(mult, 1))
        strides = [itemsize]
        dims = list(shapes)
        if arrtype.ndim == 0:
            strides = []
        elif arrtype.layout == "C":
            for d in reversed(dims[1:]):
                strides.append(builder.mul(strides[-1], d))
            strides.reverse()
        else:
            for d in dims[:-1]:
                strides.append(builder.mul(strides[-1], d))
        mult = builder.smul_with_overflow(arrlen, itemsize)
        allocsize = builder.extract_value(mult, 0)
        overflow = builder.or_(overflow, builder.extract_value(mult, 1))
        with builder.if_then(overflow, likely=False):
            context.call_conv.return_user_exc(
                builder, ValueError,
                ("array is too big; `arr.size * arr.dtype.itemsize` is larger than"
                 " the maximum possible size.",))
        align = context.get_preferred_array_alignment(arrtype.dtype)
        # what Array._allocate's default (numba.np.arrayobj.intrin_alloc) emits
        meminfo = context.nrt.meminfo_alloc_aligned(
            builder, allocsize, context.get_constant(types.uint32, align))
        data = context.nrt.meminfo_data(builder, meminfo)
        intp_t = context.get_value_type(types.intp)
        populate_array(ary, data=builder.bitcast(data, datatype.as_pointer()),
                       shape=cgutils.pack_array(builder, dims, ty=intp_t),
                       strides=cgutils.pack_array(builder, strides, ty=intp_t),
                       itemsize=itemsize, meminfo=meminfo)
        return ary
    return _empty_nd_impl


def install():
    """Replace `_empty_nd_impl` in numba.np.arrayobj and in the Numba modules that imported
    it by name (if Numba's code still looks as assumed)."""
    global ORIGINAL
    from numba.np import arrayobj

    from .registry import ORIGINALS, install_patch
    if ORIGINAL is None:
        install_patch(arrayobj, "_empty_nd_impl", _check, _make)
        ORIGINAL = ORIGINALS.get((arrayobj, "_empty_nd_impl"))
