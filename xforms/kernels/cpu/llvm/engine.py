"""LLVM IR text -> a CPython builtin function, through llvmlite's MCJIT.

    fn = compile_ir(text, "xf_kernel")   # `xf_kernel(self, args, nargs)`: METH_FASTCALL
    fn(0.3)

The module is optimised at -O3 for the host CPU (loop and SLP vectorisation on) and
compiled by an MCJIT engine of its own (with its own target machine, which the engine
owns), kept alive by the returned function (its `self`): the machine code is freed with it.  CPython's API functions are bound by their addresses in this process; libm
functions resolve from the process (as Numba's do).
"""
import ctypes

import llvmlite.binding as llvm
from numba.core.compiler_lock import global_compiler_lock

_METH_FASTCALL = 0x0080
_PYAPI = ("PyFloat_AsDouble", "PyFloat_FromDouble", "PyErr_Occurred", "PyErr_SetString",
          "PyTuple_New", "PyTuple_SetItem", "Py_DecRef")
_host = []


class _MethodDef(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p),
                ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]


_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype = ctypes.py_object
_new_function.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]


class _Owner:
    """What a compiled function needs alive: its engine and its method record."""

    def __init__(self, engine, methoddef):
        self.engine, self.methoddef = engine, methoddef


def _target_machine():
    """A target machine for the host (each engine owns one; LLVM set up on first use)."""
    if not _host:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        for name in _PYAPI:
            llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name),
                                              ctypes.c_void_p).value)
        exc = ctypes.c_void_p.in_dll(ctypes.pythonapi, "PyExc_TypeError")
        llvm.add_symbol("PyExc_TypeError", ctypes.addressof(exc))
        _host.append((llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()))
    cpu, features = _host[0]
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=cpu, features=features, opt=3, codemodel="jitdefault", jit=True)


def _optimise(module, tm):
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module, pb)


def compile_ir(text, name):
    """The function `name` of LLVM IR `text` (a METH_FASTCALL C function) as a builtin.
    Under Numba's compiler lock: LLVM's global context is not safe to share between a
    Numba compile on another thread and this one."""
    with global_compiler_lock:
        tm = _target_machine()
        module = llvm.parse_assembly(text)
        module.triple = tm.triple
        module.data_layout = str(tm.target_data)
        module.verify()
        _optimise(module, tm)
        engine = llvm.create_mcjit_compiler(module, tm)
        engine.finalize_object()
        address = engine.get_function_address(name)
    md = _MethodDef(name.encode(), address, _METH_FASTCALL, None)
    return _new_function(ctypes.addressof(md), _Owner(engine, md), None)
