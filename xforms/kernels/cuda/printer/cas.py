"""Combining stores that numba.cuda has no atomic for (a product of any dtype; max/min of
8/16-bit integers and bools), as a compare-and-swap loop on the word holding the element:

    _w = W[2]                      # int8 element 9 of a scatter_mul: word 2, bits 8..15
    while True:
        _b = (np.int64(_w) >> 8) & 255
        _c = np.int8(_b - 256 if _b >= 128 else _b)
        _c *= v                     # (the monoid's combine step, as every backend spells it)
        _n = np.uint32((np.int64(_w) & ~(255 << 8)) | ((np.int64(_c) & 255) << 8))
        _p = cuda.atomic.cas(W, 2, _w, _n)
        if _p == _w:
            break
        _w = _p

32/64-bit integers swap in their own array; floats, complex64 and 8/16-bit elements in
`W`, the buffer's bytes as unsigned words (`runtime.words`: every buffer starts on a 4-byte
boundary with its last word inside its allocation; 8-byte words where the element is 8
bytes), float words read and written through libdevice's bit casts (here the simulator's
NumPy versions of them, which its libdevice lacks).  A complex64 element is one 64-bit word:
its real part the low 32 bits, its imaginary part the high ones (little-endian), each cast
as a float32 word.  A complex128 element is 16 bytes, and numba.cuda has no 128-bit
compare-and-swap: its product takes a lock from a striped table (`LOCKS` int32 words,
`runtime.locks()`, all 0 between kernels; the element's flat offset picks one), reads the
two 64-bit words by compare-and-swap (a coherent read of the current value), combines,
writes them by atomic exchange, fences and releases (`locked_combine`).  The acquiring
thread does the work inside the loop that takes the lock, the pattern that does not
deadlock a warp whose lanes contend.  float16 has neither: its regions run in one thread
(loop.one_thread).
"""
import numpy as np

# the dtypes a compare-and-swap loop serves: word bits
_WORD_BITS = {np.dtype(t): (64 if np.dtype(t).itemsize == 8 else 32)
              for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                        np.int64, np.uint64, np.float32, np.float64, np.complex64)}


LOCKS = 4096              # the striped lock table of `locked_combine` (a power of two)
_LOCKED = frozenset({np.dtype(np.complex128)})


def has_lock(dt):
    """Is a combining store of dtype `dt` done under a lock (`locked_combine`)?"""
    return np.dtype(dt) in _LOCKED


def locked_combine(p, sp, st, val):
    """Print `out[i] (op)= val` of a complex128 combining store under a striped lock."""
    out, dt = st.var, np.dtype(st.var.aval.dtype)
    W, start = _words(p, out, np.dtype("uint64"))
    L = p.kb.buf("_locks", f"_rt.locks({LOCKS})", "int32")
    off = sp.index(out, st.index)
    k, lock, done, c = p.fresh("_k"), p.fresh("_l"), p.fresh("_d"), p.fresh("_c")
    p.line(f"{k} = {start // 8} + 2 * ({off})")
    p.line(f"{lock} = ({off}) & {LOCKS - 1}")
    p.line(f"{done} = False")
    with p.block(f"while not {done}:"):
        with p.block(f"if cuda.atomic.cas({L}, {lock}, np.int32(0), np.int32(1)) == 0:"):
            part = [f"longlong_as_double(np.int64(cuda.atomic.cas({W}, {k} + {j}, "
                    f"np.uint64(0), np.uint64(0))))" for j in (0, 1)]
            p.line(f"{c} = np.complex128(complex({part[0]}, {part[1]}))")
            p.combine_lines(st.combine, c, val, dt)
            for j, half in ((0, "real"), (1, "imag")):
                p.line(f"cuda.atomic.exch({W}, {k} + {j}, "
                       f"np.uint64(double_as_longlong({c}.{half})))")
            p.line("cuda.threadfence()")
            p.line(f"cuda.atomic.exch({L}, {lock}, np.int32(0))")
            p.line(f"{done} = True")


def has_cas(dt):
    """Can a combining store of dtype `dt` swap its word (see the module docstring)?"""
    return np.dtype(dt) in _WORD_BITS


def word_bits(dt):
    """Bits of the word a `dt` element's compare-and-swap exchanges."""
    return _WORD_BITS[np.dtype(dt)]


def cas_combine(p, sp, st, val):
    """Print `out[i] (op)= val` of combining store `st` as a compare-and-swap loop through
    printer `p` (loop.CudaPrinter; `sp`: the spelling of the store's index)."""
    out, dt = st.var, np.dtype(st.var.aval.dtype)
    arr, word, shift = _target(p, out, dt, sp.index(out, st.index))
    w, c, new, prev = p.fresh("_w"), p.fresh("_c"), p.fresh("_n"), p.fresh("_p")
    p.line(f"{w} = {arr}[{word}]")
    with p.block("while True:"):
        _decode(p, dt, w, shift, c)
        p.combine_lines(st.combine, c, val, dt)
        p.line(f"{new} = {_encode(dt, w, c, shift)}")
        p.line(f"{prev} = cuda.atomic.cas({arr}, {word}, {w}, {new})")
        with p.block(f"if {prev} == {w}:"):
            p.line("break")
        p.line(f"{w} = {prev}")


