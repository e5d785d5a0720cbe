"""The PRNG's Threefry-2x32 hash (`threefry2x32`, xforms/lax/rng.py) on the direct LLVM path:
the 20 rounds of `rng.threefry_scalar` on i32 words (the Numba path holds them in uint64
and masks each step: the same low bits), the result packed as the uint64
`(b1 << 32) | b2`.  One internal function per module, always inlined, so that a loop of
hashes vectorises as the Numba kernel's does.

    emit(m, ["%k1", "%k2", "0", "%i"], "%r")     # %r: i64, the packed block
"""
NAME = "xf_threefry2x32"
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)


def _body():
    """The function's IR text (an SSA line per step)."""
    lines, n = [], [0]

    def v(text):
        n[0] += 1
        lines.append(f"  %v{n[0]} = {text}")
        return f"%v{n[0]}"
    ks = ["%k1", "%k2", v(f"xor i32 {v('xor i32 %k1, %k2')}, 466688986")]   # 0x1BD11BDA
    x0, x1 = v("add i32 %x0, %k1"), v("add i32 %x1, %k2")
    for i in range(5):
        for j in range(4):
            r = _ROTATIONS[(i % 2) * 4 + j]
            x0 = v(f"add i32 {x0}, {x1}")
            x1 = v(f"xor i32 {v(f'call i32 @llvm.fshl.i32(i32 {x1}, i32 {x1}, i32 {r})')}, {x0}")
        x0 = v(f"add i32 {x0}, {ks[(i + 1) % 3]}")
        x1 = v(f"add i32 {v(f'add i32 {x1}, {ks[(i + 2) % 3]}')}, {i + 1}")
    hi = v(f"shl i64 {v(f'zext i32 {x0} to i64')}, 32")
    packed = v(f"or i64 {hi}, {v(f'zext i32 {x1} to i64')}")
    return "\n".join([f"define internal i64 @{NAME}(i32 %k1, i32 %k2, i32 %x0, i32 %x1) "
                      "alwaysinline {", *lines, f"  ret i64 {packed}", "}"])


TEXT = _body()


def emit(m, args, r):
    """`r` = the packed hash of i32 operands `args` (k1, k2, x0, x1) in kernel module `m`."""
    m.decls.add("declare i32 @llvm.fshl.i32(i32, i32, i32)")
    m.decls.add(TEXT)
    m.emit(f"{r} = call i64 @{NAME}({', '.join(f'i32 {a}' for a in args)})")
