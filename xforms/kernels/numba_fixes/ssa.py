"""Numba's SSA reconstruction without two whole-function passes per reassigned name.

Numba's `ssa._run_ssa` fixes one "violator" (a name assigned more than once) at a time, and
for each one rewrites every statement of the function twice (fresh names for its
definitions, then each use re-pointed at its reaching definition); each use also finds its
own position, and that of the definitions before it, by a linear scan of its block.  A
generated kernel has hundreds of violators (the loop counters `i0`..`i4`, and the scalars
of every loop that stencil peeling copies three times), so this pass took time
proportional to violators x statements: minutes for the DP-SGD example's per-example
gradient (80 slice-written convolution taps under `vmap(grad)`, 5,000 statements, 259
violators).  Upstream: numba/numba#6133 (the SSA pass's compile time on large kernels) and
the CFG caching of numba/numba#5645 did not change the per-violator passes.

The replacement produces the same IR, name for name: violators are fixed in the same
order, and each pass visits, in the same order, only the blocks whose statements name the
violator (the others would pass through unchanged: the handlers act only on statements
that name it); phi nodes still go wherever the algorithm puts them.  Statement positions
are looked up in a table built once per block and pass.

    >>> from numba.core import ssa
    >>> ssa._run_ssa = make_run_ssa(ssa)      # what xforms/kernels/numba_fixes/patches.py installs
"""


def _blocks_naming(blocks, names):
    """{name: set of labels of the blocks whose statements list the name} for `names`."""
    where = {n: set() for n in names}
    for label, blk in blocks.items():
        for stmt in blk.body:
            for var in stmt.list_vars():
                hit = where.get(var.name)
                if hit is not None:
                    hit.add(label)
    return where


def make_run_ssa(ssa):
    """A drop-in `_run_ssa(blocks)` for Numba's `numba.core.ssa` module `ssa`."""
    ir, errors = ssa.ir, ssa.errors

    class FixVars(ssa._FixSSAVars):
        """Numba's handler; `_stmt_index` by table instead of a scan of the block."""

        def __init__(self, cache_list_vars):
            super().__init__(cache_list_vars)
            self._positions = {}

        def _stmt_index(self, defstmt, block, stop=-1):
            entry = self._positions.get(id(block))
            if entry is None or entry[0] is not block:
                table = {}
                for i, s in enumerate(block.body):
                    table.setdefault(id(s), i)
                entry = self._positions[id(block)] = (block, table)
            n = len(block.body)
            i = entry[1].get(id(defstmt))
            # Numba scans range(n)[:stop]: stop=-1 (the default) leaves the last statement out
            return i if i is not None and i < len(range(n)[:stop]) else n

    def rewrite(blocks, states, handler, touched):
        out = {}
        for label, blk in blocks.items():
            if label not in touched:
                out[label] = blk
                continue
            new = ir.Block(scope=blk.scope, loc=blk.loc)
            states["label"], states["block"] = label, blk
            new.body = list(ssa._run_ssa_block_pass(states, blk, handler))
            out[label] = new
        return out

    def fresh_vars(blocks, varname, touched):
        states = ssa._make_states(blocks)
        states["varname"] = varname
        states["defmap"] = defmap = ssa.defaultdict(list)
        return rewrite(blocks, states, ssa._FreshVarHandler(), touched), defmap

    def fix_vars(blocks, varname, defmap, cfg, df_plus, cache_list_vars, touched):
        states = ssa._make_states(blocks)
        states.update(varname=varname, defmap=defmap, phimap=ssa.defaultdict(list), cfg=cfg,
                      phi_locations=ssa._compute_phi_locations(df_plus, defmap))
        out = rewrite(blocks, states, FixVars(cache_list_vars), touched)
        for label, philist in states["phimap"].items():
            blk = out[label]
            if blk is blocks[label]:          # untouched so far: never mutate the input
                blk = out[label] = _copy_block(ir, blk)
            blk.body = philist + blk.body
        return out

    def _run_ssa(blocks):
        if not blocks:
            return {}
        cfg = ssa.compute_cfg_from_blocks(blocks)
        df_plus = ssa._iterated_domfronts(cfg)
        violators = ssa._find_defs_violators(blocks, cfg)
        cache_list_vars = ssa._CacheListVars()
        where = _blocks_naming(blocks, violators)
        # fresh Block objects throughout, as Numba returns (the caller's are left alone)
        blocks = {label: _copy_block(ir, blk) for label, blk in blocks.items()}
        for varname in violators:
            touched = where[varname]
            blocks, defmap = fresh_vars(blocks, varname, touched)
            blocks = fix_vars(blocks, varname, defmap, cfg, df_plus, cache_list_vars, touched)
        if ssa.compute_cfg_from_blocks(blocks) != cfg:
            raise errors.CompilerError("CFG mutated in SSA pass")
        return blocks
    _run_ssa.__wrapped__ = ssa._run_ssa
    return _run_ssa


def _copy_block(ir, blk):
    new = ir.Block(scope=blk.scope, loc=blk.loc)
    new.body = list(blk.body)
    return new