def complex_add(p, sp, st, val):
    """Print `out[i] += val` of a complex element as two float atomic adds, on the words of
    its real and imaginary parts (a sum is one per part; numba.cuda has no complex atomic)."""
    out, dt = st.var, np.dtype(st.var.aval.dtype)
    part = np.dtype(f"float{dt.itemsize * 4}")
    F, start = _words(p, out, part)
    i = p.fresh("_i")
    p.line(f"{i} = {start // part.itemsize} + 2 * ({sp.index(out, st.index)})")
    p.line(f"cuda.atomic.add({F}, {i}, {val}.real)")
    p.line(f"cuda.atomic.add({F}, {i} + 1, {val}.imag)")


def _words(p, out, word):
    """(the bytes of `out`'s buffer as an array of dtype `word`, the byte offset of `out`'s
    first element in it: not 0 in a packed buffer)."""
    home = p.em.home.get(out)
    host, start = (home.host, home.off * home.dtype.itemsize) if home else (p.em.A(out), 0)
    bits = word.itemsize * 8
    return p.kb.buf(f"_{word.kind}{bits}_{p.em.A(out)}",
                    f"_rt.words({host}, {bits}, {word.name!r})", word.name), start


def _target(p, out, dt, off):
    """(array, word index, name of the bit shift or None) of the element at flat offset
    `off` of `out`'s buffer."""
    if dt.kind in "iu" and dt.itemsize >= 4:
        return p.kb.arr(out), off, None
    bits = word_bits(dt)
    W, start = _words(p, out, np.dtype(f"uint{bits}"))
    if dt.itemsize * 8 == bits:
        base = start // dt.itemsize
        return W, (f"{base} + {off}" if base else off), None
    byte, shift = p.fresh("_y"), p.fresh("_s")
    p.line(f"{byte} = {start} + ({off}) * {dt.itemsize}")
    p.line(f"{shift} = ({byte} & 3) * 8")
    return W, f"{byte} >> 2", shift


def _decode(p, dt, w, shift, c):
    """`c = ` the element's value in word `w`."""
    if shift is None:
        if dt.kind == "c":                  # (complex64: two float32 words in one)
            half = [f"int_as_float(np.int32(np.uint32((np.int64({w}) >> {s}) & 0xffffffff)))"
                    for s in (0, 32)]
            p.line(f"{c} = np.complex64(complex({half[0]}, {half[1]}))")
        elif dt.kind == "f":
            p.line(f"{c} = " + (f"int_as_float(np.int32({w}))" if dt.itemsize == 4
                                else f"longlong_as_double(np.int64({w}))"))
        else:
            p.line(f"{c} = {w}")
        return
    b = p.fresh("_b")
    p.line(f"{b} = (np.int64({w}) >> {shift}) & {(1 << dt.itemsize * 8) - 1}")
    if dt.kind == "b":
        p.line(f"{c} = {b} != 0")
    elif dt.kind == "u":
        p.line(f"{c} = np.{dt.name}({b})")
    else:                           # (sign-extended by hand: the same in NumPy and Numba)
        half = 1 << (dt.itemsize * 8 - 1)
        p.line(f"{c} = np.{dt.name}({b} - {2 * half} if {b} >= {half} else {b})")


def _encode(dt, w, c, shift):
    """Word `w` with the element replaced by value `c`."""
    if shift is None:
        if dt.kind == "c":
            low = "(np.int64(float_as_int(np.float32({}))) & 0xffffffff)"
            return f"np.uint64({low.format(c + '.real')} | ({low.format(c + '.imag')} << 32))"
        if dt.kind == "f":
            return (f"np.uint32(float_as_int({c}))" if dt.itemsize == 4
                    else f"np.uint64(double_as_longlong({c}))")
        return f"np.{dt.name}({c})"
    mask = (1 << dt.itemsize * 8) - 1
    v = f"(1 if {c} else 0)" if dt.kind == "b" else f"(np.int64({c}) & {mask})"
    return f"np.uint32((np.int64({w}) & ~({mask} << {shift})) | ({v} << {shift}))"


# ---- the bit casts the loops call (module-level names of every generated CUDA module) -------
def _simulated_casts():
    """libdevice's bit casts in NumPy (the simulator's libdevice functions return None)."""
    def cast(src, dst):
        return lambda x: np.array(x, src).view(dst)[()]
    return (cast(np.int32, np.float32), cast(np.float32, np.int32),
            cast(np.int64, np.float64), cast(np.float64, np.int64))


_CASTS = ("int_as_float", "float_as_int", "longlong_as_double", "double_as_longlong")
MODULE_LINE = f"from xforms.kernels.cuda.printer.cas import ({', '.join(sorted(_CASTS))})"


def __getattr__(name):
    """The bit casts, resolved when a generated module imports them (CPU use of xforms
    imports this module, never numba.cuda)."""
    if name not in _CASTS:
        raise AttributeError(name)
    from xforms.kernels.cuda.runtime import simulating
    if simulating():
        casts = _simulated_casts()
    else:
        from numba.cuda import libdevice
        casts = [getattr(libdevice, n) for n in _CASTS]
    globals().update(zip(_CASTS, casts))
    return globals()[name]
