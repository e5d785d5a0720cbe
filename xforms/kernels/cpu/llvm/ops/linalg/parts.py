"""Parts of a product on OpenMP's team (issue #37): the direct path's products that split
C's rows (small_mm's threaded nests, a large gemm on one BLAS thread a part: products.py)
or a batch's matrices (views.py) launch a function `void parts(ctx, first, end)` over
parts counted at run time from the BLAS threads in force, as the Numba kernel's
`small_mm.parts_for` counts them.

    name = ...   # define internal void name(ptr %ctx, i64 %c0, i64 %c1) { context_loads }
    launch_parts(mod, name, (xd, yd, od), m, 8)
"""


def context_loads(per):
    """IR lines of a parts function's entry (`launch_parts`): the data pointers %a, %b, %c
    from its context's slots 2-4 and the items of a part, named `per`, from slot 5."""
    return f"""  %ap = getelementptr i64, ptr %ctx, i64 2
  %a = load ptr, ptr %ap
  %bp = getelementptr i64, ptr %ctx, i64 3
  %b = load ptr, ptr %bp
  %cp = getelementptr i64, ptr %ctx, i64 4
  %c = load ptr, ptr %cp
  %rp = getelementptr i64, ptr %ctx, i64 5
  {per} = load i64, ptr %rp"""


def rows_function(mod, prefix, ty, m, a_step, ldc, call, entry=""):
    """Define a parts function over C's rows (`launch_parts` with unit 8): part p takes rows
    [i0, i1) of m, and `call` -- IR lines -- sees %a0 (op(A)'s row i0: `a_step` elements a
    row), %cc (C's row i0, `ldc` a row) and %h (the rows, i64) beside %b; `entry`: lines
    before the loop.  -> the function's name.

        name = rows_function(mod, "mmparts", "float", 100, 64, 256, "  call void ...")
    """
    return span_function(mod, prefix, ty, m, (a_step, 0, ldc), call, entry)


def span_function(mod, prefix, ty, items, steps, call, entry=""):
    """Define a parts function over a span of `items` (C's rows, or its columns): part p
    takes items [i0, i1), and `call` -- IR lines -- sees %a0, %b0 and %cc (the context's
    pointers %a, %b, %c moved on by i0 times `steps`' elements each) and %h (the items of
    the part, i64); `entry`: lines before the loop.  -> the function's name.

        name = span_function(mod, "gemmcols", "float", 512, (0, 1, 1), "  call void ...")
    """
    name = f"@{prefix}{mod.fresh()[2:]}"
    moves = "\n".join(
        f"""  %{p}off = mul i64 %i0, {step}
  {o} = getelementptr {ty}, ptr %{p}, i64 %{p}off"""
        for o, p, step in (("%a0", "a", steps[0]), ("%b0", "b", steps[1]),
                           ("%cc", "c", steps[2])))
    mod.functions.append(f"""define internal void {name}(ptr %ctx, i64 %c0, i64 %c1) {{
entry:
{entry}{context_loads("%rows")}
  br label %head
head:
  %p = phi i64 [%c0, %entry], [%p1, %body]
  %more = icmp slt i64 %p, %c1
  br i1 %more, label %body, label %exit
body:
  %i0 = mul i64 %p, %rows
  %e = add i64 %i0, %rows
  %short = icmp slt i64 %e, {items}
  %i1 = select i1 %short, i64 %e, i64 {items}
  %h = sub i64 %i1, %i0
{moves}
{call}
  %p1 = add i64 %p, 1
  br label %head
exit:
  ret void
}}""")
    return name


def launch_parts(mod, name, ptrs, items, unit, blas=None):
    """Launch function `name` on OpenMP's team over parts of `items` (C's rows, a batch's
    matrices) in whole `unit`s, `ptrs` in its context's slots 2-4 (`context_loads`).  The
    parts are counted at run time as `small_mm.parts_for` counts them -- min(BLAS threads in
    force, the team's threads, items' units), at least one -- and a part takes
    `rows_per_part`'s whole units (e.g. rows = ((m + p - 1) // p + 7) // 8 * 8); `blas`:
    an i32 value standing for the BLAS threads in force (read before a region that set 1)."""
    from .....runtime.products import blas_pointers
    ctx = f"%ctx{len(mod.allocas)}"
    mod.allocas.append(f"{ctx} = alloca i64, i64 6")
    for slot, ptr in enumerate(ptrs, start=2):
        at = mod.fresh()
        mod.emit(f"{at} = getelementptr i64, ptr {ctx}, i64 {slot}")
        mod.emit(f"store ptr {ptr}, ptr {at}")
    blas_pointers.bind_thread_symbols()         # (no Numba: small_mm is not imported here)
    mod.decls.add(f"declare i32 @{blas_pointers.THREADS_GET}()")
    v = {s: mod.fresh() for s in ("b32", "t32", "few", "bt", "bt64", "units", "lt", "none",
                                  "p", "up", "per", "upu", "whole", "run", "cu", "n", "at")}
    if blas is None:
        mod.emit(f"{v['b32']} = call i32 @{blas_pointers.THREADS_GET}()")
    else:
        mod.emit(f"{v['b32']} = add i32 {blas}, 0")
    mod.emit(f"{v['t32']} = load i32, ptr @xf_num_threads")
    mod.emit(f"{v['few']} = icmp slt i32 {v['b32']}, {v['t32']}")
    mod.emit(f"{v['bt']} = select i1 {v['few']}, i32 {v['b32']}, i32 {v['t32']}")
    mod.emit(f"{v['bt64']} = sext i32 {v['bt']} to i64")
    units = (items + unit - 1) // unit
    mod.emit(f"{v['lt']} = icmp slt i64 {v['bt64']}, {units}")
    mod.emit(f"{v['units']} = select i1 {v['lt']}, i64 {v['bt64']}, i64 {units}")
    mod.emit(f"{v['none']} = icmp slt i64 {v['units']}, 1")
    mod.emit(f"{v['p']} = select i1 {v['none']}, i64 1, i64 {v['units']}")
    # run = ((items + p - 1) // p + unit - 1) // unit * unit; chunks = ceil(items / run)
    mod.emit(f"{v['up']} = add i64 {v['p']}, {items - 1}")
    mod.emit(f"{v['per']} = sdiv i64 {v['up']}, {v['p']}")
    mod.emit(f"{v['upu']} = add i64 {v['per']}, {unit - 1}")
    mod.emit(f"{v['whole']} = sdiv i64 {v['upu']}, {unit}")
    mod.emit(f"{v['run']} = mul i64 {v['whole']}, {unit}")
    mod.emit(f"{v['cu']} = add i64 {v['run']}, {items - 1}")
    mod.emit(f"{v['n']} = sdiv i64 {v['cu']}, {v['run']}")
    mod.emit(f"{v['at']} = getelementptr i64, ptr {ctx}, i64 5")
    mod.emit(f"store i64 {v['run']}, ptr {v['at']}")
    mod.emit(f"call void @xf_parallel(ptr {name}, ptr {ctx}, i64 {v['n']})")
    mod.threaded = True
