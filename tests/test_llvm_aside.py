"""Compiles on a thread of their own (xforms/kernels/cpu/llvm/engine.py `compile_aside`:
small_mm's nests beside the kernel that calls them): the symbol is bound before a later
engine resolves its symbols, and a compile that failed there is compiled again (and its
error raised) on the thread that waits."""
import ctypes
import uuid

import llvmlite.binding as llvm
import pytest

from xforms.kernels.cpu.llvm import engine


def _callee(name, add):
    return f"define i64 @{name}(i64 %x) {{\n  %r = add i64 %x, {add}\n  ret i64 %r\n}}\n"


def _caller(name, callee):
    return (f"declare i64 @{callee}(i64)\n"
            f"define i64 @{name}(i64 %x) {{\n  %a = call i64 @{callee}(i64 %x)\n"
            f"  %r = mul i64 %a, 2\n  ret i64 %r\n}}\n")


@pytest.mark.parametrize("passes", [False, True])
def test_a_kernel_calls_a_function_compiled_aside(monkeypatch, tmp_path, passes):
    monkeypatch.setenv("XFORMS_CACHE_DIR", str(tmp_path))
    tag = uuid.uuid4().hex[:8]
    callee, caller = f"xf_aside_{tag}", f"xf_caller_{tag}"
    job = engine.compile_aside(_callee(callee, 5), callee, passes=passes)
    address, owner = engine.compile_function(_caller(caller, callee), caller)
    assert not job.is_alive() and job.owner is not None and job.error is None
    fn = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(address)
    assert fn(1) == 12
    assert llvm.address_of_symbol(callee)         # (bound for every later engine)


def test_a_failed_compile_aside_raises_where_it_is_waited_for():
    job = engine.compile_aside("define i64 @broken(", f"xf_broken_{uuid.uuid4().hex[:8]}")
    job.join()
    assert job.error is not None
    with pytest.raises(RuntimeError):
        engine.wait_aside()
    engine.wait_aside()            # (dropped: a later wait has nothing left to do)
