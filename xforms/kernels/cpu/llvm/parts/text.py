"""A kernel's IR text cut into modules: runs of its steps moved into functions of their own
(issue #35: LLVM optimises and compiles one function on one core, and one function was
69-82% of a kernel's IR).  A pure function of the text, so that the disk cache keys every
module by its own text as before.

    main, parts = split(text, "xf_kernel", 2)    # None: the kernel stays one module
    # parts: [(symbol, module text)]; main declares `i32 @symbol(...)` and calls it

`Loops.text` marks where each top-level step starts, and where the last one ends, with a
comment line (`MARK`).  The steps are grouped into `pieces` contiguous runs of about equal
size (lines, counting the internal functions a step calls); the first stays in the kernel's
function, each other one becomes a function taking the values it reads (the data pointers,
an earlier step's scalars) as arguments and writing those a later step reads into slots the
caller gives, which it loads back under their own names.  It returns 0 to go on, or k for
its k-th exit (a branch to a block of the kernel: `fail`, or a `ret ptr null` of its own),
which the caller takes in a `switch`.  Pointers made by a `getelementptr` (the workspace's
views) are made again inside.  No argument is `noalias`, although the kernel's data pointers
are `noalias` call results (loops.py `_noalias`): a run may read a pointer the kernel stored
in memory (a scan's double-buffered carries), and with `noalias` arguments LLVM took the two
for two objects -- a kernel cut so crashed (tests/kernels/llvm/test_llvm_control.py's carries,
session 34).  LLVM then tests more of the loops' operands for overlap at run time (the block's
gradient: 32 tests, not 20), and vectorises the same loops.  Nothing else changes: the same
instructions in the same order (no fast-math flags anywhere: the results are the same bits).

Refused (None: compiled whole, as before) wherever the text is not of the form assumed: a
value of a type other than a scalar or `ptr` crossing a cut, a `ret` other than `ret ptr
null` inside a run, a run that starts or ends at a closed block, a branch into a block that
begins with a `phi`, an unnamed value, a mutable global or a non-internal function.
"""
import hashlib
import re

MARK = "  ; xf-step"
# below these, a kernel is compiled whole (its second module would cost more than it gains):
# lines of the kernel's function with what its steps call; lines of one part
MIN_LINES = 900
MIN_PART = 200
# what one of small_mm's nests costs to compile, in kernel lines (~0.035 CPU s against ~0.1
# ms a line, session 34): the nests compile aside too (products.py `_nest_symbol`), on the
# threads the parts run on, so the parts are made that much smaller
NEST_LINES = 300

_DEF = re.compile(r"^\s+(%[-\w.$]+) = (.*)$")
_LABEL = re.compile(r"^([-\w.$]+):")
_LOCAL = re.compile(r'%[-\w.$]+|%"[^"]*"')
_GLOBAL = re.compile(r'@[-\w.$]+|@"[^"]*"')
_PHI_PRED = re.compile(r"(,\s*)(%[-\w.$]+)(\s*\])")
_TERMINATORS = ("br ", "ret ", "switch ", "unreachable", "resume ", "indirectbr ")
_SCALAR = re.compile(r"^(i\d+|half|float|double|ptr)$")
_CASTS = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp",
          "sitofp", "ptrtoint", "inttoptr", "bitcast", "addrspacecast"}
_TYPED = {"load", "phi", "call", "fneg", "add", "sub", "mul", "udiv", "sdiv", "urem", "srem",
          "shl", "lshr", "ashr", "and", "or", "xor", "fadd", "fsub", "fmul", "fdiv", "frem",
          "freeze"}
_FLAGS = {"nuw", "nsw", "exact", "disjoint", "fast", "nnan", "ninf", "nsz", "arcp",
          "contract", "afn", "reassoc", "volatile", "tail", "musttail", "notail", "noalias",
          "nonnull", "zeroext", "signext", "fastcc", "ccc", "inreg", "noundef"}


class _Refused(Exception):
    """The text is not of the form `split` assumes: compiled whole."""


def split(text, name, pieces):
    """(main module text, [(part symbol, part module text)]) for the kernel function `name`
    of module `text` cut into `pieces` runs of steps, or None to compile it whole."""
    if pieces < 2 or MARK not in text:
        return None
    try:
        return _Split(text, name).cut(pieces)
    except _Refused:
        return None


