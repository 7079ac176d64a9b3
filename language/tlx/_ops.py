"""``tlx.local_alloc`` and ``tlx.local_view``."""

from __future__ import annotations

from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language._layouts import SharedLayout
from triton.experimental.gluon.language.nvidia import blackwell
from triton.language.core import _unwrap_if_constexpr, base_value

from ._builtin import tlx_builtin
from ._errors import TLXError, location_of_call
from ._kinds import storage_kind
from ._lowering import AllocationState, descriptor_type, join_sealed, seal
from ._trace import assigned_name, new_spec_state
from ._types import buffered_tensor, expect_storage, storage_alias_spec
from .compat import in_loop_carry_discovery

# Element widths an NVMMA shared layout (wgmma / tcgen05 operands, TMA) takes.
_NVMMA_ELEMENT_BITS = (8, 16, 32)
# A tile is MMA-shaped when its rows are a multiple of the core matrix height
# and a row is at least one 16-byte core matrix row.
_MMA_ROW_MULTIPLE = 8
_MMA_MIN_ROW_BYTES = 16
# Rows of a tensor memory block: one block covers at most 128 lanes.
_TMEM_MAX_BLOCK_M = 128


def default_layout(shape, dtype, storage: storage_kind):
    """The layout ``local_alloc`` uses when none is given.

    SMEM: Gluon's default NVMMA shared layout (largest swizzle the row allows)
    for MMA-shaped 2-D tiles (rows a multiple of 8, a row at least 16 bytes,
    8/16/32-bit elements); anything else gets an unswizzled row-major layout.
    TMEM: a packed tensor memory layout whose block is the tile (at most 128
    rows).
    """
    bits = 0 if dtype.is_ptr() else dtype.primitive_bitwidth
    if storage is storage_kind.tmem:
        return blackwell.TensorMemoryLayout(
            block=(min(shape[0], _TMEM_MAX_BLOCK_M), shape[1]), col_stride=1
        )
    if (
        len(shape) == 2
        and bits in _NVMMA_ELEMENT_BITS
        and shape[0] % _MMA_ROW_MULTIPLE == 0
        and shape[1] * bits >= _MMA_MIN_ROW_BYTES * 8
    ):
        return ttgl.NVMMASharedLayout.get_default_for(list(shape), dtype)
    return ttgl.SwizzledSharedLayout(1, 1, 1, list(reversed(range(len(shape)))))


def _positive_int(value, what: str) -> int:
    value = _unwrap_if_constexpr(value)
    if isinstance(value, base_value):
        raise TLXError(f"{what} must be a compile-time constant, got a runtime value")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise TLXError(f"{what} must be positive, got {value}")
    return value


def _buffer_shape(shape) -> tuple[int, ...]:
    shape = _unwrap_if_constexpr(shape)
    if not isinstance(shape, (tuple, list, ttgl.tuple)):
        raise TypeError(f"shape must be a tuple of ints, got {type(shape).__name__} {shape!r}")
    dims = tuple(_positive_int(dim, "every dimension of shape") for dim in shape)
    if not dims:
        raise TLXError("shape must have at least one dimension")
    return dims


def _check_layout(layout, shape, storage: storage_kind):
    if storage is storage_kind.tmem:
        if not isinstance(layout, blackwell.TensorMemoryLayout):
            raise TypeError(
                f"a tmem buffer needs a TensorMemoryLayout, got {type(layout).__name__} {layout!r}"
            )
        return
    if not isinstance(layout, SharedLayout):
        raise TypeError(
            f"an smem buffer needs a shared layout, got {type(layout).__name__} {layout!r}"
        )
    rank = getattr(layout, "rank", None)
    if isinstance(layout, ttgl.SwizzledSharedLayout):
        rank = len(layout.order)
    if rank is not None and rank != len(shape):
        raise TLXError(
            f"layout {layout} has rank {rank} but one buffer has shape {list(shape)} (rank "
            f"{len(shape)}): give the layout of one buffer, without the num dimension"
        )


