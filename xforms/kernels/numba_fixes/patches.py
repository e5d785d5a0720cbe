"""Compile-time fixes for Numba, applied when `build.codecache` is imported (the first program
Numba compiles: `kernels` imports no Numba until then).

1. Numba resolves the signature of every call to a built-in function (`a * b`, `math.sin`,
   `A[i, j]`) from scratch: it tries each registered template in turn, the NumPy ufunc
   ones included, about 1.5 ms per statement -- at typing and again at lowering.  Typing
   is a pure function of the argument types, so `get_call_type` is memoised per function
   type for arguments that are plain numbers, arrays and tuples of them (never literal
   types, whose templates may look at values; failures are not memoised).  This halves the
   Numba compile of a long scalar gradient.  (No upstream issue found.)
2. Smaller per-statement costs of the same kind: `Inst._rec_list_vars` (every analysis
   pass lists each statement's variables; the recursive isinstance chain was a fifth of
   the compile of a long straight-line kernel) dispatches on the value's type instead;
   lowering a binary operation no longer builds and discards a typing exception to find
   that its operands are not constants; whether an implementation takes `loc` is looked
   up once per implementation rather than once per statement.  (No upstream issue found.)
3. Numba's SSA reconstruction makes two passes over the whole function per reassigned
   name (xforms/kernels/numba_fixes/ssa.py): minutes for a kernel of 5,000 statements and 259 such
   names; the replacement visits only the blocks that name each one (upstream: the SSA pass's
   compile time, numba/numba#6133).
4. Numba's block liveness builds, for every block, the set of every name defined upstream:
   blocks x names in time and memory (xforms/kernels/numba_fixes/liveness.py computes it on bit sets;
   upstream numba/numba#10616 cut the number of fix-point rounds, not the sets' size).
5. `fixup_var_define_in_scope` walks every used name once per block (blocks x names);
   the blocks share one or a few scopes, and each scope is now walked once.  (No upstream
   issue found.)
6. Every array a kernel allocates reached the allocator through a trampoline compiled per
   array type in each process (xforms/kernels/numba_fixes/alloc.py calls the NRT allocator directly).
3-4 also for numba-cuda: it compiles kernels with its own copy of the compiler core
   (numba.cuda.core), where `apply_cuda()` installs them at xforms' first GPU compile.
7. Not a fix but a choice: modules built while xforms compiles a kernel ask LLVM for
   512-bit vectors where the CPU has them (xforms/kernels/numba_fixes/vector_width.py).
8. Numba's first set-up in a process imported `scipy.linalg` (its BLAS check) and, through
   rocket-fft's entry point, `scipy.fft`: xforms' kernels import them where they use BLAS
   or an FFT, and its target set-up imported implementations no kernel calls (np.random
   generators, polynomials, typed containers): set up where a user's
   own Numba code needs them (xforms/kernels/numba_fixes/extensions.py).
Each patch is installed only if Numba's code still looks like the code it replaces (same
names, same attributes used); otherwise Numba is left untouched.  xforms/kernels/numba_fixes/registry.py
lists them all (target, what it works around, the hash of the Numba code it was written
for); tests/kernels/numba/test_numba_registry.py fails where one is not installed, and
tools/check_numba_upgrade.py says which still apply to a newer Numba.  (Lowering's
`_find_singly_assigned_variable`, once quadratic in a block's length, was replaced here too
until Numba's own became one pass per block: numba/numba#10387, in 0.67 and 0.68.)
"""

from .registry import ORIGINALS, install_patch as _install  # noqa: F401  (ORIGINALS: tests)

_PATCHED = False


def _memoised_get_call_type(original):
    from numba.core import types
    from numba.core.target_extension import get_local_target

    plain = (types.Number, types.Boolean, types.Array, types.SliceType)

    def is_plain(t):
        if isinstance(t, types.Literal):
            return False
        if isinstance(t, types.BaseTuple):
            return all(is_plain(x) for x in t)
        return isinstance(t, plain)

    def get_call_type(self, context, args, kws):
        if kws or not all(is_plain(a) for a in args):
            return original(self, context, args, kws)
        key = (type(context), get_local_target(context), tuple(args))
        memo = self.__dict__.get("_xforms_call_types")
        if memo is None:
            memo = self.__dict__["_xforms_call_types"] = {}
        sig = memo.get(key)
        if sig is None:
            sig = original(self, context, args, kws)   # raises on failure: nothing memoised
            if sig is not None:
                memo[key] = sig
        return sig
    get_call_type.__wrapped__ = original
    return get_call_type


def _fast_rec_list_vars():
    """Numba's `Inst._rec_list_vars` (same result, same order) with the isinstance chain
    replaced by one lookup of the value's type."""
    from numba.core import ir
    stmt_list_vars, expr_list_vars = ir.Stmt.list_vars, ir.Expr.list_vars
    leaf, var, seq, mapping, stmt, expr, inst = range(7)
    kinds = {}

    def kind_of(t):
        if issubclass(t, ir.Var):
            k = var
        elif issubclass(t, ir.Inst):
            lv = getattr(t, "list_vars", None)
            k = stmt if lv is stmt_list_vars else expr if lv is expr_list_vars else inst
        elif issubclass(t, (list, tuple)):
            k = seq
        elif issubclass(t, dict):
            k = mapping
        else:
            k = leaf
        kinds[t] = k
        return k

    def collect(val, out):
        k = kinds.get(type(val))
        if k is None:
            k = kind_of(type(val))
        if k == leaf:
            return
        if k == var:
            out.append(val)
        elif k == seq:
            for v in val:
                collect(v, out)
        elif k == mapping or k == stmt:          # Stmt.list_vars lists its __dict__
            for v in (val if k == mapping else val.__dict__).values():
                collect(v, out)
        elif k == expr:                          # Expr.list_vars lists its _kws
            for v in val._kws.values():
                collect(v, out)
        else:                                    # an instruction with its own list_vars
            out.extend(val.list_vars())

    def _rec_list_vars(self, val):
        out = []
        collect(val, out)
        return out
    return _rec_list_vars


