"""A direct-path kernel cut into parts compiled at once (xforms/kernels/cpu/llvm/parts/): the
runs of steps moved into functions of their own give the whole kernel's results bit for bit
-- the scalars one run hands the next, its exits (a branch to `fail`, a `ret ptr null`), a
phi of the block it starts in, the internal functions it calls -- a part that does not
compile costs the cut, never the result, and a second process loads every part from disk."""
import json
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

from xforms.kernels.cpu.llvm import parts
from xforms.kernels.cpu.llvm.parts import text as cut

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MARK = cut.MARK

# a kernel of three steps: x * 3 (kept); a check that branches to `fail`, then a loop
# adding 1.5 ten times from an alloca it alone uses; twice the sum (an internal function),
# a `ret ptr null` past 1000, and a phi of the block the step starts in
KERNEL = f"""declare double @PyFloat_AsDouble(ptr)
declare ptr @PyFloat_FromDouble(double)
declare void @PyErr_SetString(ptr, ptr)
@xf_PyExc_TypeError = external global ptr
@neg = private constant [9 x i8] c"negative\\00"
@big = private constant [4 x i8] c"big\\00"

define internal double @twice(double %v) {{
entry:
  %r = fmul double %v, 2.0
  ret double %r
}}

define ptr @xf_kernel(ptr %self, ptr %args, i64 %nargs) {{
entry:
  %acc = alloca double
  %p0 = getelementptr ptr, ptr %args, i64 0
  %o0 = load ptr, ptr %p0
  %x = call double @PyFloat_AsDouble(ptr %o0)
  br label %go
fail:
  %exc = load ptr, ptr @xf_PyExc_TypeError
  call void @PyErr_SetString(ptr %exc, ptr @neg)
  ret ptr null
go:
{MARK}
  %a = fmul double %x, 3.0
{MARK}
  %isneg = fcmp olt double %a, 0.0
  br i1 %isneg, label %fail, label %s1
s1:
  store double 1.5, ptr %acc
  br label %head
head:
  %i = phi i64 [0, %s1], [%inext, %head]
  %s = phi double [%a, %s1], [%s2, %head]
  %step = load double, ptr %acc
  %s2 = fadd double %s, %step
  %inext = add i64 %i, 1
  %more = icmp slt i64 %inext, 10
  br i1 %more, label %head, label %done
done:
{MARK}
  %b = call double @twice(double %s2)
  %isbig = fcmp ogt double %b, 1000.0
  br i1 %isbig, label %big, label %small
big:
  %exc2 = load ptr, ptr @xf_PyExc_TypeError
  call void @PyErr_SetString(ptr %exc2, ptr @big)
  ret ptr null
small:
  %c = phi double [%b, %done]
{MARK}
  %r = call ptr @PyFloat_FromDouble(double %c)
  ret ptr %r
}}
"""


@pytest.fixture
def small_parts(monkeypatch, tmp_path):
    """Any kernel is cut (the sizes below which one is kept whole set to nothing)."""
    monkeypatch.setattr(cut, "MIN_LINES", 0)
    monkeypatch.setattr(cut, "MIN_PART", 1)
    monkeypatch.setenv("XFORMS_CACHE_DIR", str(tmp_path))


def test_value_types_of_the_instructions_a_cut_passes():
    assert cut.value_type("load float, ptr %t3") == "float"
    assert cut.value_type("icmp slt i64 %i1, 8") == "i1"
    assert cut.value_type("call noalias ptr @xf_data(ptr %o0, i32 11)") == "ptr"
    assert cut.value_type("fadd double %a, %b") == "double"
    assert cut.value_type("add nuw nsw i64 %i, 1") == "i64"
    assert cut.value_type("select i1 %c, float %a, float %b") == "float"
    assert cut.value_type("sitofp i64 %n to double") == "double"
    assert cut.value_type("phi i32 [0, %a], [%k, %b]") == "i32"
    assert cut.value_type("getelementptr i8, ptr %w, i64 64") == "ptr"
    # (not passed: a vector, a struct; the kernel is then compiled whole)
    assert cut.value_type("load <8 x float>, ptr %p") is None
    assert cut.value_type("fcmp olt <4 x double> %a, %b") is None
    assert cut.value_type("extractvalue {float, float} %z, 0") is None


