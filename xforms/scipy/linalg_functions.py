"""Matrix functions of `xforms.scipy.linalg`: expm (Pade 13 with scaling and squaring),
solve_sylvester (a Kronecker-product solve: small matrices), block_diag, sqrtm (Schur, CPU;
xforms/primitives/linalg/sqrtm.py).

    >>> xsl.expm(xnp.zeros((2, 2)))       # the identity
"""
import numpy as np

from .. import lax
from ..numpy import linalg as _nl
from ..numpy.elementwise import ufuncs as _uf
from ..primitives.operands import asarray_operand, aval, broadcast_to, float_of, returns_arrays
from ..numpy.creation.constructors import eye
from ..numpy.linalg.decompositions import matrix_operand
from ..numpy.linalg.products import matmul
from ..numpy.manipulation.shapes import concatenate, expand_dims, reshape
from ..numpy.manipulation.padding import pad
from ..api import stop_gradient
from ..primitives.linalg.sqrtm import sqrtm as _sqrtm

# Pade (13, 13) coefficients of exp, and the largest 1-norm for which it is accurate to
# double precision without scaling (Higham 2005, "The scaling and squaring method for the
# matrix exponential revisited")
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def _pade13(a, ident):
    """(U, V): the odd and even parts of the Pade numerator, exp(a) ~ (V - U)^-1 (V + U)."""
    b = _PADE13
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    lin = lambda c6, c4, c2, c0: _uf.add(_uf.add(_uf.multiply(a6, c6), _uf.multiply(a4, c4)),
                                         _uf.add(_uf.multiply(a2, c2), _uf.multiply(ident, c0)))
    u_in = _uf.add(matmul(a6, lin(b[13], b[11], b[9], 0.0)), lin(b[7], b[5], b[3], b[1]))
    u = matmul(a, u_in)
    v = _uf.add(matmul(a6, lin(b[12], b[10], b[8], 0.0)), lin(b[6], b[4], b[2], b[0]))
    return u, v


@returns_arrays
def expm(A, *, upper_triangular=False, max_squarings=16):
    """Matrix exponential by scaling and squaring with a (13, 13) Pade approximant, batched
    over leading dims.  The scaling s = ceil(log2(|A|_1 / 5.37)) (at most max_squarings)
    is per matrix; the squarings are a loop of max_squarings steps that square while
    step < s (so every matrix takes the same compiled path under jit and vmap)."""
    a = matrix_operand("expm", A)
    sh = aval(a).shape
    n = sh[-1]
    ident = broadcast_to(eye(n, dtype=aval(a).dtype), sh)
    norm1 = stop_gradient(_nl.norm(a, 1, axis=(-2, -1)))
    s = _uf.ceil(_uf.log2(_uf.maximum(_uf.divide(norm1, _THETA13), 1.0)))
    s = _uf.minimum(s, float(max_squarings))
    scale = _uf.exp2(_uf.negative(s)).astype(aval(a).dtype)
    a = _uf.multiply(a, expand_dims(expand_dims(scale, -1), -1))
    u, v = _pade13(a, ident)
    r = _nl.solve(_uf.subtract(v, u), _uf.add(v, u))
    if max_squarings <= 0:
        return r
    steps = expand_dims(expand_dims(s.astype(np.int64), -1), -1)    # (i is an int64)

    def square(i, r):
        return _uf.where(_uf.less(i, steps), matmul(r, r), r)
    return lax.fori_loop(0, int(max_squarings), square, r)


@returns_arrays
def sqrtm(A, blocksize=1):
    """The principal square root of A (batched over leading dims), complex like JAX's (also
    for real A), by a complex Schur form; CPU only.  Differentiable (JAX's is not): the
    tangent solves S dS + dS S = dA, an n^2-sized linear system (small matrices).

        >>> xsl.sqrtm(xnp.array([[4.0, 0.0], [0.0, 9.0]]))     # diag(2, 3) + 0j
    """
    if not isinstance(blocksize, (int, np.integer)) or blocksize < 1:
        raise ValueError(f"sqrtm: blocksize must be an integer >= 1, got {blocksize!r}")
    return _sqrtm(matrix_operand("sqrtm", A))


def _kron_eye_left(a, m):
    """kron(a, I_m) for a (n, n)."""
    n = aval(a).shape[-1]
    big = _uf.multiply(reshape(a, (n, 1, n, 1)), reshape(eye(m, dtype=aval(a).dtype),
                                                          (1, m, 1, m)))
    return reshape(big, (n * m, n * m))


def _kron_eye_right(b, n):
    """kron(I_n, b) for b (m, m)."""
    m = aval(b).shape[-1]
    big = _uf.multiply(reshape(eye(n, dtype=aval(b).dtype), (n, 1, n, 1)),
                       reshape(b, (1, m, 1, m)))
    return reshape(big, (n * m, n * m))


@returns_arrays
def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with A X + X B = C, as one linear system of size n*m (Kronecker form: kron(A, I) +
    kron(I, B^T) acting on X's rows); O((n m)^3), meant for small matrices (xforms has no
    Schur decomposition, the method SciPy and JAX use).  No solution (eigenvalues of A and
    -B overlap) gives inf/NaN."""
    if method not in ("schur", "eigen"):
        raise ValueError(f"solve_sylvester: method must be 'schur' or 'eigen', got {method!r}")
    a = matrix_operand("solve_sylvester", A)
    b = matrix_operand("solve_sylvester", B)
    c = float_of(asarray_operand(C))
    a, b, c = _same_dtype(a, b, c)
    n, m = aval(a).shape[-1], aval(b).shape[-1]
    if aval(a).ndim != 2 or aval(b).ndim != 2 or aval(c).shape != (n, m):
        raise ValueError(f"solve_sylvester: expected A (n, n), B (m, m) and C (n, m), got "
                         f"{aval(a).shape}, {aval(b).shape} and {aval(c).shape}")
    from ..numpy.manipulation.shapes import transpose
    k = _uf.add(_kron_eye_left(a, m), _kron_eye_right(transpose(b), n))
    return reshape(_nl.solve(k, reshape(c, (n * m,))), (n, m))


def _same_dtype(*xs):
    from ..core.avals import promote_types
    from ..primitives.operands import convert
    dt, _ = promote_types(*((aval(x).dtype, False) for x in xs))
    return [convert(x, dt) for x in xs]


@returns_arrays
def block_diag(*arrs):
    """A block-diagonal matrix of the inputs (0-d: 1x1, 1-d: one row), dtype promoted."""
    if not arrs:
        return np.zeros((1, 0))
    mats = []
    for x in arrs:
        x = asarray_operand(x)
        nd = aval(x).ndim
        if nd > 2:
            raise ValueError(f"block_diag: inputs must have at most 2 dims, got shape "
                             f"{aval(x).shape}")
        mats.append(reshape(x, (1, 1)) if nd == 0 else reshape(x, (1, -1)) if nd == 1 else x)
    mats = _same_dtype(*mats)
    width = sum(aval(x).shape[1] for x in mats)
    rows, left = [], 0
    for x in mats:
        r, c = aval(x).shape
        rows.append(pad(x, ((0, 0), (left, width - left - c))))
        left += c
    return concatenate(rows, axis=0)
