"""A compile-time fix for Numba, applied when `kernels` is imported.

Numba's `Lower._find_singly_assigned_variable` rescans a block's whole body for every
variable defined in it, so lowering a long straight-line function (the gradient of a long
scalar program: a thousand statements in one block) takes time quadratic in its length --
13 of 17 seconds for 1200 statements here.  The replacement below computes the same set
with one pass per block.  It is installed only if Numba's method still looks like the one
it replaces (same name, same attributes used); otherwise Numba is left untouched.
"""
from collections import Counter, defaultdict

_PATCHED = False


def _find_singly_assigned_variable(self):
    from numba.core import ir
    from numba.core.analysis import compute_use_defs, must_use_alloca
    blocks = self.func_ir.blocks
    sav = set()
    if not self.func_ir.func_id.is_generator:
        use_defs = compute_use_defs(blocks)
        alloca_vars = must_use_alloca(blocks)
        var_assign_map = defaultdict(set)
        for blk, vl in use_defs.defmap.items():
            for var in vl:
                var_assign_map[var].add(blk)
        var_use_map = defaultdict(set)
        for blk, vl in use_defs.usemap.items():
            for var in vl:
                var_use_map[var].add(blk)
        assign_counts = {}
        for var, defblks in var_assign_map.items():
            if var in alloca_vars or len(defblks) != 1 or var_use_map[var]:
                continue
            [defblk] = defblks
            counts = assign_counts.get(defblk)
            if counts is None:        # how often each name is assigned in the block
                counts = Counter(stmt.target.name
                                 for stmt in self.blocks[defblk].find_insts(ir.Assign))
                assign_counts[defblk] = counts
            if counts[var] == 1:
                sav.add(var)
    self._singly_assigned_vars = sav
    self._blk_local_varmap = {}


def apply():
    global _PATCHED
    if _PATCHED:
        return
    try:
        import inspect

        from numba.core import lowering
        original = lowering.Lower._find_singly_assigned_variable
        src = inspect.getsource(original)
        if "find_insts(ir.Assign)" in src and "_singly_assigned_vars" in src:
            lowering.Lower._find_singly_assigned_variable = _find_singly_assigned_variable
    except Exception:          # a different Numba: keep its own implementation
        pass
    _PATCHED = True
