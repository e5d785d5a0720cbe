"""Every primitive has every rule, or is exempt with a written reason."""
import pytest

import xforms  # noqa: F401  (registers all primitives)
from xforms.core import abstract_eval_rules, impl_rules
from xforms.primitives import ALL_PRIMITIVES, EXEMPT
from xforms.transforms.jvp import jvp_rules, linear_primitives
from xforms.transforms.transpose import transpose_rules
from xforms.transforms.vmap import vmap_rules

IDS = [p.name for p in ALL_PRIMITIVES]


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_core_rules(prim):
    assert prim in abstract_eval_rules, f"{prim} lacks abstract evaluation"
    assert prim in impl_rules, f"{prim} lacks a NumPy implementation"


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_jvp_rule(prim):
    assert prim in jvp_rules or prim in EXEMPT["jvp"], f"{prim} lacks a jvp rule"
    if prim in EXEMPT["jvp"]:
        assert EXEMPT["jvp"][prim], "an exemption needs a reason"


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=IDS)
def test_vmap_rule(prim):
    assert prim in vmap_rules or prim in EXEMPT["vmap"], f"{prim} lacks a batching rule"


@pytest.mark.parametrize("prim", sorted(linear_primitives, key=lambda p: p.name),
                         ids=lambda p: p.name)
def test_linear_primitives_transpose(prim):
    assert prim in transpose_rules or prim in EXEMPT["transpose"], \
        f"{prim} is linear but has no transpose rule"


def test_names_unique():
    assert len(IDS) == len(set(IDS))