def value_type(rhs):
    """The type of the value an instruction defines, from its text after `%name = `; None
    unless a scalar or `ptr`.

        >>> value_type("load float, ptr %t3"), value_type("icmp slt i64 %i1, 8")
        ('float', 'i1')
    """
    words = rhs.replace(",", " , ").split()
    op = words[0]
    if op in ("alloca", "getelementptr"):
        return "ptr"
    if op in ("icmp", "fcmp"):
        rest = [w for w in words[1:] if w not in _FLAGS]
        return "i1" if len(rest) > 1 and _SCALAR.match(rest[1]) else None
    if op in _CASTS:
        ty = rhs.rsplit(" to ", 1)[-1].strip()
    elif op in _TYPED:
        ty = next((w for w in words[1:] if w not in _FLAGS), "")
    elif op == "select":
        rest = [w for w in words[1:] if w not in _FLAGS]
        ty = rest[rest.index(",") + 1] if "," in rest else ""
    else:
        return None
    return ty if _SCALAR.match(ty) else None


def _terminated(line):
    return line.strip().startswith(_TERMINATORS)


def _refs(line, pattern):
    return pattern.findall(line)


class _Split:
    """The module `text` read into its kernel function's body, its internal functions and
    its other top-level lines."""

    def __init__(self, text, name):
        lines = text.split("\n")
        head = f"define ptr @{name}("
        start = next((k for k, ln in enumerate(lines) if ln.startswith(head)), None)
        if start is None:
            raise _Refused("no kernel function")
        end = lines.index("}", start)
        self.head, self.body = lines[start], lines[start + 1:end]
        self.functions, self.order, self.top = {}, [], []
        self._read_top(lines[:start] + lines[end + 1:])
        self.labels = {m.group(1) for ln in self.body if (m := _LABEL.match(ln))}
        self.defs = {}                 # value name -> its line's index in the body
        for k, ln in enumerate(self.body):
            m = _DEF.match(ln)
            if m:
                if m.group(1)[1:2].isdigit() or m.group(1).startswith('%"'):
                    raise _Refused("an unnamed or quoted value")
                self.defs[m.group(1)] = k
        self.params = dict(re.findall(r"(\S+) (%[-\w.$]+)", self.head[len(head):]))
        self.params = {v: t for t, v in self.params.items()}

    def _read_top(self, lines):
        k = 0
        while k < len(lines):
            ln = lines[k]
            if ln.startswith("define "):
                if " internal " not in ln and " private " not in ln:
                    raise _Refused("a function other than an internal one")
                fname = _GLOBAL.search(ln[ln.index(" @") if " @" in ln else 0:]).group(0)
                end = lines.index("}", k)
                self.functions[fname.replace('"', "")] = lines[k:end + 1]
                self.order.append(fname.replace('"', ""))
                k = end + 1
                continue
            if re.match(r"@\S+ = (private|internal)( unnamed_addr)? global ", ln):
                raise _Refused("a mutable global of the module's own")
            self.top.append(ln)
            k += 1

    # -- choosing the runs ---------------------------------------------------------------
    def cut(self, pieces):
        marks = [k for k, ln in enumerate(self.body) if ln == MARK]
        if len(marks) < 3:
            return None
        steps = list(zip(marks, marks[1:]))
        weight = [b - a + sum(len(self.functions.get(f, ())) for f in self._called(a, b))
                  for a, b in steps]
        fixed = len(self.body) - sum(b - a for a, b in steps)
        if fixed + sum(weight) < MIN_LINES:
            return None
        # a run may start or end only where a block is open (the step before it did not
        # end with a terminator, the next one does not begin with a label)
        ok = [not _terminated(self.body[m - 1]) and not _LABEL.match(self.body[m + 1])
              for m in marks]
        nests = len(set(re.findall(r"^declare void @(xf_small_mm_\w+)\(", "\n".join(self.top),
                                   re.M)))
        groups = _balance(weight, fixed, pieces, ok, NEST_LINES * nests)
        if groups is None:
            return None
        runs = [(marks[a], marks[b]) for a, b in groups]
        return self._write(runs[0], runs[1:])

    def _called(self, a, b):
        return {g.replace('"', "") for ln in self.body[a:b] for g in _refs(ln, _GLOBAL)}

    # -- writing the modules -------------------------------------------------------------
    def _write(self, kept, runs):
        body, parts, slots, tails, rename = [], [], [], [], {}
        pos = 0
        label = "entry"              # the block the new body's last line is in
        for n, (a, b) in enumerate(runs):
            for ln in self.body[pos:a]:
                body.append(_renamed(ln, rename))
                if (m := _LABEL.match(ln)):
                    label = m.group(1)
            run = [_renamed(ln, rename) for ln in self.body[a:b] if ln != MARK]
            part = self._part(n, a, b, run, label)
            parts.append(part)
            ok = f"xf.ok{n}"
            args = ", ".join(f"{t} {v}" for t, v, _ in part["ins"])
            args = ", ".join(filter(None, [args, ", ".join(
                f"ptr {v}.slot" for _, v in part["outs"])]))
            body.append(f"  %xf.rc{n} = call i32 @{part['symbol']}({args})")
            cases = " ".join(f"i32 {k}, label %{t}" for k, t in enumerate(part["exits"], 1))
            body.append(f"  switch i32 %xf.rc{n}, label %{ok} [{cases}]")
            body.append(f"{ok}:")
            for t, v in part["outs"]:
                slots.append(f"  {v}.slot = alloca {t}")
                body.append(f"  {v} = load {t}, ptr {v}.slot")
            if "xf.null" in part["exits"] and "xf.null" not in tails:
                tails += ["xf.null:", "  ret ptr null"]
            rename[part["last"]] = ok
            label, pos = ok, b
        for ln in self.body[pos:]:
            body.append(_renamed(ln, rename))
        moved = {x for p in parts for x in p["moved"]}
        body = [ln for ln in body if not (_DEF.match(ln) and _DEF.match(ln).group(1) in moved)]
        body[1:1] = slots             # (after `entry:`)
        decls = [f"declare i32 @{p['symbol']}({', '.join(p['types'])})" for p in parts]
        main = self._module(decls, [self.head, *body, *tails, "}"])
        return main, [(p["symbol"], p["text"]) for p in parts]

    def _part(self, n, a, b, run, entry):
        """The function of the run body[a:b] (its lines `run`, renamed), `entry` the label of
        the block it starts in."""
        inside = {m.group(1) for ln in run if (m := _DEF.match(ln))}
        own = {m.group(1) for ln in run if (m := _LABEL.match(ln))}
        outside = self.body[:a] + self.body[b:]
        used_out = {v for ln in outside for v in _uses(ln)}
        exits, lines = [], []
        for ln in run:
            if ln.strip().startswith("ret "):
                if ln.strip() != "ret ptr null":
                    raise _Refused("a return inside a run")
                ln = f"  ret i32 {_exit(exits, 'xf.null')}"
            elif " = phi " in ln:
                for pred in _PHI_PRED.findall(ln):
                    if pred[1][1:] not in own and pred[1][1:] != entry:
                        raise _Refused("a phi of a block outside its run")
                ln = _PHI_PRED.sub(lambda m: m.group(1) + ("%xf.entry" if m.group(2)[1:] == entry
                                                          else m.group(2)) + m.group(3), ln)
            for target in re.findall(r"label %([-\w.$]+)", ln):
                if target in own:
                    continue
                if target == entry or self._phi_at(target):
                    raise _Refused("a branch out of a run into a phi or back")
                ln = ln.replace(f"label %{target}", f"label %xf.exit{_exit(exits, target)}")
            lines.append(ln)
        ins, moved, made = [], [], []
        self._inputs(run, inside, used_out, ins, moved, made, set())
        outs = []
        for v in sorted(inside & used_out, key=lambda v: self.defs[v]):
            t = value_type(_DEF.match(self.body[self.defs[v]]).group(2))
            if t is None:
                raise _Refused(f"{v} of a type not passed")
            outs.append((t, v))
        last = next((m.group(1) for ln in reversed(run) if (m := _LABEL.match(ln))), entry)
        params = [f"{t} {v}" for t, v, _ in ins]
        params += [f"ptr {v}.out" for _, v in outs]
        fn = ["define i32 @xf_part_NAME(" + ", ".join(params) + ") {", "xf.entry:",
              *(self.body[self.defs[v]] for v in moved + made), *lines,
              *(f"  store {t} {v}, ptr {v}.out" for t, v in outs), "  ret i32 0"]
        for k, target in enumerate(exits, 1):
            fn += [f"xf.exit{k}:", f"  ret i32 {k}"]
        fn.append("}")
        text = self._module([], fn)
        symbol = "xf_part_" + hashlib.sha256(text.encode()).hexdigest()[:20]
        return {"symbol": symbol, "text": text.replace("@xf_part_NAME(", f"@{symbol}(", 1),
                "ins": ins, "outs": outs, "exits": exits, "last": last, "moved": moved,
                "types": [t for t, _, _ in ins] + ["ptr"] * len(outs)}

    def _inputs(self, run, inside, used_out, ins, moved, made, seen):
        """The values `run` reads from outside it: arguments (`ins`: type, name, noalias),
        allocas used only there (`moved` in), pointers of a `getelementptr` made again
        (`made`, in dependence order)."""
        for v in [v for ln in run for v in _uses(ln)]:
            if v in inside or v in seen or v[1:] in self.labels or v.startswith("%xf."):
                continue
            seen.add(v)
            if v in self.params:
                ins.append((self.params[v], v, False))
                continue
            if v not in self.defs:
                raise _Refused(f"{v}: no definition")
            rhs = _DEF.match(self.body[self.defs[v]]).group(2)
            if rhs.startswith("alloca ") and v not in used_out:
                moved.append(v)
            elif rhs.startswith("getelementptr "):
                self._inputs([rhs], inside, used_out, ins, moved, made, seen)
                made.append(v)
            else:
                t = value_type(rhs)
                if t is None:
                    raise _Refused(f"{v} of a type not passed")
                ins.append((t, v, t == "ptr" and rhs.startswith("call noalias ptr ")))

    def _phi_at(self, label):
        k = self.body.index(f"{label}:")
        return k + 1 < len(self.body) and " = phi " in self.body[k + 1]

    def _module(self, decls, fn):
        """A module of the top-level lines, `decls`, the internal functions `fn` and those
        lines call (transitively), and `fn`."""
        need, todo = set(), [g for ln in [*self.top, *fn] for g in _refs(ln, _GLOBAL)]
        while todo:
            g = todo.pop().replace('"', "")
            if g in self.functions and g not in need:
                need.add(g)
                todo += [h for ln in self.functions[g] for h in _refs(ln, _GLOBAL)]
        funcs = [ln for g in self.order if g in need for ln in self.functions[g]]
        return "\n".join([*self.top, *decls, *funcs, *fn, ""])


