"""The version of xforms, in a module of its own: pyproject.toml reads it (without importing
xforms), xforms/kernels/build/codecache.py keys the disk cache with it without importing the `xforms`
package (which would close an import cycle through xforms.jit).

    >>> from xforms.version import __version__
"""
__version__ = "0.1.0"
