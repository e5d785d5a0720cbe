"""The fusion plan: the backend-neutral steps a Jaxpr becomes (xforms/kernels/plan/fusion.py builds it),
which the CPU emitter (`cpu/numba/emit.py`) and the CUDA emitter both turn into code.  The plan
holds every decision; a backend only chooses how to spell each step.  Pure Python, no Numba.

Data structures (all read-only once built):

- `Read(atom, imap)`: an operand of a loop-body equation.  `atom` is a `Literal`, or a `Var`
  that is *local* to the loop (computed earlier in the same body: `imap` is None), or a
  *materialized* Var read through `imap` (an `index_maps.IndexMap`; None for rank-0 values,
  held as scalars).
- `Loop(shape, body, writes)`: one fused loop nest over the iteration space `shape`.
  `body` is a list of `(eqn, reads)`, in order: elementwise equations, view equations
  acting as copies (their one read carries the view's map), and reductions (their operand
  has the loop's shape; their output, of the kept axes, is written when the reduction
  completes).  `writes` lists the Vars of the loop's shape that leave the loop (stored at
  the loop index).  A rank-0 `Loop` is straight-line scalar code.  `products`: matrix
  products `(eqn, reads)` of the loop's shape that the body reads at the loop index and
  that are computed inside the loop, a block of rows at a time, never stored whole
  (xforms/kernels/plan/products.py; CPU plans only).
- `Op(eqn, acc)`: one equation emitted by a per-primitive rule: dot_general, gather, scatter,
  scatter_add, dynamic_slice, dynamic_update_slice, pad (by a traced value: a pad by a
  literal is a guarded read), concatenate, general reshape.
  Its operands and outputs are materialized.  `acc` (a product only): a materialized Var
  of the output's shape that the product is added into, `out = acc + x . y`.
- `Control(eqn, subplans)`: a higher-order primitive (cond, switch, while, scan, ...)
  with one sub-`Plan` per ClosedJaxpr in its params, in the order of `subjaxprs(eqn)`.
  Backends emit a real branch or loop around the sub-plans' code.
- `Plan(jaxpr, steps, materialized, storage, reuse, outputs, consts)`: `materialized` is the
  set of Vars that exist outside loops (rank-0 ones are scalars, the rest buffers); `consts`
  the values of `jaxpr.constvars` (backends pass them as arguments, never as globals).
  `storage` and `reuse` say which buffer each value lives in (xforms/kernels/plan/storage.py).

    >>> print(plan_program(make_jaxpr(lambda x: sin(x) * 2 + x @ x)(a)).dump())
    step 0: op dot_general
    step 1: loop (4, 4): sin mul add -> 1 writes
"""
from dataclasses import dataclass, field

from xforms.core.ir import ClosedJaxpr, Jaxpr


def subjaxprs(eqn):
    """The ClosedJaxprs in an equation's params, in a fixed order: (param name, index, jaxpr)."""
    out = []
    for k in sorted(eqn.params):
        v = eqn.params[k]
        if isinstance(v, ClosedJaxpr):
            out.append((k, None, v))
        elif isinstance(v, tuple) and v and all(isinstance(x, ClosedJaxpr) for x in v):
            out.extend((k, i, x) for i, x in enumerate(v))
    return out


@dataclass(frozen=True)
class Read:
    atom: object            # Var or Literal
    imap: object = None     # IndexMap for materialized non-scalar reads; None otherwise


@dataclass
class Loop:
    shape: tuple
    body: list              # [(eqn, [Read, ...]), ...]
    writes: list            # Vars written out at the loop index
    products: list = field(default_factory=list)    # [(dot_general eqn, [Read, ...]), ...]

    kind = "loop"


@dataclass
class Op:
    eqn: object
    # a materialized Var the product adds into (dot_general only: out = acc + x . y, BLAS's
    # beta = 1; xforms/kernels/plan/products.py `accumulate_products`), in its buffer when
    # it dies here (storage); None: a plain step
    acc: object = None
    kind = "op"


@dataclass
class Control:
    eqn: object
    subplans: list          # one Plan per entry of subjaxprs(eqn)
    kind = "control"


@dataclass
class Plan:
    jaxpr: Jaxpr
    steps: list
    materialized: set
    storage: dict = field(default_factory=dict)     # Var -> Storage
    reuse: dict = field(default_factory=dict)       # Var -> Var whose buffer it takes over
    outputs: list = field(default_factory=list)     # jaxpr.outvars
    consts: list = field(default_factory=list)      # values of jaxpr.constvars
    tied: list = field(default_factory=list)        # (Var, Var) views of one buffer, live
                                                    # together (fusion.stepped_carries)
    placed: dict = field(default_factory=dict)      # Var -> placement.Slot (CPU plans)

    def dump(self):
        """A readable listing of the plan, for XFORMS_DUMP=1 and tests."""
        lines = []
        for k, st in enumerate(self.steps):
            if st.kind == "loop":
                prims = " ".join([f"[{e.prim.name}]" for e, _ in st.products]
                                 + [e.prim.name for e, _ in st.body])
                lines.append(f"step {k}: loop {st.shape}: {prims} -> {len(st.writes)} writes")
            elif st.kind == "op":
                acc = " (accumulating)" if st.acc is not None else ""
                lines.append(f"step {k}: op {st.eqn.prim.name}{acc}")
            else:
                lines.append(f"step {k}: control {st.eqn.prim.name} "
                             f"({len(st.subplans)} sub-plans)")
        return "\n".join(lines)


def subplans(step):
    """A Control step's sub-plans keyed by param name, or (name, index) in a tuple param."""
    return {name if idx is None else (name, idx): plan
            for (name, idx, _), plan in zip(subjaxprs(step.eqn), step.subplans)}


