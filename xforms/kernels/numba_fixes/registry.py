"""Every Numba (and llvmlite) internal that xforms replaces, in one table, and whether each
replacement holds.

`xforms.kernels.numba_fixes.patches.apply()` (run when `build.codecache` is imported) installs each patch only
where Numba's code still reads as the patch assumes; otherwise Numba is left alone, silently,
and compiles get slower again (multi-second compiles of long generated kernels).  This table
lets a test (tests/kernels/numba/test_numba_registry.py) and the upgrade check
(tools/check_numba_upgrade.py) say which patches hold on a given Numba.

A patch is *installed* when the attribute it names is a function of this package whose
`__wrapped__` is Numba's own, and no loaded Numba module still holds Numba's own under that
name (`aliases` lists the modules known to import it by name; they are imported to check).
A patch that swaps the class of one object instead (`swaps`: llvmlite's lock, which the
direct LLVM path makes skippable, xforms/kernels/cpu/llvm/engine.py `_liftable_lock`) is
installed when that object's class is a class of `module` derived from the target class.

Numba's own source is hashed (`source_hash`; `xforms.kernels.numba_fixes.source.source_of` follows
`__wrapped__`, so the hash is the same before and after patching): a hash other than the one
recorded here says that Numba changed the code a patch replaces, even where the patch still
installs -- read the new code before trusting it.  The hashes are those of Numba 0.68.1
(the range pinned in pyproject.toml).

    >>> from xforms import kernels         # applies the patches
    >>> from xforms.kernels.numba_fixes.registry import PATCHES, status
    >>> [p.name for p in PATCHES if status(p) != "ok"]      # on the pinned Numba
    []
"""
import hashlib
import importlib
import sys
from typing import NamedTuple, Tuple


class Patch(NamedTuple):
    """One replaced Numba internal: `target` is "module:qualified.name"."""
    name: str
    target: str
    works_around: str
    upstream: str                   # Numba's issue or pull request about it, if any
    numba_sha: str                  # source_hash of Numba 0.68.1's own function
    aliases: Tuple[str, ...] = ()   # modules that imported the function by name
    module: str = "xforms.kernels.numba_fixes.patches"   # where the replacement lives
    swaps: str = ""                 # "module:path" of an object whose class is swapped


PATCHES = (
    Patch("call-type-memo", "numba.core.types.functions:BaseFunction.get_call_type",
          "every call of a built-in function re-resolved from all templates (~1.5 ms a"
          " statement, at typing and at lowering)", "", "6559c167bfc0"),
    Patch("rec-list-vars", "numba.core.ir:Inst._rec_list_vars",
          "isinstance chain per value in every analysis pass's variable listing", "",
          "054700e9100b"),
    Patch("lit-or-omitted", "numba.core.lowering:_lit_or_omitted",
          "a typing exception built and discarded per binary operation", "", "3127b8a3b024"),
    Patch("has-loc-memo", "numba.core.base:_has_loc",
          "an implementation's signature inspected once per statement", "", "a36125186f3d"),
    Patch("ssa", "numba.core.ssa:_run_ssa",
          "two whole-function passes per reassigned name (minutes on 5,000 statements)",
          "numba/numba#6133", "c497422bcf04", module="xforms.kernels.numba_fixes.ssa"),
    Patch("liveness", "numba.core.analysis:compute_live_map",
          "per-block sets of every upstream name: blocks x names in time and memory",
          "numba/numba#10616", "713c4c094977",
          aliases=("numba.core.ir_utils", "numba.parfors.parfor"),
          module="xforms.kernels.numba_fixes.liveness"),
    # numba-cuda's own copy of the compiler core (numba.cuda.core; patches.apply_cuda, where
    # xforms first compiles for a GPU): hashes of numba-cuda 0.30.4's
    Patch("cuda-ssa", "numba.cuda.core.ssa:_run_ssa",
          "the same SSA pass in numba-cuda's copy (kernels for a GPU)", "numba/numba#6133",
          "aa09fda773d9", module="xforms.kernels.numba_fixes.ssa"),
    Patch("cuda-liveness", "numba.cuda.core.analysis:compute_live_map",
          "the same liveness in numba-cuda's copy (kernels for a GPU)", "numba/numba#10616",
          "cdb51290c165", aliases=("numba.cuda.core.ir_utils",),
          module="xforms.kernels.numba_fixes.liveness"),
    Patch("scope-fixup", "numba.core.ir_utils:fixup_var_define_in_scope",
          "every used name walked once per block (blocks x names)", "", "c03c25da13de",
          aliases=("numba.core.untyped_passes", "numba.parfors.parfor_lowering")),
    Patch("alloc", "numba.np.arrayobj:_empty_nd_impl",
          "an allocator trampoline compiled per array type in every process", "",
          "009ebfa261e3", aliases=("numba.np.linalg", "numba.np.arraymath"),
          module="xforms.kernels.numba_fixes.alloc"),
    Patch("vector-width", "numba.core.codegen:CPUCodeLibrary.add_ir_module",
          "LLVM's 256-bit preference on AVX-512 CPUs (tags xforms' kernels 512-bit)",
          "numba/numba#5757", "fb6dd665f0f6", module="xforms.kernels.numba_fixes.vector_width"),
    Patch("lazy-extensions", "numba.core.entrypoints:init_all",
          "rocket-fft's entry point imports scipy.fft and scipy.special in every process",
          "", "8cad7f8ebbb5", module="xforms.kernels.numba_fixes.extensions"),
    Patch("lean-registries", "numba.core.cpu:CPUContext.load_additional_registries",
          "the target set-up imports np.random, polynomial and typed-container"
          " implementations no kernel calls (0.04 s of every process)", "",
          "0383d5716d37", module="xforms.kernels.numba_fixes.extensions"),
    Patch("llvmlite-lock", "llvmlite.binding.ffi:_LLVMLock",
          "llvmlite's one lock around every LLVM call: two compiles on two threads took"
          " turns, each in an LLVM context of its own (a nest compiled aside never ran"
          " beside the kernel's LLVM work)", "", "674e02dc78ae",
          module="xforms.kernels.cpu.llvm.engine", swaps="llvmlite.binding.ffi:lib._lock"),
)


