"""The carries of a loop run as one kernel (block_loop.py): every name the host code knows
keeps its buffer, so the carries the host only renamed are copied back into their own
buffers at the end of each iteration (`keep_buffers`), through scratch buffers where they
take each other's (`through_scratch`: an LSTM gradient's reverse scan passes one cotangent
on as the other, so its carries swap buffers a step).

    AC = S2_AN            # S2_AN lives in AD's buffer        _s1 <- S2_AN; _s2 <- S2_AI
    AD = S2_AI            # S2_AI is AC's old buffer   ->     AC <- _s1;    AD <- _s2
"""
import re

import numpy as np

NAME = r"[A-Za-z_][A-Za-z0-9_]*"
ASSIGN = re.compile(r"^(" + NAME + r"(?:, " + NAME + r")*) = (.+)$")
KEYWORDS = {"for", "in", "range", "while", "True", "False", "if", "elif", "else", "not",
            "and", "or", "break", "return", "int", "min", "max", "np", "cuda", "float", "bool",
            "nbt"}


class Refused(Exception):
    """Why a loop stays on the host (said in the host code)."""


def tokens(s):
    s = re.sub(r"'[^']*'|\"[^\"]*\"", "", s)
    return [t for t in re.findall(r"(?<![\w.])" + NAME, s) if t not in KEYWORDS]


def copy_lines(ind, dst, src, barrier):
    """Kernel lines copying buffer `src` into `dst`, then the barrier."""
    return [f"{ind}_cd, _cs = {dst}, {src}",
            f"{ind}for _t in range(cuda.grid(1), _cd.shape[0], cuda.gridsize(1)):",
            f"{ind}    _cd[_t] = _cs[_t]", f"{ind}{barrier}"]


def keep_buffers(body, params, barrier):
    """Every buffer name the host knows keeps its buffer: `C = X` for such a C becomes a copy
    of X into C's buffer unless X is C's buffer already (a carry updated in place); every
    other name is bound to one buffer in every iteration (two passes of the text)."""
    env, seen, out, stale = {}, {}, [], set()
    for k in range(2):
        for s in body:
            m = ASSIGN.match(s.strip())
            if k:
                # the host only rebinds C: other names of C's old buffer (a scan's row
                # store of the carry's input) would read the new value, copied into it
                reads = tokens(m[2] if m else s.strip())
                if stale & set(reads):
                    raise Refused(f"{sorted(stale & set(reads))[0]} read after its "
                                  "buffer took the new carry")
                if m:
                    stale.difference_update(m[1].split(", "))
            if not m or ", " in m[1]:
                if k:
                    out.append(s)
                continue
            t, rhs = m[1], m[2]
            b = env.get(rhs, rhs) if re.fullmatch(NAME, rhs) else ("expr", rhs)
            if t in params and b != t:
                if not t[:1].isupper():      # (b may be a view: a scan's row, scan_rows.py)
                    raise Refused(f"{t} leaves the loop in another buffer")
                if k:
                    out += copy_lines(s[:len(s) - len(s.lstrip())], t, rhs, barrier)
                    # (a scan's `_keepN`, scan_rows.py: only the copy's destination)
                    stale.update(n for n, v in env.items() if v == t and n != t
                                 and not n.startswith("_keep"))
                continue
            if seen.setdefault(t, b) != b:
                raise Refused(f"{t} changes buffer")
            env[t] = b
            if k:
                out.append(s)
    return out


def through_scratch(body, params, types, pre, host_ind, fresh, barrier):
    """`body` with each run of two or more carry renames (`C = X`, C a host name the kernel
    copies into) done as a parallel assignment: every X copied into a scratch buffer made
    before the launch (`pre`, `types`), then each C from its scratch -- so carries that take
    each other's buffers (a swap) all keep the values the host would have bound.  Where no
    run is found, `body` as it is.  `fresh`: a new host name; `barrier` the loop's."""
    out, k = [], 0
    while k < len(body):
        run = _renames(body, k, params)
        if len(run) < 2 or any(types.get(t, ("",))[0] != "array" for t, _, _ in run):
            out.append(body[k])
            k += 1
            continue
        ind, scratch = run[0][2], []
        for t, x, _ in run:
            dt, n = types[t][1], types[t][3]
            h = fresh()
            pre.append(f"{host_ind}{h} = _rt.empty({n}, np.{np.dtype(dt).name})")
            types[h] = ("array", np.dtype(dt), h, n)
            out += copy_lines(ind, h, x, barrier)
            scratch.append((t, h))
        out += [f"{ind}{t} = {h}" for t, h in scratch]
        k += len(run)
    return out


def stores_first(body, params):
    """`body` with each copy that follows a run of carry renames (`C = X`) and reads or
    writes none of the renamed names moved before the run (a scan's row store of a carry's
    input after the carry took its new value: the host only renamed, so it stored the old
    value; the kernel copies into the carry's buffer, so it must store first)."""
    out, k = [], 0
    while k < len(body):
        run = _renames(body, k, params)
        if not run:
            out.append(body[k])
            k += 1
            continue
        end, targets, moved = k + len(run), {t for t, _, _ in run}, []
        sources = {_root(body, x) for _, x, _ in run}
        while (end + 3 < len(body) and body[end].startswith(run[0][2] + "_cd, _cs = ")
               and not targets & set(tokens(body[end].split("=", 1)[1]))
               and _root(body, body[end].split("=", 1)[1].strip()) not in sources):
            moved += body[end:end + 4]
            end += 4
        out += moved + body[k:k + len(run)]
        k = end
    return out


def _root(body, expr):
    """The buffer name under `expr` (a name or a window `N[...]`), following the body's
    plain renames and windows (`S1_T = S1_E`, `S1_Q = L[...]`) back to a name they do not
    bind: two copies on different roots touch different buffers."""
    binds = {}
    for s in body:
        m = ASSIGN.match(s.strip())
        if m and ", " not in m[1]:
            binds.setdefault(m[1], m[2])
    name, seen = re.match(NAME, expr.strip())[0], set()
    while name in binds and name not in seen:
        seen.add(name)
        nxt = re.match(NAME, binds[name])
        if not nxt or not re.fullmatch(NAME + r"(\[[^\]]*\])?", binds[name]):
            break
        name = nxt[0]
    return name


def _renames(body, k, params):
    """[(C, X, indent)]: the run of renames `C = X` of host names C from line k."""
    run = []
    for s in body[k:]:
        m = ASSIGN.match(s.strip())
        ind = s[:len(s) - len(s.lstrip())]
        if (not m or ", " in m[1] or m[1] not in params or not m[1][:1].isupper()
                or not re.fullmatch(NAME, m[2]) or m[2] == m[1] or run and ind != run[0][2]):
            break
        run.append((m[1], m[2], ind))
    return run