def test_the_runs_of_a_kernel_become_functions_of_their_own(small_parts):
    main, made = cut.split(KERNEL, "xf_kernel", 3)
    assert len(made) == 2
    (s1, t1), (s2, t2) = made
    assert f"call i32 @{s1}(" in main and f"call i32 @{s2}(" in main
    assert "%acc = alloca" in t1 and "%acc = alloca" not in main      # (its one user's)
    assert "define internal double @twice" in t2 and "@twice" not in t1 + main
    assert "[%b, %xf.entry]" in t2                     # (the phi of the block it starts in)
    assert "%s2.slot" in main and "store double %s2, ptr %s2.out" in t1
    assert cut.split(KERNEL, "xf_kernel", 1) is None
    assert cut.split(KERNEL.replace(MARK, ""), "xf_kernel", 3) is None


@pytest.mark.parametrize("count", [2, 3])
def test_a_kernel_in_parts_gives_the_whole_kernels_results(small_parts, count):
    whole = parts.compile_kernel(KERNEL, "xf_kernel", count=1)
    cut_up = parts.compile_kernel(KERNEL, "xf_kernel", count=count)
    assert parts._jobs, "the kernel was not cut"
    for x in (1.0, 100.0, 0.25):
        assert whole(x) == cut_up(x) == 2 * (3 * x + 15)
    for x, msg in ((-1.0, "negative"), (200.0, "big")):       # (the runs' exits)
        with pytest.raises(TypeError, match=msg):
            whole(x)
        with pytest.raises(TypeError, match=msg):
            cut_up(x)


def test_a_part_that_does_not_compile_costs_the_cut_only(small_parts, monkeypatch):
    real = cut.split

    def broken(text, name, pieces):
        main, made = real(text, name, pieces)
        return main, [(s, t.replace("ret i32 0", "ret i64 0")) for s, t in made]

    monkeypatch.setattr(parts, "split", broken)
    fn = parts.compile_kernel(KERNEL, "xf_kernel", count=3)
    assert fn(1.0) == 36.0
    with pytest.raises(TypeError, match="negative"):
        fn(-1.0)


def _program(x, w):
    """Steps enough to cut: products, a row reduction a later step reads, vector math."""
    import xforms.numpy as xnp
    h = xnp.tanh(x @ w)
    m = xnp.max(h, axis=1, keepdims=True)
    e = xnp.exp(h - m)
    s = e / xnp.sum(e, axis=1, keepdims=True)
    g = xnp.sin(s @ w.T) * x
    return xnp.sum(g * g) + xnp.mean(s), g


def test_a_jitted_program_in_parts_gives_the_whole_kernels_bits(small_parts, monkeypatch):
    import xforms as xf
    from xforms.kernels.cpu import backend
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 24)).astype(np.float32)
    w = rng.standard_normal((24, 40)).astype(np.float32)
    g = xf.value_and_grad(lambda x, w: _program(x, w)[0], argnums=(0, 1))
    prep = backend._prepare(xf.make_jaxpr(g)(x, w), {"name": "t"})
    assert prep.llvm_ir is not None
    results, exes = {}, []
    for count in ("1", "2", "4"):
        monkeypatch.setenv("XFORMS_LLVM_PARTS", count)
        monkeypatch.setattr(backend, "_llvm_kernels", weakref.WeakValueDictionary())
        before = set(parts._jobs.keys())
        exes.append(backend._finish(prep))              # (a kernel compiled for each count)
        results[count] = [np.asarray(a).tobytes() for a in exes[-1](x, w)]
        assert count == "1" or set(parts._jobs.keys()) - before, "the kernel was not cut"
    assert results["1"] == results["2"] == results["4"]


CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np, xforms as xf, xforms.numpy as xnp
    from xforms.kernels.build import object_cache
    from xforms.kernels.cpu.llvm import parts
    from xforms.kernels.cpu.llvm.parts import text
    text.MIN_LINES, text.MIN_PART = 0, 1
    f = xf.jit(xf.grad(lambda x: xnp.sum(xnp.tanh(x) * x + xnp.exp(-xnp.sum(x * x)) * 0.75)),
               tiered=False)
    r = np.asarray(f(np.linspace(-1.0, 1.0, 7)))
    print(json.dumps({"bits": r.tobytes().hex(), "stats": object_cache.stats,
                      "parts": sorted(parts._jobs.keys())}))
""")


def _child(tmp_path, **env):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    e = dict(os.environ, XFORMS_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT, **env)
    e.pop("XFORMS_DISABLE_CACHE", None)
    e.pop("XFORMS_LLVM_KERNELS", None)
    p = subprocess.run([sys.executable, str(script)], env=e, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_kernel_and_its_parts(tmp_path):
    first = _child(tmp_path, XFORMS_LLVM_PARTS="2")
    assert first["parts"] and first["stats"]["hits"] == 0
    second = _child(tmp_path, XFORMS_LLVM_PARTS="2")
    assert second["parts"] == first["parts"] and second["bits"] == first["bits"]
    assert second["stats"]["stored"] == 0
    assert second["stats"]["hits"] == first["stats"]["stored"] >= 2      # (kernel + part)
    whole = _child(tmp_path, XFORMS_LLVM_PARTS="1")
    assert not whole["parts"] and whole["bits"] == first["bits"]


LATER = textwrap.dedent("""
    import json, time, uuid
    from xforms.kernels.cpu.llvm import engine, parts
    from xforms.kernels.cpu.llvm.parts import text as cut
    import test_llvm_parts as t
    cut.MIN_LINES, cut.MIN_PART = 0, 1
    callee = f"xf_later_{uuid.uuid4().hex[:8]}"
    ir = (f"define double @{callee}(double %x) {{\\n  %r = fadd double %x, 1.0\\n"
          "  ret double %r\\n}\\n")
    # (its text made slowly, on its thread, which starts with the kernel's passes: the
    # part, small, is compiled long before the symbol is bound)
    job = engine.compile_aside(lambda: (time.sleep(1.0), ir)[1], callee, later=True)
    first = "declare double @PyFloat_AsDouble(ptr)"
    kernel = t.KERNEL.replace(first, f"{first}\\ndeclare double @{callee}(double)")
    kernel = kernel.replace("%b = call double @twice(double %s2)",
                            "%b0 = call double @twice(double %s2)\\n"
                            f"  %b = call double @{callee}(double %b0)")
    main, made = cut.split(kernel, "xf_kernel", 3)
    assert callee in made[1][1], "the call is not in the part"
    fn = parts.compile_kernel(kernel, "xf_kernel", count=3)
    print(json.dumps([fn(1.0), fn(100.0)]))
""")


def test_a_part_binds_its_symbols_after_the_functions_compiled_aside(tmp_path):
    """A part calls what its kernel calls (small_mm's nests, compiled aside and started with
    the kernel's passes): its engine resolves its symbols after theirs are bound (a part
    loaded first called an unbound symbol: a crash)."""
    script = tmp_path / "child.py"
    script.write_text(LATER)
    e = dict(os.environ, XFORMS_CACHE_DIR=str(tmp_path / "cache"),
             PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "tests", "kernels", "llvm")]))
    p = subprocess.run([sys.executable, str(script)], env=e, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads(p.stdout.strip().splitlines()[-1]) == [2 * 18 + 1, 2 * 315 + 1]
