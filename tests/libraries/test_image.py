"""xforms.image against jax.image: resize (every method, with and without antialiasing) and
scale_and_translate, eagerly and on both jit tiers, under vmap, with derivatives by check_grads.

The expected values are jax 0.10.2's (jax_enable_x64), computed with the installed jax and
recorded here as literals: JAX is not installed in CI.
"""
import numpy as np
import pytest

import xforms as xf
import xforms.image as image
import xforms.numpy as xnp
from xforms.test_util import check_grads
from jax_tiers import close, same, tiers  # noqa: F401  (the fixture)

IMG = (np.arange(12.).reshape(3, 4) ** 1.5) % 5.0

# jax.image.resize(IMG, shape, method, antialias=...) under jax 0.10.2
JAX_RESIZE = [
    ("nearest", (5, 3), True, [
        [0.0, 2.8284271247461903, 0.19615242270663202],
        [0.0, 2.8284271247461903, 0.19615242270663202],
        [3.0, 4.696938456699069, 3.5202591774521323],
        [2.6274169979695223, 1.6227766016837926, 1.4828726939093997],
        [2.6274169979695223, 1.6227766016837926, 1.4828726939093997]]),
    ("linear", (5, 3), True, [
        [0.30000000000000004, 1.9142135623730951, 0.9858348333185001],
        [1.1616407864998737, 2.3239838062634606, 2.1408060844815853],
        [2.454101966249685, 2.938639172099009, 3.8732629612262137],
        [2.4451559256470734, 2.2622886493447414, 2.4642115042355157],
        [2.439191898578666, 1.8113883008418963, 1.5248438662417176]]),
    ("bilinear", (2, 6), False, [
        [0.75, 0.8975424859373686, 1.420163302851349, 2.9204766267577975, 2.1613670345637086,
         1.027179111393007],
        [2.7205627484771417, 2.2578238601759395, 1.8944569874685495, 2.291945049843799,
         2.1917681901163473, 1.9922193147950829]]),
    ("bicubic", (5, 3), True, [
        [-0.023995320894731016, 1.9761166974191862, 0.7202777975034462],
        [0.9100010033093955, 2.398830965909287, 2.1375826144543493],
        [2.3491115414642643, 2.9160055077100355, 4.012241617700811],
        [2.5419422470846875, 2.226818077624437, 2.5155341978115713],
        [2.504867981997475, 1.7095647719333515, 1.3059532273436716]]),
    ("lanczos3", (4, 7), True, [
        [-0.3065992578455287, -0.020753376893853228, 0.8285863565326922, 2.378818441837204,
         2.5014628146209916, 0.8219231621590025, -0.4527690293494686],
        [2.016177155265498, 1.282101601715133, 0.8858818421436467, 2.82942314099383,
         4.370916885453935, 3.2624958625017886, 2.0889303147027514],
        [3.534869189066674, 2.586163073110907, 1.5641179606863576, 2.4459688668237898,
         3.753770806821993, 3.4862704270824993, 3.0031839010921],
        [2.56451313749243, 2.444596392167511, 2.110802950531643, 1.6538917976515806,
         1.3347379509503372, 1.244972675707148, 1.275642489208803]]),
    ("lanczos5", (2, 3), True, [
        [0.6635716845808103, 2.5214141134483614, 2.3705095814751487],
        [2.563413885664462, 2.2211818661620577, 2.728486186810595]]),
    ("area", (2, 6), True, [
        [1.0, 1.0300566479164912, 1.0601132958329829, 3.4512642353971494, 2.377726121509475,
         1.3041880076217987],
        [2.7516113319796816, 2.2391956472396655, 1.7267799624996496, 2.6474972200222178,
         2.404749370889598, 2.1620015217569772]]),
    ("cubic-pytorch", (5, 6), False, [
        [-0.398302723159731, 0.19112218545518034, 1.3802692010584001, 2.672582710102472,
         1.4192656055097588, -0.36358785549092054],
        [1.206439659123336, 0.8417855846801531, 1.4291882475654432, 3.5609216379604725,
         2.9627790002516865, 1.4466470189096592],
        [3.157956606987938, 1.760488827886964, 1.547508757096102, 4.262792416971279,
         4.438279932938112, 3.4181168789063907],
        [3.1002207699889306, 2.223799537777107, 1.770442100448479, 2.7854679471060355,
         2.8490675143243176, 2.4747482003218475],
        [2.636176951560577, 2.4055772915871403, 1.9270736202978835, 1.4300428779731404,
         1.2370612362460198, 1.2837789498128187]]),
]

