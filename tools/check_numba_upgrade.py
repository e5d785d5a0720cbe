"""Which of xforms' Numba patches (xforms/kernels/numba_fixes/registry.py) still apply to another Numba.

The registry holds llvmlite's lock too (the direct LLVM path swaps its class): a Numba comes
with its llvmlite, so an upgrade that changes the lock is reported as "changed" or "not
installed" like a Numba patch.

Installs the given Numba (default: the newest on the package index) with xforms' other
dependencies into a temporary venv -- or uses an interpreter you point it at -- and, with this
repository on its path, reports for each patch:

    ok             installed, over the same Numba code as the pinned version's
    changed        installed, but Numba's code it replaces changed: read it before trusting
    not installed  the patch's own check refused the new code (compiles slow down again)
    missing        Numba no longer has the replaced function

    python tools/check_numba_upgrade.py                    # newest Numba, in a temporary venv
    python tools/check_numba_upgrade.py --numba 0.69.0
    python tools/check_numba_upgrade.py --python /path/to/venv/bin/python

Exit status 0 when every patch is "ok", 1 otherwise (2 when the environment could not be made).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run by the checked interpreter.  "numba" mode loads xforms/kernels/numba_fixes/registry.py
# without running the packages' __init__s (nothing patched yet: Numba's own code); "kernels"
# mode imports xforms.kernels.build.codecache, which applies the patches, and the direct LLVM
# path's engine, which lifts llvmlite's lock, and asks whether each one holds.
PROBE = r"""
import json, os, sys, types
mode, root = sys.argv[1], sys.argv[2]
if mode == "numba":     # empty packages: their __init__s (which apply the patches) do not run
    for pkg in ("xforms", "xforms.kernels", "xforms.kernels.numba_fixes"):
        stub = types.ModuleType(pkg)
        stub.__path__ = [os.path.join(root, *pkg.split("."))]
        sys.modules[pkg] = stub
    from xforms.kernels.numba_fixes import registry as r
    out = {p.name: r.status(p, check_installed=False) for p in r.PATCHES}
else:
    from xforms.kernels.build import codecache  # noqa: F401  (applies the patches)
    from xforms.kernels.cpu.llvm import engine  # noqa: F401  (lifts llvmlite's lock)
    from xforms.kernels.numba_fixes import patches, registry as r
    patches.apply_cuda()        # (numba-cuda's own compiler core, where it is installed)
    out = {p.name: r.installed(p) for p in r.PATCHES}
import numba, llvmlite
out["versions"] = f"numba {numba.__version__}, llvmlite {llvmlite.__version__}"
print(json.dumps(out))
"""


def _dependencies():
    """xforms' runtime dependencies other than Numba and llvmlite (from pyproject.toml)."""
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    return [d for d in deps if not d.startswith(("numba", "llvmlite"))]


def make_venv(where, numba_version=None):
    """A venv under `where` with `numba_version` (None: the newest) and the other deps;
    its python."""
    subprocess.run([sys.executable, "-m", "venv", where], check=True)
    python = os.path.join(where, "bin", "python")
    numba = f"numba=={numba_version}" if numba_version else "numba"
    subprocess.run([python, "-m", "pip", "install", "-q", numba, *_dependencies()],
                   check=True)
    return python


def probe(python, mode):
    """The PROBE's answer in `mode`, or {"error": the last lines of its stderr}."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([python, "-c", PROBE, mode, ROOT], env=env, capture_output=True,
                       text=True, cwd=ROOT)
    if p.returncode:
        return {"error": p.stderr.strip().splitlines()[-1:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def report(before, after):
    """{patch name: status} from the two probes (see the module docstring)."""
    out = {}
    for name, found in before.items():
        if name in ("versions", "error"):
            continue
        held = after.get(name)
        out[name] = found if found == "missing" or held else "not installed"
    return out


def check(python):
    """Print each patch's status for `python`'s Numba; 0 when all are ok."""
    before, after = probe(python, "numba"), probe(python, "kernels")
    if "error" in before:
        print("could not load xforms/kernels/numba_fixes/registry.py:", *before["error"])
        return 2
    print(before["versions"])
    if "error" in after:
        print("import xforms.kernels failed:", *after["error"])
    from_registry = report(before, after)
    for name, status in from_registry.items():
        print(f"  {name:16} {status}")
    return 0 if all(s == "ok" for s in from_registry.values()) else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--numba", help="the Numba version to try (default: the newest)")
    ap.add_argument("--python", help="check this interpreter's Numba instead of a new venv")
    args = ap.parse_args(argv)
    if args.python:
        return check(args.python)
    with tempfile.TemporaryDirectory(prefix="numba-upgrade-") as tmp:
        try:
            python = make_venv(os.path.join(tmp, "venv"), args.numba)
        except subprocess.CalledProcessError as e:
            print(f"could not make the venv: {e}")
            return 2
        return check(python)


if __name__ == "__main__":
    sys.exit(main())