@tlx_builtin
def local_alloc(
    shape,
    dtype,
    num,
    storage=storage_kind.smem,
    reuse=None,
    layout=None,
    _semantic=None,
    _generator=None,
) -> buffered_tensor:
    """Allocates ``num`` buffers of ``shape`` x ``dtype`` in ``storage`` (smem
    or tmem) and returns them as a ``buffered_tensor``; index it with
    ``buf.index(i)`` or ``tlx.local_view(buf, i)``.

    ``reuse``: None (the buffers get their own region), a
    ``storage_alias_spec`` (the buffers are one user of the spec's region; the
    spec's storage must match), or a ``buffered_tensor`` (legacy: the new
    buffers alias the region of that buffer at offset 0; they must fit when
    that region is already allocated). ``layout``: the layout of one buffer
    (``shape`` without ``num``); by default see ``default_layout``.
    """
    builder = _semantic.builder
    location = location_of_call(_generator)
    shape = _buffer_shape(shape)
    dtype = _unwrap_if_constexpr(dtype)
    if not isinstance(dtype, ttgl.dtype) or dtype.is_block() or dtype == ttgl.void:
        raise TypeError(f"dtype must be a scalar Gluon dtype, got {type(dtype).__name__} {dtype!r}")
    if dtype.is_ptr():
        raise TLXError(
            f"local_alloc of {dtype}: stock Triton cannot view shared memory as pointers "
            "(Triton 3.6 to 3.8 do not lower pointer buffers, 3.8 and 3.9 fail on a "
            "memdesc_reinterpret to them); keep the addresses as int64 and convert them "
            "with tl.int_to_ptr after loading"
        )
    num = _positive_int(num, "num")
    storage = expect_storage(storage, "storage")
    if storage is storage_kind.smemCluster:
        raise TLXError("local_alloc does not support smemCluster storage: use smem or tmem")
    if storage is storage_kind.tmem and len(shape) != 2:
        raise TLXError(f"a tmem buffer must be 2-D [rows, columns], got shape {list(shape)}")
    layout = _unwrap_if_constexpr(layout)
    if layout is None:
        layout = default_layout(shape, dtype, storage)
    _check_layout(layout, shape, storage)
    reuse = _unwrap_if_constexpr(reuse)

    name = assigned_name(_generator, "buffer")
    full_shape = (num, *shape)
    type_text = str(descriptor_type(dtype, full_shape, layout, storage).to_ir(builder))
    arguments = (name, location, dtype, full_shape, layout, storage, type_text)

    if reuse is None:
        spec = new_spec_state(_semantic, _generator, f"{name}_region", storage, None, private=True)
        allocation = spec.add_user(*arguments)
        seal(spec, builder, f"tlx.local_alloc at {location}")
        return buffered_tensor._of_allocation(allocation)

    if isinstance(reuse, storage_alias_spec):
        spec = reuse.type.state
    elif isinstance(reuse, buffered_tensor):
        spec = reuse.type.allocation.spec
    else:
        raise TypeError(
            "reuse must be None, a tlx.storage_alias_spec or a tlx.local_alloc buffer, got "
            f"{type(reuse).__name__}"
        )
    if spec.storage is not storage:
        raise TLXError(
            f'local_alloc of "{name}" with storage={storage.value} cannot reuse '
            f"{spec.describe()}, whose storage is {spec.storage.value}"
        )
    if spec.sealed:
        if isinstance(reuse, storage_alias_spec):
            raise TLXError(
                f'local_alloc of "{name}" reuses {spec.describe()}, which is already sealed by '
                f"{spec.sealed_by}: allocate every buffer of a spec before set_buffer_overlap "
                "and before the first use of any of its buffers"
            )
        allocation = AllocationState(spec, *arguments)
        join_sealed(spec, allocation, builder)
        if not in_loop_carry_discovery(_generator):
            spec.followers.append(allocation)
        return buffered_tensor._of_allocation(allocation)
    spec.check_block(
        builder,
        f'adding buffer "{name}" to it',
        "allocate every buffer of a spec in the block that created the spec",
    )
    return buffered_tensor._of_allocation(spec.add_user(*arguments))


@tlx_builtin
def local_view(buf, index, _semantic=None, _generator=None):
    """Buffer ``index`` (an int or an int32 scalar) of ``buf`` as Gluon's
    ``shared_memory_descriptor`` / ``tensor_memory_descriptor``; the same as
    ``buf.index(index)``."""
    if not isinstance(buf, buffered_tensor):
        raise TypeError(
            f"tlx.local_view expects a tlx.local_alloc buffer, got {type(buf).__name__}"
        )
    return buf.index(index, _semantic=_semantic, _generator=_generator)
