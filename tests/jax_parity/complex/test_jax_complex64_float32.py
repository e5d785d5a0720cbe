"""complex64 exp, expm1, sin, cos, sinh, cosh and log1p computed in float32, as XLA does
(issue #31): complex_arith's scalar functions type their constants by the parts, so the
compiled tier's complex64 kernels never widen to float64.  The values are jax 0.10.2's
(`jax.jit(jnp.NAME)(np.complex64(z))`, x64 enabled, CPU), ordinary points where the float64
computation rounded to other float32 bits (2,000 such points: exp differed in 1100 bits,
141 now, as before session 28's algorithms)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp

A = -0.3963145911693573 + 0.0005815973854623735j
B = 0.0006404226296581328 - 0.6701104044914246j
C = 0.05245005711913109 - 1.9805365800857544j
D = 0.0009470809600315988 + 1.676937460899353j
E = -0.0005356693873181939 + 0.25824764370918274j
F = 3.9120001792907715 - 0.2965368330478668j

JAX = {   # name: [(z, jnp.NAME(np.complex64(z)))]
    "exp": [(A, 0.6727948784828186 + 0.00039129576180130243j),
            (E, 0.9663212299346924 + 0.255249947309494j)],
    "expm1": [(F, 46.816619873046875 - 14.610164642333984j),
              (D, -1.1060423851013184 + 0.9953144788742065j)],
    "sin": [(B, 0.0007896746974438429 - 0.7214003801345825j),
            (C, 0.1935732215642929 - 3.5494296550750732j)],
    "cos": [(A, 0.9224900007247925 + 0.0002245089563075453j),
            (C, 3.687235116958618 + 0.18633867800235748j)],
    "sinh": [(A, -0.40677085518836975 + 0.0006278726505115628j),
             (B, 0.0005019605159759521 - 0.6210726499557495j)],
    "cosh": [(B, 0.7837532758712769 - 0.00039777159690856934j),
             (C, -0.39891916513442993 - 0.048130542039871216j)],
    "log1p": [(A, -0.5047016143798828 + 0.0009634111193008721j),
              (D, 0.6693410873413086 + 1.032666802406311j)],
}


@pytest.mark.parametrize("name", sorted(JAX))
def test_compiled_complex64_is_xlas_float32_arithmetic(name):
    z = np.array([p for p, _ in JAX[name]], np.complex64)
    want = np.array([w for _, w in JAX[name]], np.complex64)
    got = np.asarray(xf.jit(getattr(xnp, name), tiered=False)(z))
    assert got.dtype == np.complex64
    np.testing.assert_array_equal(got.view(np.float32), want.view(np.float32))


def test_scalar_functions_keep_complex64_parts_in_float32():
    """The eager tier's redone elements and the CUDA simulator run the scalar functions in
    Python on NumPy scalars: float32 parts stay float32 (each libm call rounded to float32),
    Python complex (complex128) ones float64."""
    from xforms.primitives.complex_arith import elementary, trigonometric
    x, y = elementary.own_parts(np.complex64(A))
    assert type(x) is np.float32 and type(y) is np.float32
    assert type(elementary.exp_typed(x)) is np.float32
    assert type(elementary.expm1_typed(y)) is np.float32
    with np.errstate(over="ignore"):        # (float32 overflows to inf, as XLA's)
        assert elementary.exp_scalar(np.complex64(100 + 0j)) == complex(np.inf, 0.0)
        # jax 0.10.2: jnp.sin(np.complex64(0.5+2j)) = 1.8036928+3.1828694j (float64 rounds to 1.8036927)
        got = np.complex64(trigonometric.sin_scalar(np.complex64(0.5 + 2j)))
        assert got == np.complex64(1.8036928 + 3.1828694j)
    assert elementary.exp_scalar(complex(100.0, 0.0)) == complex(np.exp(100.0), 0.0)


def test_complex_expm1_at_709_is_finite():
    """expm1's overflow guard now stops beyond 709 (float64's e^x is finite to 709.78), as
    sin's always did: at x == 709 it gave inf+infj.  jax 0.10.2: jnp.expm1(709+1j)."""
    got = np.asarray(xf.jit(xnp.expm1, tiered=False)(np.array([709 + 1j])))
    np.testing.assert_array_equal(got, [4.440424502042077e+307 + 6.915551420227227e+307j])
