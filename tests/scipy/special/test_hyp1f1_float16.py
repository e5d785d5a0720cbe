"""float16 hyp1f1 (issue #31): summed in float16, the series' roundings piled up (189 of
300 random points off SciPy's value rounded to float16); it is now computed in float32 and
rounded once.  jax 0.10.2 sums its own series in float16 (term *= (a + k) / (b + k) * x /
(k + 1), each step rounded): 1F1(2; -0.5; 1.5) = -116.375 there, SciPy's -116.52558
rounds to -116.5, xforms' value (docs/testing.md).  Expected values: SciPy's, rounded.
"""
import numpy as np

import xforms.scipy.special as xsp
from jax_tiers import tiers, same  # noqa: F401 (a fixture)

# (a, b, x) -> SciPy's float64 hyp1f1 rounded to float16; old xforms in the comment
A = np.array([2.0, 2.095703125, -0.841796875, -2.671875, -2.8671875, 3.505859375], np.float16)
B = np.array([-0.5, 5.41015625, 3.625, 0.529296875, 4.35546875, 3.54296875], np.float16)
X = np.array([1.5, -4.9375, 2.2109375, 1.765625, 1.5693359375, 1.8740234375], np.float16)
WANT = [-116.5,            # old -116.5 (jax -116.375)
        0.218994140625,    # old 0.2186279296875
        0.463623046875,    # old 0.46337890625
        -0.71728515625,    # old -0.7177734375
        0.229248046875,    # old 0.22900390625
        6.41015625]        # old 6.4140625


def test_float16_hyp1f1_is_scipys_value_rounded(tiers):
    same(tiers(xsp.hyp1f1, A, B, X), WANT, np.float16)
