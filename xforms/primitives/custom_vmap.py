"""custom_vmap_call: a function with its own batching rule (`xforms.custom_batching`).

custom_vmap_call(*consts, *args; call_jaxpr, rule, num_consts, name) -> outs
    outs = call_jaxpr(*consts, *args).  LOWER: inline `call_jaxpr`.
    Under vmap, `rule(axis_size, in_batched, args)` (flat lists; batched args with their
    batch axis at 0) -> (outs, out_batched) gives the batched result; an unbatched output is
    broadcast.  `rule.jvp(nonzeros)` is the rule of the jvp'd call: jvp gives a
    custom_vmap_call of the jvp'd function, so vmap of a jvp batches with the rule's
    derivative, as JAX does.  Reverse mode outside vmap is an error, as in JAX.
"""
from ..core import trace as core
from ..core.facts import CALL, declare
from ..core.registry import primitive
from ..core.trace import abstract_eval_rules, impl_rules
from ..transforms.jvp import Zero, instantiate, jvp_jaxpr, jvp_rules
from ..transforms.partial_eval import partial_eval_rules
from ..transforms.transpose import transpose_rules
from ..transforms.vmap import bdim_to_front, vmap_rules
from .custom import batched_outputs

custom_vmap_call_p = primitive("custom_vmap_call", multiple_results=True)
declare(custom_vmap_call_p, CALL,
        inline=lambda eqn: eqn.params["call_jaxpr"] if eqn.prim is custom_vmap_call_p else None)
abstract_eval_rules[custom_vmap_call_p] = lambda *avals, call_jaxpr, **_: list(
    call_jaxpr.out_avals)
impl_rules[custom_vmap_call_p] = lambda *args, call_jaxpr, **_: core.eval_jaxpr(call_jaxpr,
                                                                                *args)


def _vmap(args, dims, *, call_jaxpr, rule, num_consts, name):
    if any(d is not None for d in dims[:num_consts]):
        raise TypeError(f"custom_vmap function {name} closes over a value that vmap batches: "
                        "pass it to the function as an argument, so its rule sees it")
    size = next(core.get_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    xs = [a if d is None else bdim_to_front(a, d, size)
          for a, d in zip(args[num_consts:], dims[num_consts:])]
    outs, out_b = rule(size, [d is not None for d in dims[num_consts:]], xs)
    res = []
    for k, (o, b, aval) in enumerate(zip(outs, out_b, call_jaxpr.out_avals)):
        want = ((size,) if b else ()) + aval.shape
        got = core.get_aval(o)
        if got.shape != want or got.dtype != aval.dtype:
            raise TypeError(f"the vmap rule of custom_vmap function {name} returned output {k} "
                            f"as {got.str_short()}, but {aval.dtype}{list(want)} was expected "
                            f"(batched={bool(b)}, axis size {size})")
        res.append(o if b else bdim_to_front(o, None, size))
    return res, [0] * len(res)


def _jvp(primals, tangents, *, call_jaxpr, rule, num_consts, name):
    if any(not isinstance(t, Zero) for t in tangents[:num_consts]):
        raise TypeError(f"custom_vmap function {name} is being differentiated with respect to "
                        "a value it closes over: pass that value to it as an argument")
    nz = [not isinstance(t, Zero) for t in tangents[num_consts:]]
    jj, _ = jvp_jaxpr(call_jaxpr, [False] * num_consts + nz, instantiate_out=True)
    ts = [instantiate(t) for t in tangents[num_consts:] if not isinstance(t, Zero)]
    outs = custom_vmap_call_p.bind(*primals, *ts, call_jaxpr=jj, rule=rule.jvp(nz),
                                   num_consts=num_consts, name=name)
    n = len(call_jaxpr.out_avals)
    return outs[:n], outs[n:]


def _reverse_error(name):
    return TypeError(f"reverse-mode differentiation of custom_vmap function {name} is not "
                    "supported (as in JAX): differentiate it in forward mode (jvp, jacfwd), "
                    "apply vmap inside grad, or give it a custom_jvp/custom_vjp rule")


def _partial_eval(eqn, unknowns):
    raise _reverse_error(eqn.params["name"])


def _transpose(cts, *args, name, **_):
    raise _reverse_error(name)


vmap_rules[custom_vmap_call_p] = _vmap
jvp_rules[custom_vmap_call_p] = _jvp
transpose_rules[custom_vmap_call_p] = _transpose
partial_eval_rules[custom_vmap_call_p] = _partial_eval
batched_outputs[custom_vmap_call_p] = lambda in_b, call_jaxpr, **_: [any(in_b)] * len(
    call_jaxpr.out_avals)
