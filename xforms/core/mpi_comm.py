"""A hashable handle on an MPI communicator, the one thing collectives record about MPI.

IR parameters must be hashable and comparable (traces and compiled kernels are cached by
them); an mpi4py communicator is neither reliably, so primitives carry an `MpiComm`: it
compares by the communicator's identity and knows whether it is COMM_WORLD (the only
communicator that compiled code reaches, through numba-mpi).  mpi4py is imported only when
a communicator is first asked for, so xforms runs without MPI installed.

    >>> c = MpiComm.world()        # doctest: +SKIP
    >>> c.size, c.rank, c.is_world
    (2, 0, True)
"""


def mpi4py_MPI():
    """The mpi4py.MPI module, or an ImportError saying how to install it."""
    try:
        from mpi4py import MPI
    except ImportError:
        raise ImportError("MPI support needs mpi4py and an MPI library: "
                          "pip install -e '.[mpi]' (mpich, mpi4py, numba-mpi)") from None
    return MPI


class MpiComm:
    """Wraps an mpi4py communicator; equal handles wrap the same communicator."""
    __slots__ = ("comm", "is_world", "_groups")
    _handles = {}

    def __new__(cls, comm):
        MPI = mpi4py_MPI()
        key = MPI._handleof(comm)
        h = cls._handles.get(key)
        if h is None or h.comm is not comm and h.comm != comm:
            h = object.__new__(cls)
            h.comm = comm
            h.is_world = comm == MPI.COMM_WORLD
            h._groups = {}
            cls._handles[key] = h
        return h

    @classmethod
    def world(cls):
        return cls(mpi4py_MPI().COMM_WORLD)

    @classmethod
    def of(cls, comm):
        """`comm` may be None (COMM_WORLD), an mpi4py communicator or an MpiComm."""
        if comm is None:
            return cls.world()
        return comm if isinstance(comm, MpiComm) else cls(comm)

    def split_groups(self, groups):
        """The communicator of this rank's group among `groups` (tuples of ranks that
        partition this communicator), its ranks numbered in the order listed: what
        `axis_index_groups` means.  Collective (MPI_Comm_split) the first time a grouping
        is asked for: every rank must ask for it at the same point, as every rank traces
        the same program under pmap; then cached.

        >>> world.split_groups(((0, 2), (3, 1))).size      # doctest: +SKIP
        2
        """
        sub = self._groups.get(groups)
        if sub is None:
            rank = self.rank
            color = next(i for i, g in enumerate(groups) if rank in g)
            sub = MpiComm(self.comm.Split(color, groups[color].index(rank)))
            self._groups[groups] = sub
        return sub

    @property
    def size(self):
        return self.comm.Get_size()

    @property
    def rank(self):
        return self.comm.Get_rank()

    def __repr__(self):
        return "COMM_WORLD" if self.is_world else f"MpiComm({self.comm!r})"
