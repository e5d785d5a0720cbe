"""A scan's stacked outputs computed in their rows, in CUDA's host code (issue 34): the hooks
of xforms/kernels/loops/control_print.py that `_HostControl` (control.py) takes from here,
as the CPU's printer has its own (cpu/numba/control.py).

    _rt.copy_into(K[0:4096], H)                  # row 0 of h's rows (K's first): h0
    for _i1 in range(100):
        S1_AN = J[_i1 * 4096:(_i1 + 1) * 4096]      # the new h, made in its row (was
        _K[1](..., S1_AN)                            # _rt.empty and a copy into J a step)
        H = S1_AN                                    # the next step reads it there

cliffs' LSTM gradient at sm_90: 1804 device copies and 1600 buffers a call before, 8 and 0.
"""

from xforms.core.ir import Var

from ...plan.scan_rows import stepped_rows
from ..packing import Home


class ScanRows:
    """The row hooks of CUDA's host control printer (a ControlPrinter with `em` and
    `_rows(stacked, i)`, the host expression of row i); the rest of the rows' logic
    (rows_in_place, keep_carries, restore_carries) is the CPU's, in ControlPrinter."""
    ROW_SCALARS, KEEP = True, "keep"

    def row_view(self, y, i):
        return self._rows(y, i)

    def copy_into(self):
        return "_rt.copy_into"

    def stack_rows(self, body, params, c_outs, ys):
        """A carry whose input the body also stacks (a gradient's residual: the LSTM's `h`
        and `c` of the step before) steps through the rows of one workspace buffer of
        n + 1 rows, as on the CPU (cpu/numba/control.py): the input of step t is its row t
        (row 0 the initial value), the body computes the new carry in row t + 1 (reverse
        scans the other way round), the stacked input is the window of rows 0..n-1 and a
        stacked new carry that of rows 1..n -- no row copied a step.

            _rt.copy_into(K[0:4096], H)          # row 0: the initial h (K: rows 0..n-1)
            for _i1 in range(100):
                S1_AN = J[_i1 * 4096:(_i1 + 1) * 4096]       # J: rows 1..n of that buffer
        """
        em, nc, n = self.em, params["num_carry"], params["length"]
        self.num_carry, self.stepped, done = nc, set(), set()
        rows = [(nc + m, y) for m, y in enumerate(ys)]
        for j, y, z in stepped_rows(em.plan, body, params, ys):
            if z is None:                    # the new carry gets rows of its own
                z = Var(y.aval)
                rows.append((j, z))
            sz = y.aval.size // n
            buf = em.mem_home((n + 1) * sz, y.aval.dtype)
            first = 1 if params["reverse"] else 0
            for v, at in ((y, first), (z, 1 - first)):
                em.bound.add(v)
                em.loc[v] = "dev"
                em.bind_home(v, Home(buf.pname, buf.host, buf.off + at * sz, n * sz,
                                     buf.dtype, "mem"))
            r = n - 1 if params["reverse"] else 0     # (the initial row: y's first read)
            em.line(f"_rt.copy_into({em.A(y)}[{r * sz}:{(r + 1) * sz}], {em.A(c_outs[j])})")
            self.stepped.add(y)
            done.update((y, z))
        for y in ys:
            if y not in done:
                em.alloc(y)
        return rows
