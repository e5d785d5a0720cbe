"""`jax.sharding`'s names that `shard_map` needs: `Mesh`, `PartitionSpec` (also `xf.P`) and
`make_mesh`; a mesh is one-dimensional.

A mesh's members are either **virtual members of this process** (`xf.make_mesh((4,),
("i",))`: `shard_map` runs them as `vmap(axis_name="i")`, the way JAX's CPU tests use
`--xla_force_host_platform_device_count`) or **the ranks of an MPI communicator**
(`xforms.mpi.make_mesh("i")`: each rank runs one member, collectives are MPI calls, as in
`pmap`).  The same `shard_map` program gives the same numbers on both.

    >>> mesh = xf.make_mesh((4,), ("i",))
    >>> mesh.shape
    OrderedDict([('i', 4)])
    >>> P("i", None)
    P('i', None)

Not supported, with an error that says so: meshes of more than one axis, and building
`NamedSharding`s: xforms keeps one copy of each array on the host (or its one GPU), so
there is nothing to place.  Such objects exist only as reports:
`xforms.debug.inspect_array_sharding` passes the sharding a value has.  A
`SingleDeviceSharding` of this process's device may be built (it places nothing): the
sharding argument of `xf.make_array_from_callback` and its kin.
"""
from collections import OrderedDict

import numpy as np

from .runtime import Device, devices as _devices


class PartitionSpec:
    """How an array's axes map onto mesh axes: one entry per leading array axis, each a
    mesh axis name (that axis is split into the mesh's members), a tuple of names, or None
    (not split); axes past the last entry are not split.

    >>> PartitionSpec("i")          # axis 0 split over mesh axis "i"
    P('i',)
    """
    __slots__ = ("parts",)

    def __init__(self, *parts):
        for p in parts:
            names = p if isinstance(p, tuple) else (p,)
            if not all(n is None or isinstance(n, str) for n in names):
                raise TypeError(f"PartitionSpec entries are mesh axis names (str), tuples of "
                                f"them or None, got {p!r}")
        self.parts = parts

    def __iter__(self):
        return iter(self.parts)

    def __len__(self):
        return len(self.parts)

    def __getitem__(self, i):
        return self.parts[i]

    def __eq__(self, other):
        return isinstance(other, PartitionSpec) and self.parts == other.parts

    def __hash__(self):
        return hash(("PartitionSpec", self.parts))

    def __repr__(self):
        inner = ", ".join(map(repr, self.parts))
        return f"P({inner}{',' if len(self.parts) == 1 else ''})"    # JAX's repr


P = PartitionSpec