S, T = np.array([1.3, 0.8]), np.array([0.2, -0.4])
# jax.image.scale_and_translate(IMG, (4, 5), (0, 1), S, T, "cubic")
JAX_ST = [[0.4040102528057818, 2.269925364923676, 0.04126626245722922, 0.0, 0.0],
          [1.1146934159211073, 3.2519521907234603, 2.042239153082357, 0.0, 0.0],
          [2.033475741079449, 3.4698426009025627, 3.3696966360387033, 0.0, 0.0],
          [2.2860405587502903, 1.6105838046331467, 1.4363529880856918, 0.0, 0.0]]
# jax.grad(lambda s, t: sum(sin(scale_and_translate(IMG, (4, 5), (0, 1), s, t, "cubic"))), (0, 1))
JAX_ST_GRAD = ([-3.224991700573666, -0.5531889851021646],
               [-1.2761290014106421, 0.8250477098768307])


@pytest.mark.parametrize("method,shape,antialias,want", JAX_RESIZE,
                         ids=[f"{m}-{aa}" for m, _, aa, _ in JAX_RESIZE])
def test_resize_equals_jax(method, shape, antialias, want):
    got = image.resize(IMG, shape, method, antialias=antialias)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14)


def test_resize_on_both_jit_tiers(tiers):
    method, shape, antialias, want = JAX_RESIZE[4]
    close(tiers(lambda x: image.resize(x, shape, method, antialias=antialias), IMG), want)
    nearest = JAX_RESIZE[0]
    same(tiers(lambda x: image.resize(x, nearest[1], "nearest"), IMG), nearest[3])


def test_resize_dtypes_follow_jax():
    ints = np.arange(6).reshape(2, 3)
    assert image.resize(ints, (4, 5), "nearest").dtype == ints.dtype    # a gather
    assert image.resize(ints, (4, 5), "linear").dtype == np.float64      # promoted to inexact
    assert image.resize(IMG.astype(np.float32), (2, 6), "cubic").dtype == np.float32


def test_resize_under_vmap_is_per_image():
    batch = np.stack([IMG, 2 * IMG + 1])
    got = xf.vmap(lambda x: image.resize(x, (5, 3), "linear"))(batch)
    want = np.asarray(JAX_RESIZE[1][3])
    np.testing.assert_allclose(np.asarray(got), np.stack([want, 2 * want + 1]), rtol=1e-12)


@pytest.mark.parametrize("method", ["linear", "lanczos3", "cubic-pytorch"])
def test_resize_derivatives(method):
    check_grads(lambda x: image.resize(x, (5, 3), method, antialias=False), (IMG,), order=2)


def test_scale_and_translate_values_and_gradient_equal_jax(tiers):
    def f(s, t):
        return image.scale_and_translate(IMG, (4, 5), (0, 1), s, t, "cubic")
    close(tiers(f, S, T), JAX_ST)
    grad = xf.grad(lambda s, t: xnp.sum(xnp.sin(f(s, t))), (0, 1))(S, T)
    for g, want in zip(grad, JAX_ST_GRAD):
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-10)
    check_grads(lambda x, s, t: image.scale_and_translate(x, (4, 5), (0, 1), s, t, "linear"),
                (IMG, S, T), order=2)


def test_bad_methods_are_named():
    with pytest.raises(ValueError, match="Unknown resize method"):
        image.resize(IMG, (2, 2), "bicubicc")
    with pytest.raises(ValueError, match="Nearest neighbor"):
        image.scale_and_translate(IMG, (2, 2), (0, 1), S, T, "nearest")
    with pytest.raises(ValueError, match="length equal"):
        image.resize(IMG, (2,), "linear")


def test_integer_and_bool_images_resample_in_jax_dtype():
    # jax 0.10.2 (x64) values: promote_dtypes_inexact makes uint8/int32/bool float32, int64
    # float64 -- the output is float32 for an 8-bit image, not float64
    a = np.array([[0, 255], [10, 20]], np.uint8)
    want = [[0.0, 127.5, 255.0], [5.0, 71.25, 137.5], [10.0, 15.0, 20.0]]
    got = image.resize(a, (3, 3), "linear")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), want)
    st = image.scale_and_translate(a, (3, 3), (0, 1), np.array([1.5, 1.5]),
                                   np.array([0., 0.]), "linear")
    assert st.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(st), want)
    wide = image.resize(a.astype(np.int64), (3, 1), "linear")
    assert wide.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(wide), [[127.5], [71.25], [15.0]])
    flags = image.resize(a > 5, (3, 1), "linear")
    assert flags.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(flags), [[0.5], [0.75], [1.0]])