def _uses(line):
    """The local names `line` reads (its defined name left out)."""
    m = _DEF.match(line)
    return _refs(m.group(2) if m else line, _LOCAL)


def _renamed(line, rename):
    """`line` with the phi predecessors `rename` maps replaced."""
    if not rename or " = phi " not in line:
        return line
    return _PHI_PRED.sub(lambda m: m.group(1) + "%" + rename.get(m.group(2)[1:], m.group(2)[1:])
                         + m.group(3), line)


def _exit(exits, target):
    """The code (1, 2, ...) of exit `target`, added where new."""
    if target not in exits:
        exits.append(target)
    return exits.index(target) + 1


def _balance(weight, fixed, pieces, ok, aside=0):
    """[(first step, end step)] of `pieces` contiguous runs of steps of `weight`, cut only
    where `ok` (a mark's index), the first run carrying `fixed` too and the others `aside`
    between them, with the largest run as small as can be; fewer runs where a run would be
    under MIN_PART; None for one run."""
    n = len(weight)
    cuts = [k for k in range(1, n) if ok[k]]
    if not ok[n]:
        return None
    prefix = [0]
    for w in weight:
        prefix.append(prefix[-1] + w)
    while pieces > 1:
        best = _min_max(prefix, fixed, pieces, cuts, n, aside / (pieces - 1))
        if best is not None:
            bounds = [0, *best, n]
            runs = list(zip(bounds, bounds[1:]))
            if all(prefix[b] - prefix[a] >= MIN_PART for a, b in runs[1:]):
                return runs
        pieces -= 1
    return None


def _min_max(prefix, fixed, pieces, cuts, n, extra=0):
    """The `pieces` - 1 cut points (from `cuts`, ascending) whose runs' largest is least, the
    first run's size counting `fixed` too, each other's `extra`."""
    size = lambda a, b: prefix[b] - prefix[a] + (fixed if a == 0 else extra)  # noqa: E731
    best = {c: (size(0, c), (c,)) for c in cuts}     # one cut, the last at c
    for _ in range(pieces - 2):                      # one cut more, the last at c
        best = {c: min((max(big, size(p, c)), (*cs, c)) for p, (big, cs) in best.items()
                       if p < c) for c in cuts if any(p < c for p in best)}
    found = [(max(big, size(cs[-1], n)), cs) for big, cs in best.values()]
    return list(min(found)[1]) if found else None