class Mesh:
    """A one-dimensional array of devices with a name for its axis.

    `devices`: a sequence (or 1-d array) of devices, `axis_names`: one name.  Built by
    `make_mesh` (members of this process) or `xforms.mpi.make_mesh` (MPI ranks: `comm` is
    their communicator).

    >>> Mesh(np.array(xf.devices()), ("batch",)).size
    1
    """

    def __init__(self, devices, axis_names, *, axis_types=None, comm=None):
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        arr = np.asarray(devices, dtype=object)
        if arr.ndim != len(names):
            raise ValueError(f"Mesh: {arr.ndim}-dimensional devices need {arr.ndim} axis "
                             f"names, got {names}")
        if len(names) != 1:
            raise NotImplementedError(
                f"Mesh with axes {names}: xforms supports one-dimensional meshes only (one "
                "named axis, of this process's members or of MPI ranks); flatten the mesh "
                "into one axis")
        if not isinstance(names[0], str):
            raise TypeError(f"Mesh axis names are strings, got {names[0]!r}")
        self.devices, self.axis_names, self.comm = arr, names, comm
        self.axis_types = axis_types

    @property
    def shape(self):
        return OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self):
        return self.devices.shape

    @property
    def size(self):
        return int(self.devices.size)

    @property
    def shape_tuple(self):
        return tuple(self.shape.items())

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.devices.shape == other.devices.shape and self.comm is other.comm
                and all(a == b for a, b in zip(self.devices.flat, other.devices.flat)))

    def __hash__(self):
        return hash((self.axis_names, self.devices.shape, tuple(self.devices.flat),
                     id(self.comm)))

    def __repr__(self):
        where = "MPI ranks" if self.comm is not None else "this process"
        return f"Mesh({self.axis_names[0]!r}: {self.size}, members: {where})"


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A mesh of `axis_shapes` members in this process, named `axis_names` (one axis).
    Members beyond this process's devices are virtual: `shard_map` runs them one after
    another as a `vmap`, so a program written for k devices runs, with the same numbers,
    on one (MPI ranks as members: `xforms.mpi.make_mesh`).

    >>> xf.make_mesh((8,), ("data",))
    Mesh('data': 8, members: this process)
    """
    shapes = tuple(int(s) for s in axis_shapes)
    names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
    if len(shapes) != len(names):
        raise ValueError(f"make_mesh: {len(shapes)} axis sizes {shapes} but {len(names)} "
                         f"axis names {names}")
    if len(shapes) != 1:
        return Mesh(np.empty(shapes, dtype=object), names)   # the one-axis error
    if shapes[0] < 1:
        raise ValueError(f"make_mesh: a mesh axis needs at least one member, got {shapes}")
    if devices is None:
        real = _devices()
        devices = [real[j] if j < len(real) else Device(j, real[0].platform, "virtual")
                   for j in range(shapes[0])]
    elif len(devices) != shapes[0]:
        raise ValueError(f"make_mesh: {len(devices)} devices for a mesh of {shapes[0]}")
    return Mesh(devices, names, axis_types=axis_types)


class _Reported:
    """A sharding xforms reports (`debug.inspect_array_sharding`) but does not let a user
    build: xforms places no arrays, so the constructor raises, naming the gap."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__}: xforms does not place arrays on devices (each array has "
            "one copy, on the host or its one GPU); to split work over a mesh, pass "
            "PartitionSpecs to shard_map's in_specs/out_specs")

    @classmethod
    def _of(cls, *fields):
        obj = object.__new__(cls)
        obj._fields = fields
        return obj

    memory_kind = "device"
    is_fully_addressable = True
    num_devices = property(lambda self: len(self.device_set))
    __eq__ = lambda self, other: type(other) is type(self) and other._fields == self._fields
    __hash__ = lambda self: hash((type(self), self._fields))


class SingleDeviceSharding(_Reported):
    """The sharding of an array on one device (every xforms array outside a shard_map):
    `device_set`, `memory_kind`, `is_fully_replicated` as JAX's.  Constructible for a device
    of this process, as the sharding argument of `xf.make_array_from_callback` and its kin.

        >>> xf.make_array_from_callback((2,), SingleDeviceSharding(xf.devices()[0]), f)
    """
    def __init__(self, device, *, memory_kind=None):
        if not isinstance(device, Device) or device.process_index != 0:
            raise TypeError(f"SingleDeviceSharding: expected a device of this process "
                            f"(xf.devices()), got {device!r}")
        if memory_kind not in (None, "device"):
            raise NotImplementedError(f"SingleDeviceSharding(memory_kind={memory_kind!r}): "
                                      "xforms has device memory only")
        self._fields = (device,)

    device_set = property(lambda self: {self._fields[0]})
    is_fully_replicated = True

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._fields[0]!r}, memory_kind=device)"


class NamedSharding(_Reported):
    """The sharding of a value inside a shard_map / pmap body: its `mesh` and `spec`, as
    JAX's.  Not constructible."""
    mesh = property(lambda self: self._fields[0])
    spec = property(lambda self: self._fields[1])
    device_set = property(lambda self: set(self.mesh.devices.flat))
    is_fully_replicated = property(lambda self: all(p is None for p in self.spec))

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r}, memory_kind=device)"


# JAX's explicit-sharding API (abstract meshes, axis types, resharding): xforms places each
# array on its one device, so these are absent -- with the reason, `hasattr` still False
_EXPLICIT_SHARDING = frozenset({
    "AbstractDevice", "AbstractMesh", "AxisType", "ManualAxisType", "Sharding", "auto_axes",
    "explicit_axes", "get_abstract_mesh", "get_mesh", "make_single_device_sharding",
    "reshard", "set_mesh", "use_abstract_mesh"})


def __getattr__(name):
    if name in _EXPLICIT_SHARDING:
        raise AttributeError(
            f"xforms.sharding.{name}: JAX's explicit sharding is not implemented: xforms places "
            "each array on its one device; split work with xf.shard_map over a one-dimensional "
            "mesh (xf.make_mesh, or xforms.mpi's mesh of MPI ranks)")
    raise AttributeError(f"module 'xforms.sharding' has no attribute {name!r}")
