"""xforms.scipy.spatial.transform (Rotation, Slerp) and xforms.scipy.cluster.vq against
jax 0.10.2's jax.scipy.spatial.transform and jax.scipy.cluster.vq (jax_enable_x64): the
expected values were computed with the installed jax and are recorded here as literals (CI
has no jax). Each conversion, the gimbal-lock cases of as_euler, Slerp inside and outside
its key times, and grad / jit / vmap through them."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.scipy.cluster.vq import vq
from xforms.scipy.spatial.transform import Rotation, Slerp

Q = np.array([[0.1, 0.2, -0.3, 0.9], [-0.5, 0.4, 0.3, -0.2], [0.0, 0.0, 0.3, 0.0]])
E = np.array([[0.3, -1.2, 2.0], [-2.5, 0.7, 0.1]])
L = np.array([[0.3, 0.0, 0.2], [0.3, np.pi / 2, 0.2], [0.3, np.pi, 0.1]])   # gimbal locks
KEYS = np.array([[90., 0, 0], [0, 45, 0], [0, 0, -30]])
OBS = np.array([[1.1, 2.1, 3.1], [5.9, 4.8, 6.2], [2.4, 3.6, 4.4]])
BOOK = np.array([[1., 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]])

JAX = {'from_quat': [[0.1025978352085154,
                0.2051956704170308,
                -0.3077935056255462,
                0.9233805168766386],
               [-0.6804138174397717,
                0.5443310539518174,
                0.408248290463863,
                -0.2721655269759087],
               [0.0, 0.0, 1.0, 0.0]],
 'as_matrix': [[[0.726315789473684, 0.6105263157894736, 0.31578947368421045],
                [-0.5263157894736841, 0.7894736842105261, -0.31578947368421045],
                [-0.4421052631578946, 0.06315789473684208, 0.8947368421052629]],
               [[0.0740740740740741, -0.5185185185185185, -0.8518518518518519],
                [-0.9629629629629629, -0.2592592592592593, 0.07407407407407407],
                [-0.2592592592592593, 0.8148148148148148, -0.5185185185185186]],
               [[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]]],
 'as_rotvec': [[0.2106024073901632, 0.4212048147803264, -0.6318072221704896],
               [1.8316236840570568, -1.4652989472456455, -1.0989742104342342],
               [0.0, 0.0, 3.141592653589793]],
 'as_rotvec_deg': [[12.066629098751129, 24.133258197502258, -36.19988729625339],
                   [104.94430675267269, -83.95544540213815, -62.96658405160361],
                   [0.0, 0.0, 180.0]],
 'as_mrp': [[0.05334245320064027, 0.10668490640128055, -0.16002735960192083],
            [0.5348469228349535, -0.42787753826796276, -0.3209081537009721],
            [0.0, 0.0, 1.0]],
 'canonical': [[0.1025978352085154,
                0.2051956704170308,
                -0.3077935056255462,
                0.9233805168766386],
               [0.6804138174397717,
                -0.5443310539518174,
                -0.408248290463863,
                0.2721655269759087],
               [0.0, 0.0, 1.0, 0.0]],
 'scalar_first': [[0.9233805168766386,
                   0.1025978352085154,
                   0.2051956704170308,
                   -0.3077935056255462],
                  [-0.2721655269759087,
                   -0.6804138174397717,
                   0.5443310539518174,
                   0.408248290463863],
                  [0.0, 0.0, 0.0, 1.0]],
 'inv': [[-0.1025978352085154, -0.2051956704170308, 0.3077935056255462, 0.9233805168766386],
         [0.6804138174397717, -0.5443310539518174, -0.408248290463863, -0.2721655269759087],
         [-0.0, -0.0, -1.0, 0.0]],
 'magnitude': [0.7880020532837791, 2.5903070551572625, 3.141592653589793],
 'mul': [[0.20519567041703085, -0.10259783520851543, 0.9233805168766388, 0.30779350562554625],
         [0.3703703703703704, -0.29629629629629634, -0.2222222222222223, -0.851851851851852],
         [-0.20519567041703085, 0.10259783520851543, 0.9233805168766388, 0.30779350562554625]],
 'apply': [[0.11684210526315786, -1.7368421052631575, 1.581052631578947],
           [-0.6333333333333333, 2.2333333333333334, 1.1666666666666667]],
 'apply_inv': [[-0.03473684210526318, -0.6378947368421051, 2.2631578947368416],
               [-2.228421052631578, -0.9673684210526317, -0.9210526315789472]],
 'mean': [[-0.2272087203903792, 0.6633628158915431, -0.7129698253579948],
          [-0.898060356622027, -0.4258816505736107, -0.11005641993366355],
          [-0.37664810266677895, 0.6152841572778711, 0.6925038718739238]],
 'mean_w': [[-0.758752784630371, 0.3052754867316568, -0.5754138415231311],
            [-0.49946631862810437, -0.8397121036058635, 0.2131125984401288],
            [-0.41812391509186114, 0.44909961061947573, 0.7896087204240392]],
 'from_matrix': [[0.0, 0.0, 0.7071067811865475, 0.7071067811865475],
                 [1.0, 0.0, 0.0, 0.0],
                 [0.0, 1.0, 0.0, 0.0]],
 'from_rotvec': [[0.11774948175386854,
                  -0.47099792701547416,
                  0.7849965450257903,
                  0.38480701213906454],
                 [-0.9269362748877524,
                  0.2595421569685707,
                  0.037077450995510096,
                  0.268425545880034]],
 'from_rotvec_small': [4.9999999890625e-05,
                       -9.999999978125e-05,
                       2.49999999453125e-05,
                       0.9999999934375],
 'from_rotvec_deg': [[0.09334940108143816,
                      -0.37339760432575264,
                      0.622329340542921,
                      0.6815910139526038],
                     [-0.7578657027393542,
                      0.21220239676701919,
                      0.03031462810957417,
                      0.6161905084795575]],
 'from_mrp': [[0.09188361408882083,
               -0.3675344563552833,
               0.6125574272588056,
               -0.6937212863705973],
              [-0.6451612903225806,
               0.18064516129032257,
               0.025806451612903226,
               -0.7419354838709677]],
 'from_euler_z': [0.0, 0.0, 0.7071067811865475, 0.7071067811865476],
 'from_euler_YX': [[-0.5583021470672822,
                    0.12333661295605197,
                    0.08437911673942802,
                    0.8160679856132489],
                   [0.10812334670701089,
                    -0.8914502563344943,
                    0.32540474528597657,
                    0.2962052229846879]],
 'from_euler_xyz': [[0.5364341138911902,
                     -0.19786775626458644,
                     0.7322877628656068,
                     0.3699208359120593],
                    [-0.8957400906904176,
                     0.06343427742067106,
                     0.3398021650665375,
                     0.2795715847401763]],
 'as_euler_xyz': [[0.07047134457879567, 0.4579444204670944, -0.6270706625890181],
                  [2.137525544318403, 0.2622551588758566, -1.4940244355251184],
                  [0.0, 0.0, -3.141592653589793]],
 'lock_xyz': [[17.18873385392469, 0.0, 11.459155902616475],
              [5.729577951308237, 90.0, 0.0],
              [-162.81126614607533, 0.0, -174.27042204869178]],
 'from_euler_ZXY': [[-0.4054361185985853,
                     0.641107300182747,
                     -0.4031560011349479,
                     0.5119259928319533],
                    [0.15254216393613362,
                     -0.310193983109716,
                     -0.8849322605960537,
                     0.31209850243243586]],
 'as_euler_ZXY': [[-0.6582679678347247, 0.06319995891453356, 0.4589306628524006],
                  [2.0344439357957027, 0.9524096849088943, 2.677945044588987],
                  [-3.141592653589793, 0.0, 0.0]],
 'lock_ZXY': [[17.18873385392469, 0.0, 11.459155902616475],
              [28.64788975654116, 90.0, 0.0],
              [-162.8112661460753, 0.0, -174.27042204869178]],
 'from_euler_zxz': [[-0.3726545158915328,
                     -0.4242048261716391,
                     0.7533365879022981,
                     0.3371392332050068],
                    [0.09172476183227256,
                     0.3304019891353087,
                     -0.8755320846648249,
                     0.34038898684403734]],
 'as_euler_zxz': [[-1.4288992721907325, 0.46295472794035675, 0.7853981633974483],
                  [-0.30805278102377676, 2.1159137731572724, -1.657534665470882],
                  [-3.141592653589793, 0.0, 0.0]],
 'lock_zxz': [[28.64788975654116, 0.0, 0.0],
              [17.18873385392469, 90.0, 11.459155902616475],
              [11.459155902616475, -180.0, 0.0]],
 'from_euler_YXY': [[-0.3726545158915328,
                     0.7533365879022981,
                     -0.4242048261716391,
                     0.3371392332050068],
                    [0.09172476183227256,
                     -0.8755320846648249,
                     0.3304019891353087,
                     0.34038898684403734]],
 'as_euler_YXY': [[1.4677147182721964, 0.6608452958229667, -1.0303768265243125],
                  [-0.5667292175235064, 1.8330514856707527, -1.6475682180646745],
                  [-3.141592653589793, -3.141592653589793, 0.0]],
 'lock_YXY': [[28.64788975654116, 0.0, 0.0],
              [17.18873385392469, 90.0, 11.459155902616475],
              [11.459155902616475, -180.0, 0.0]],
 'slerp': [[-0.21045113001044466, 0.0, 0.8969369555090021, 0.3888629832210433],
           [0.0, 0.0, 0.7071067811865475, 0.7071067811865476],
           [0.21045113001044466, 0.0, 0.3888629832210431, 0.8969369555090021],
           [0.38268343236508984,
            -2.7755575615628914e-17,
            -1.6653345369377348e-16,
            0.9238795325112867],
           [0.01984961202692226,
            -0.24676783909855562,
            1.3877787807814457e-17,
            0.9688713157530313],
           [0.291690451982995,
            -0.06697709022274763,
            3.469446951953615e-18,
            0.9541649488465034]],
 'slerp_scalar': [0.25410398952651125,
                  -0.09356235701227827,
                  -6.938893903907228e-18,
                  0.9626407678137352],
 'grad': [0.2697115220477203, 1.4040546574869006, 0.8448017888966324],
 'slerp_grad': -0.65594376786467,
 'vq_code': [0, 3, 1],
 'vq_dist': [0.1732050807568879, 1.920937271229855, 0.8246211251235323],
 'vq1_code': [0, 1, 2],
 'vq1_dist': [1.0, 1.0, 3.0],
 'vq_grad': [[0.5773502691896257, 0.5773502691896257, 0.5773502691896257],
             [0.9891004919611718, -0.1041158412590708, 0.1041158412590708],
             [0.48507125007266577, 0.7276068751089989, 0.4850712500726663]]}


def close(a, b, tol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


r = Rotation.from_quat(Q)
SLERP = Slerp.init(xnp.array([0., 1, 3]), Rotation.from_euler("zxy", KEYS, degrees=True))
CASES = {
    "from_quat": lambda: r.quat, "as_matrix": r.as_matrix, "as_rotvec": r.as_rotvec,
    "as_rotvec_deg": lambda: r.as_rotvec(degrees=True), "as_mrp": r.as_mrp,
    "canonical": lambda: r.as_quat(canonical=True),
    "scalar_first": lambda: r.as_quat(scalar_first=True),
    "inv": lambda: r.inv().quat, "magnitude": r.magnitude, "mul": lambda: (r * r[::-1]).quat,
    "apply": lambda: r[:2].apply(E), "apply_inv": lambda: r[0].apply(E, inverse=True),
    "mean": lambda: r.mean().as_matrix(),
    "mean_w": lambda: r.mean(xnp.array([1., 2., 3.])).as_matrix(),
    "from_matrix": lambda: Rotation.from_matrix(np.array([
        [[0., -1, 0], [1, 0, 0], [0, 0, 1]], [[1., 0, 0], [0, -1, 0], [0, 0, -1]],
        [[-1., 0, 0], [0, 1, 0], [0, 0, -1]]])).quat,
    "from_rotvec": lambda: Rotation.from_rotvec(E).quat,
    "from_rotvec_small": lambda: Rotation.from_rotvec(np.array([1e-4, -2e-4, 5e-5])).quat,
    "from_rotvec_deg": lambda: Rotation.from_rotvec(E * 40, degrees=True).quat,
    "from_mrp": lambda: Rotation.from_mrp(E).quat,
    "from_euler_z": lambda: Rotation.from_euler("z", 90., degrees=True).quat,
    "from_euler_YX": lambda: Rotation.from_euler("YX", E[:, :2]).quat,
    "slerp": lambda: SLERP(xnp.array([-0.5, 0, 0.5, 1, 2.9, 3.5])).as_quat(),
    "slerp_scalar": lambda: SLERP(1.7).as_quat(),
}
for _seq in ("xyz", "ZXY", "zxz", "YXY"):
    CASES["from_euler_" + _seq] = lambda s=_seq: Rotation.from_euler(s, E).quat
    CASES["as_euler_" + _seq] = lambda s=_seq: r.as_euler(s)
    CASES["lock_" + _seq] = lambda s=_seq: Rotation.from_euler(s, L).as_euler(s, degrees=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rotation_matches_jax(name):
    tol = 1e-9 if name.startswith("lock") else 1e-12      # (acos-like near the lock)
    close(CASES[name](), JAX[name], tol)


def test_grad_jit_vmap_through_rotations():
    def f(v):
        turned = Rotation.from_rotvec(v) * Rotation.from_quat(Q[0])
        return Rotation.from_rotvec(v).as_euler("ZYX").sum() + turned.as_mrp()[1]
    v = np.array([0.3, -0.4, 1.1])
    close(xf.grad(f)(v), JAX["grad"])
    close(xf.jit(f)(v), f(v))
    close(xf.grad(lambda t: SLERP(t).as_rotvec().sum())(1.7), JAX["slerp_grad"])
    # vmap sees one rotation per example; a Rotation goes in and out of jit as a pytree
    close(xf.vmap(lambda q: Rotation.from_quat(q).as_matrix())(Q), r.as_matrix())
    back = xf.jit(lambda rot, w: rot.inv() * Rotation.from_rotvec(w))(r, E[:1])
    assert isinstance(back, Rotation)
    close(back.quat, (r.inv() * Rotation.from_rotvec(E[:1])).quat)
    close(xf.jit(lambda s, t: s(t).quat)(SLERP, 1.7), SLERP(1.7).quat)


def test_rotation_shapes_dtypes_and_errors():
    assert r.single is False and len(r) == 3 and Rotation.from_quat(Q[0]).single
    assert Rotation.identity().as_matrix().tolist() == np.eye(3).tolist()
    assert Rotation.identity(2).quat.shape == (2, 4)       # (JAX asserts num is None)
    assert Rotation.concatenate([r, r[:1]]).quat.shape == (4, 4)
    assert Rotation.from_rotvec(np.float32([0.1, 0.2, 0.3])).as_euler("xyz").dtype == np.float32
    assert Rotation.from_euler("x", 1).quat.dtype == np.float64     # integers: default float
    with pytest.raises(TypeError, match="Single rotation has no len"):
        len(r[0])
    with pytest.raises(TypeError, match="not subscriptable"):
        r[0][0]
    with pytest.raises(ValueError, match="consecutive axes"):
        Rotation.from_euler("xxy", E)
    with pytest.raises(ValueError, match=r"'x', 'y', 'z'"):
        Rotation.from_euler("xYz", E)
    with pytest.raises(ValueError, match="3 characters"):
        r.as_euler("xy")
    with pytest.raises(ValueError, match=r"need angles of shape \(\.\.\., 1\)"):
        Rotation.from_euler("z", np.array([1., 2.]))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 3, 3\)"):
        Rotation.from_matrix(np.eye(2))
    with pytest.raises(ValueError, match="3 weights for 2"):
        r[:2].mean(np.ones(3))
    with pytest.raises(ValueError, match="at least 2"):
        Slerp.init(np.zeros(1), r[:1])
    with pytest.raises(ValueError, match="3 rotations but 2 times"):
        Slerp.init(np.zeros(2), r)


def test_random_rotations_are_uniform():
    rots = Rotation.random(xf.random.key(0), 4000)
    q = np.asarray(rots.quat)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1, rtol=1e-12)
    # uniform on SO(3): every entry of the matrix has mean 0 and variance 1/3
    m = np.asarray(rots.as_matrix()).reshape(-1, 9)
    assert np.abs(m.mean(0)).max() < 0.05 and np.abs(m.var(0) - 1 / 3).max() < 0.03
    assert Rotation.random(xf.random.key(0)).single
    np.testing.assert_array_equal(Rotation.random(xf.random.key(0), 4000).quat, q)


def test_vq_matches_jax():
    code, dist = vq(OBS, BOOK)
    assert code.tolist() == JAX["vq_code"]
    close(dist, JAX["vq_dist"])
    code, dist = vq(np.array([1, 5, 9]), np.array([0, 4, 6]))      # 1-d, integers
    assert code.tolist() == JAX["vq1_code"] and dist.dtype == np.float64
    close(dist, JAX["vq1_dist"])
    close(xf.grad(lambda o: vq(o, BOOK)[1].sum())(OBS), JAX["vq_grad"])
    close(xf.jit(vq)(OBS, BOOK)[1], JAX["vq_dist"])
    with pytest.raises(ValueError, match="same rank"):
        vq(OBS, BOOK[0])
