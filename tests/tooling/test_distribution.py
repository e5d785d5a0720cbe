"""The built wheel installs only the package it owns: `xforms` (its compilers are
`xforms.kernels`), nothing under a top-level name another project owns -- Hugging Face's
`kernels`, say, which the compilers were once installed as.  Built here with pip (about 15 s)
and installed with --target beside a package that owns the name `kernels`."""
import os
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out),
                        ROOT], capture_output=True, text=True, timeout=600)
    if r.returncode != 0 and "setuptools" in r.stderr and (
            "Could not find a version" in r.stderr or "No matching distribution" in r.stderr):
        pytest.skip("pip cannot fetch the build backend (setuptools) here: no index")
    assert r.returncode == 0, r.stderr[-3000:]
    [name] = [f for f in os.listdir(out) if f.endswith(".whl")]
    return os.path.join(out, name)


def test_the_wheel_holds_only_xforms(wheel):
    with zipfile.ZipFile(wheel) as z:
        tops = {n.split("/")[0] for n in z.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"xforms"}
    assert "xforms/kernels/__init__.py" in z.namelist()


def test_installed_beside_a_package_named_kernels(wheel, tmp_path):
    target = tmp_path / "site"
    other = target / "kernels"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("OWNER = 'another project'\n")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                        str(target), wheel], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (other / "__init__.py").read_text() == "OWNER = 'another project'\n"
    code = ("import kernels, xforms, xforms.numpy as xnp\n"
            "assert kernels.OWNER == 'another project'\n"
            f"assert xforms.__file__.startswith({str(target)!r}), xforms.__file__\n"
            "f = xforms.jit(xforms.grad(lambda x: xnp.sum(x * x)), tiered=False)\n"
            "print(float(f(xnp.ones(3))[0]))\n")
    env = dict(os.environ, PYTHONPATH=str(target), XFORMS_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["2.0"]