def resolve(target):
    """The object `target` ("module:a.b") names, or None where Numba no longer has it."""
    module, _, path = target.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in path.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return obj


def replace_aliases(name, original, replacement):
    """Point every loaded Numba module that imported `original` by `name` at `replacement`
    (modules imported later import the replacement from its home)."""
    for mod in _numba_modules():
        if vars(mod).get(name) is original:
            setattr(mod, name, replacement)


def _numba_modules():
    return [m for n, m in list(sys.modules.items())
            if n.partition(".")[0] == "numba" and hasattr(m, "__dict__")]


def _is_ours(fn, patch):
    return getattr(fn, "__module__", None) == patch.module and hasattr(fn, "__wrapped__")


def installed(patch):
    """Whether `patch` replaces its target, its listed aliases, and every other name by which
    a loaded Numba module still holds Numba's own function (a class swap: whether the
    object's class is the patch's, derived from the target class)."""
    if patch.swaps:
        cls, base = type(resolve(patch.swaps)), resolve(patch.target)
        return cls.__module__ == patch.module and cls.__bases__ == (base,)
    fn = resolve(patch.target)
    if not _is_ours(fn, patch):
        return False
    attr = patch.target.partition(":")[2].rpartition(".")[2]
    aliases = [resolve(f"{m}:{attr}") for m in patch.aliases]
    left = [m for m in _numba_modules() if vars(m).get(attr) is fn.__wrapped__]
    return all(a is fn for a in aliases) and not left


def source_hash(fn):
    """A short hash of Numba's own source of `fn` (through our replacement's `__wrapped__`;
    a class: its whole source)."""
    from .source import source_of
    return hashlib.sha256(source_of(fn).encode()).hexdigest()[:12]


def status(patch, check_installed=True):
    """"ok", "missing" (Numba no longer has the target), "not installed" (the patch's own
    check refused Numba's code) or "changed" (installed, over code other than 0.68.1's)."""
    fn = resolve(patch.target)
    if fn is None:
        return "missing"
    if check_installed and not installed(patch):
        return "not installed"
    try:
        same = source_hash(fn) == patch.numba_sha
    except (OSError, TypeError):
        same = False
    return "ok" if same else "changed"


ORIGINALS = {}     # (owner, name) -> Numba's own function, for each patch installed


def install_patch(owner, name, check, make):
    """Replace `owner.name` by `make(original)` if `check(source of original)`, in the Numba
    modules that imported it by name too; the original is kept in ORIGINALS (tests compare
    against it)."""
    from .source import source_of
    try:
        original = getattr(owner, name)
        if check(source_of(original)):
            replacement = make(original)
            replacement.__wrapped__ = original    # `installed` and source_of read it
            setattr(owner, name, replacement)
            replace_aliases(name, original, replacement)
            ORIGINALS[(owner, name)] = original
    except Exception:          # a different Numba: keep its own implementation
        pass