def _lit_or_omitted_fast(original):
    from numba.core import ir
    undefined = original(ir.UNDEFINED)     # Omitted(UNDEFINED), after a caught exception

    def _lit_or_omitted(value):
        return undefined if value is ir.UNDEFINED else original(value)
    return _lit_or_omitted


def _has_loc_memoised(original):
    import weakref
    memo = weakref.WeakKeyDictionary()

    def _has_loc(fn):
        try:
            return memo[fn]
        except (KeyError, TypeError):
            pass
        r = original(fn)
        try:
            memo[fn] = r
        except TypeError:        # not weak-referenceable: not memoised
            pass
        return r
    return _has_loc


def _fixup_var_define_in_scope(blocks):
    """Numba's, walking the used names once per distinct scope rather than per block (the
    defines are idempotent per scope, so the result is the same)."""
    used_var = {}
    for blk in blocks.values():
        for inst in blk.body:
            for var in inst.list_vars():
                used_var[var] = inst
    seen = set()
    for blk in blocks.values():
        scope = blk.scope
        if id(scope) in seen:
            continue
        seen.add(id(scope))
        for var in used_var:
            if var.name not in scope.localvars:
                scope.localvars.define(var.name, var)


def _install_scope_fixup():
    from numba.core import ir_utils
    check = lambda src: ("for var, inst in used_var.items()" in src  # noqa: E731
                         and "scope.localvars.define(var.name, var)" in src)
    _install(ir_utils, "fixup_var_define_in_scope", check,
             lambda original: _fixup_var_define_in_scope)


def _install_liveness(analysis):
    """`analysis`: numba.core.analysis, or numba-cuda's own copy of it."""
    from . import liveness as numba_liveness
    _install(analysis, "compute_live_map",
             lambda src: all(w in src for w in ("def def_reach(dct)", "def liveness(dct)",
                                                "fix_point(def_reach, def_reach_map)")),
             numba_liveness.make_compute_live_map)


def _install_ssa(ssa):
    """`ssa`: numba.core.ssa, or numba-cuda's own copy of it (formatted otherwise: the
    check reads the source without its white space)."""
    from .source import source_of

    from . import ssa as numba_ssa

    def check(src):
        flat = "".join(src.split())
        return ("forvarnameinviolators" in flat and "_fresh_vars(blocks,varname)" in flat
                and "_fix_ssa_vars(blocks,varname,defmap,cfg,df_plus" in flat
                # the method's source, not the class's (a class's is found by parsing its
                # whole module: 40 ms of every process's import)
                and all(w in source_of(ssa._FixSSAVars._stmt_index) for w in
                        ("def _stmt_index(self, defstmt, block, stop=-1)",
                         "range(len(block.body))[:stop]")))
    _install(ssa, "_run_ssa", check, lambda original: numba_ssa.make_run_ssa(ssa))


_CUDA_PATCHED = False


def apply_cuda():
    """numba-cuda (0.2x and later) compiles kernels with its own copy of Numba's compiler
    core (numba.cuda.core), which the fixes above do not reach: the SSA reconstruction and
    the block liveness are installed there too, with the same checks (called where xforms
    first compiles for a GPU, and by tests/cuda/ptx_check.py).  Same IR, same live sets;
    the PTX check's typing and lowering, 6 programs: 46.5 CPU s before, 39.5 after."""
    global _CUDA_PATCHED
    if _CUDA_PATCHED:
        return
    apply()
    try:
        from numba.cuda.core import analysis, ssa
    except ImportError:        # an older numba-cuda, on numba.core: patched by apply()
        return
    _install_ssa(ssa)
    _install_liveness(analysis)
    _CUDA_PATCHED = True


def apply():
    global _PATCHED
    if _PATCHED:
        return
    from .source import source_of
    from numba.core import base, ir, lowering
    from numba.core.types import functions
    _install(functions.BaseFunction, "get_call_type",
             lambda src: ("self.templates" in src and "self._impl_keys[sig.args]" in src
                          and "def get_call_type(self, context, args, kws)" in src),
             _memoised_get_call_type)
    _install(ir.Inst, "_rec_list_vars",
             lambda src: (all(f"isinstance(val, {t})" in src for t in ("Var", "Inst", "dict"))
                          and "val.list_vars()" in src
                          and "_rec_list_vars(self.__dict__)" in source_of(
                              ir.Stmt.list_vars)
                          and "_rec_list_vars(self._kws)" in source_of(
                              ir.Expr.list_vars)),
             lambda original: _fast_rec_list_vars())
    _install(lowering, "_lit_or_omitted",
             lambda src: "types.literal(value)" in src and "types.Omitted(value)" in src,
             _lit_or_omitted_fast)
    _install(base, "_has_loc", lambda src: "'loc' in sig.parameters" in src,
             _has_loc_memoised)
    from numba.core import ssa
    _install_ssa(ssa)
    from numba.core import analysis
    _install_liveness(analysis)
    _install_scope_fixup()
    from . import alloc as numba_alloc, vector_width
    numba_alloc.install()
    vector_width.install()
    from . import extensions
    extensions.install(_install)
    _PATCHED = True
