"""Every TLX error is a Triton compilation error at the user's source line
whose message names the buffer / spec, the numbers and where they were made."""

import inspect
import warnings

import pytest
import tlx
import triton
from _helpers import ROWS, SM90, SM100, compile_kernel, fill
from triton.compiler.errors import CompilationError
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia import blackwell

SMEM = ttgl.constexpr(tlx.storage_kind.smem)
TMEM = ttgl.constexpr(tlx.storage_kind.tmem)
CLUSTER = ttgl.constexpr(tlx.storage_kind.smemCluster)
DISTINCT = ttgl.constexpr(tlx.reuse_group_type.distinct)
NVMMA = ttgl.constexpr(ttgl.NVMMASharedLayout(128, 16, rank=2))
TMEM_LAYOUT = ttgl.constexpr(blackwell.TensorMemoryLayout(block=(128, 64), col_stride=1))
pytestmark = pytest.mark.usefixtures("always_compile")


def compile_error(kernel, signature=None, target=SM90, **constexprs) -> CompilationError:
    with pytest.raises(CompilationError) as caught:
        compile_kernel(kernel, signature, target, **constexprs)
    return caught.value


def line_of(kernel, text: str) -> int:
    """The line (1 = the def line, as in CompilationError) of ``kernel``'s
    source that contains ``text``; it must be unique."""
    lines = [n for n, line in enumerate(kernel.src.splitlines(), start=1) if text in line]
    assert len(lines) == 1, f"{text!r} is on lines {lines}"
    return lines[0]


def absolute_line(kernel, text: str) -> int:
    """The line number in this file of ``kernel``'s line containing ``text``."""
    lines, first = inspect.getsourcelines(kernel.fn)
    matches = [first + n for n, line in enumerate(lines) if text in line]
    assert len(matches) == 1, f"{text!r} is on lines {matches}"
    return matches[0]


def assert_error(error: CompilationError, kernel, line_text: str, *fragments: str):
    assert error.node.lineno == line_of(kernel, line_text), str(error)
    for fragment in fragments:
        assert fragment in error.error_message, error.error_message


# --- planner rules (docs/planner.md) ----------------------------------------


@tlx.jit
def explicit_size_too_small():
    spec = tlx.storage_alias_spec(buffer_size_bytes=16384)
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    fill(a.index(0))  # seals


def test_explicit_size_too_small_states_the_bytes_needed():
    error = compile_error(explicit_size_too_small)
    assert_error(
        error,
        explicit_size_too_small,
        "# seals",
        'storage_alias_spec "spec"',
        "test_tlx_errors.py:",
        "16384",
        "32768",
    )


@tlx.jit
def explicit_size_too_small_never_used():
    spec = tlx.storage_alias_spec(buffer_size_bytes=1024)  # the spec
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)  # noqa: F841


def test_unused_spec_is_still_checked_at_its_source_line():
    error = compile_error(explicit_size_too_small_never_used)
    assert_error(error, explicit_size_too_small_never_used, "# the spec", "1024", "16384")


@tlx.jit
def counts_that_look_like_sub_tiles():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    b = tlx.local_alloc((64, 32), ttgl.float16, 4, reuse=spec)  # the sub-tiles
    spec.set_buffer_overlap(tlx.reuse_group(a, b))


def test_counts_that_look_like_forgotten_sub_tiles_warn_at_the_buffer():
    with pytest.warns(tlx.TLXWarning) as caught:
        compile_kernel(counts_that_look_like_sub_tiles)
    (warning,) = caught
    assert warning.lineno == absolute_line(counts_that_look_like_sub_tiles, "# the sub-tiles")
    message = str(warning.message)
    for fragment in ('"a" (2 buffer groups)', '"b" (4 buffer groups)', "group_size=2"):
        assert fragment in message, message


@tlx.jit
def duplicate_element():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, a, group_type=DISTINCT))


def test_duplicate_tree_element():
    error = compile_error(duplicate_element)
    assert_error(error, duplicate_element, "set_buffer_overlap", 'buffer "a"', "more than once")


@tlx.jit
def too_many_columns():
    spec = tlx.storage_alias_spec(storage=TMEM)
    a = tlx.local_alloc((128, 256), ttgl.float32, 2, TMEM, reuse=spec)
    b = tlx.local_alloc((128, 64), ttgl.float32, 2, TMEM, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, b, group_type=DISTINCT))


def test_tmem_over_512_columns():
    error = compile_error(too_many_columns, target=SM100)
    assert_error(error, too_many_columns, "set_buffer_overlap", "512")


@tlx.jit
def tmem_spec_on_hopper():
    spec = tlx.storage_alias_spec(storage=TMEM)  # the spec
    a = tlx.local_alloc((128, 64), ttgl.float32, 2, TMEM, reuse=spec)  # noqa: F841


@tlx.jit
def tmem_alloc_on_hopper():
    acc = tlx.local_alloc((128, 64), ttgl.float32, 1, TMEM)  # the accumulator
    fill(acc.index(0))


@pytest.mark.parametrize(
    "kernel, line_text",
    [(tmem_spec_on_hopper, "# the spec"), (tmem_alloc_on_hopper, "# the accumulator")],
    ids=lambda value: getattr(value, "__name__", None),
)
def test_tmem_on_a_target_without_tensor_memory(kernel, line_text):
    error = compile_error(kernel, target=SM90)
    assert_error(
        error,
        kernel,
        line_text,
        "tensor memory (tmem) needs a Blackwell target (sm_100a or newer)",
        "compiled for sm_90a",
    )


@tlx.jit
def over_the_smem_limit():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((128, 128), ttgl.float32, 4, reuse=spec)
    fill(a.index(0))


def test_smem_over_the_target_limit():
    error = compile_error(over_the_smem_limit)
    assert_error(error, over_the_smem_limit, "fill(a.index(0))", "262144", "232448")


@tlx.jit
def legacy_reuse_that_does_not_fit():
    a = tlx.local_alloc((64, 64), ttgl.float16, 2)
    b = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=a)  # too big
    fill(b.index(0))


def test_legacy_reuse_of_an_allocated_region_must_fit():
    error = compile_error(legacy_reuse_that_does_not_fit)
    assert_error(
        error,
        legacy_reuse_that_does_not_fit,
        "# too big",
        'buffer "b"',
        'buffer "a"',
        "16384",
        "32768",
    )


# --- spec and tree rules -------------------------------------------------------


@tlx.jit
def overlap_twice():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a))  # first
    spec.set_buffer_overlap(tlx.reuse_group(a))  # second


def test_set_buffer_overlap_twice_points_at_the_second_and_names_the_first():
    error = compile_error(overlap_twice)
    first = absolute_line(overlap_twice, "# first")
    assert_error(error, overlap_twice, "# second", "twice", f"test_tlx_errors.py:{first}")


@tlx.jit
def overlap_after_use():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    fill(a.index(0))
    spec.set_buffer_overlap(tlx.reuse_group(a))


def test_set_buffer_overlap_after_a_buffer_was_used():
    error = compile_error(overlap_after_use)
    assert_error(
        error, overlap_after_use, "set_buffer_overlap", "already sealed", 'first use of buffer "a"'
    )


@tlx.jit
def element_of_another_spec():
    spec = tlx.storage_alias_spec()
    other = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    b = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=other)
    spec.set_buffer_overlap(tlx.reuse_group(a, b))


def test_tree_element_of_another_spec():
    error = compile_error(element_of_another_spec)
    assert_error(
        error,
        element_of_another_spec,
        "set_buffer_overlap",
        'buffer "b"',
        'storage_alias_spec "other"',
    )


@tlx.jit
def alloc_after_seal():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a))
    b = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)  # noqa: F841


def test_local_alloc_after_the_spec_is_sealed():
    error = compile_error(alloc_after_seal)
    assert_error(
        error,
        alloc_after_seal,
        "b = tlx.local_alloc",
        'local_alloc of "b"',
        "already sealed by set_buffer_overlap",
    )


@tlx.jit
def storage_mismatch():
    spec = tlx.storage_alias_spec(storage=SMEM)
    a = tlx.local_alloc((128, 64), ttgl.float32, 2, TMEM, reuse=spec)  # noqa: F841


def test_storage_mismatch():
    error = compile_error(storage_mismatch, target=SM100)
    assert_error(error, storage_mismatch, "a = tlx.local_alloc", "storage=tmem", "smem")


@tlx.jit
def cluster_spec():
    spec = tlx.storage_alias_spec(storage=CLUSTER)  # noqa: F841


@tlx.jit
def cluster_alloc():
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, CLUSTER)  # noqa: F841


@pytest.mark.parametrize("kernel", [cluster_spec, cluster_alloc], ids=["spec", "local_alloc"])
def test_smem_cluster_is_rejected(kernel):
    error = compile_error(kernel)
    assert "smemCluster" in error.error_message


@tlx.jit
def runtime_size(size):
    spec = tlx.storage_alias_spec(buffer_size_bytes=size)  # noqa: F841


def test_size_must_be_a_compile_time_constant():
    error = compile_error(runtime_size, {"size": "i32"})
    assert_error(error, runtime_size, "storage_alias_spec(", "compile-time constant")


@tlx.jit
def size_of(SIZE: ttgl.constexpr):
    spec = tlx.storage_alias_spec(buffer_size_bytes=SIZE)  # noqa: F841


@pytest.mark.parametrize("size", [0, -100])
def test_size_must_be_positive(size):
    error = compile_error(size_of, SIZE=size)
    assert_error(error, size_of, "storage_alias_spec(", f"must be positive, got {size}")


@tlx.jit
def empty_group():
    group = tlx.reuse_group()  # noqa: F841


def test_empty_reuse_group():
    error = compile_error(empty_group)
    assert_error(error, empty_group, "tlx.reuse_group()", "at least one element")


@tlx.jit
def zero_group_size():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    group = tlx.reuse_group(a, group_size=0)  # noqa: F841


def test_group_size_below_one():
    error = compile_error(zero_group_size)
    assert_error(error, zero_group_size, "group_size=0", "at least 1, got 0")


@tlx.jit
def no_users():
    spec = tlx.storage_alias_spec()  # unused  # noqa: F841


def test_spec_without_users_warns_at_its_line():
    with pytest.warns(tlx.TLXWarning, match='storage_alias_spec "spec"') as record:
        compile_kernel(no_users)
    warning = next(w for w in record if issubclass(w.category, tlx.TLXWarning))
    assert warning.filename == __file__
    assert warning.lineno == absolute_line(no_users, "# unused")


# --- sealing in the wrong block ------------------------------------------------


@tlx.jit
def sealed_in_loop(n):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    for i in range(n):
        fill(a.index(i % 2))


@tlx.jit
def sealed_in_branch(n):
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    if n > 0:
        fill(a.index(0))


@pytest.mark.parametrize("kernel", [sealed_in_loop, sealed_in_branch], ids=["loop", "branch"])
def test_sealing_outside_the_spec_block_has_a_hint(kernel):
    error = compile_error(kernel, {"n": "i32"})
    assert_error(
        error,
        kernel,
        "fill(a.index",
        'storage_alias_spec "spec"',
        "another block",
        "spec.set_buffer_overlap(...)",
        "before the loop",
    )


@tlx.jit
def alloc_in_loop(n):
    spec = tlx.storage_alias_spec()
    for _ in range(n):
        a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)  # noqa: F841


def test_buffers_of_a_spec_are_allocated_in_its_block():
    error = compile_error(alloc_in_loop, {"n": "i32"})
    assert_error(error, alloc_in_loop, "a = tlx.local_alloc", 'adding buffer "a"', "another block")


@tlx.jit
def unsealed_to_function():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    fill_first(a)


@gluon.jit
def fill_first(buffer):
    fill(buffer.index(0))


@tlx.jit
def unsealed_to_partition():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    ttgl.warp_specialize([(fill_first, (a,)), (fill_first, (a,))], [4], [80])


@pytest.mark.parametrize(
    "kernel, line",
    [(unsealed_to_function, "fill_first(a)"), (unsealed_to_partition, "warp_specialize")],
    ids=["function", "partition"],
)
def test_unsealed_buffer_cannot_leave_its_function(kernel, line):
    """The reason is the message of the error at the call itself, not only of an inner
    error chained to an empty one."""
    error = compile_error(kernel, target=SM100)
    assert_error(
        error,
        kernel,
        line,
        'buffer "a" (tlx.local_alloc at test_tlx_errors.py:',
        'of storage_alias_spec "spec"',
        "before its spec is sealed",
        "spec.set_buffer_overlap(...)",
    )


@tlx.jit
def alloc_elsewhere(spec):
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)  # noqa: F841


@tlx.jit
def alloc_in_another_function():
    spec = tlx.storage_alias_spec()
    alloc_elsewhere(spec)


def test_spec_grows_only_in_the_function_that_made_it():
    error = compile_error(alloc_in_another_function)
    assert error.node.lineno == line_of(alloc_in_another_function, "alloc_elsewhere(spec)")
    assert "another block" in str(error.__cause__)


# --- indices -------------------------------------------------------------------


@tlx.jit
def index_out_of_range():
    a = tlx.local_alloc((64, 64), ttgl.float32, 2)
    fill(a.index(2))


def test_constant_index_out_of_range():
    error = compile_error(index_out_of_range)
    assert_error(error, index_out_of_range, "a.index(2)", 'buffer "a" has 2 buffers', "index 2")


@tlx.jit
def index_of_i64(i):
    a = tlx.local_alloc((64, 64), ttgl.float32, 2)
    fill(tlx.local_view(a, i))


def test_runtime_index_must_be_int32():
    error = compile_error(index_of_i64, {"i": "i64"})
    assert_error(error, index_of_i64, "local_view", "int32", "int64")


# --- builtins outside a @tlx.jit kernel --------------------------------------


def test_builtin_called_from_python():
    with pytest.raises(tlx.TLXError, match="inside a @tlx.jit kernel"):
        tlx.storage_alias_spec()
    with pytest.raises(tlx.TLXError, match="inside a @tlx.jit kernel"):
        tlx.local_alloc((64, 64), ttgl.float32, 2)


@triton.jit
def triton_kernel():
    spec = tlx.storage_alias_spec()  # noqa: F841


def test_builtin_in_a_triton_kernel():
    source = triton.compiler.ASTSource(fn=triton_kernel, signature={}, constexprs={})
    with pytest.raises(CompilationError, match="@tlx.jit instead of @triton.jit"):
        triton.compile(source, target=SM90)


@gluon.jit
def gluon_kernel():
    a = tlx.local_alloc((64, 64), ttgl.float32, 2)  # noqa: F841


def test_builtin_in_a_plain_gluon_kernel():
    source = GluonASTSource(fn=gluon_kernel, signature={}, constexprs={})
    with pytest.raises(CompilationError, match="outside a @tlx.jit kernel"):
        triton.compile(source, target=SM90)


# --- argument types ------------------------------------------------------------


@tlx.jit
def bad_shape():
    a = tlx.local_alloc(64, ttgl.float32, 2)  # noqa: F841


@tlx.jit
def bad_dtype():
    a = tlx.local_alloc((64, 64), 4, 2)  # noqa: F841


@tlx.jit
def pointer_dtype():
    a = tlx.local_alloc((16, 16), ttgl.pointer_type(ttgl.float16), 2)  # noqa: F841


@tlx.jit
def addresses_as_int64(addresses_ptr, out_ptr):
    rows = ttgl.arange(0, 32, ttgl.SliceLayout(1, ROWS))
    columns = ttgl.arange(0, 32, ttgl.SliceLayout(0, ROWS))
    offsets = rows[:, None] * 32 + columns[None, :]
    a = tlx.local_alloc((32, 32), ttgl.int64, 1)
    a.index(0).store(ttgl.load(addresses_ptr + offsets))
    pointers = a.index(0).load(ROWS).to(ttgl.pointer_type(ttgl.float16))
    ttgl.store(out_ptr + offsets, ttgl.load(pointers))


def test_the_pointer_dtype_advice_compiles_on_this_triton():
    """The error's advice is code this Triton compiles (each supported Triton runs it)."""
    error = compile_error(pointer_dtype)
    assert "int64 and make pointers of the loaded values with" in error.error_message
    assert ".to(ttgl.pointer_type(ttgl.float16))" in error.error_message
    assert "int_to_ptr" not in error.error_message  # no Triton 3.6-3.9 has tl.int_to_ptr
    signature = {"addresses_ptr": "*i64", "out_ptr": "*fp16"}
    assert compile_kernel(addresses_as_int64, signature).asm["cubin"]


@tlx.jit
def bad_num():
    a = tlx.local_alloc((64, 64), ttgl.float32, 0)  # noqa: F841


@tlx.jit
def bad_storage():
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, 1)  # noqa: F841


@tlx.jit
def bad_reuse():
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=3)  # noqa: F841


@tlx.jit
def bad_layout():
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, layout=TMEM_LAYOUT)  # noqa: F841


@tlx.jit
def bad_layout_rank():
    a = tlx.local_alloc((64,), ttgl.float16, 2, layout=NVMMA)  # noqa: F841


@tlx.jit
def bad_tmem_rank():
    a = tlx.local_alloc((2, 128, 64), ttgl.float32, 2, TMEM)  # noqa: F841


@tlx.jit
def bad_group_element():
    group = tlx.reuse_group(1)  # noqa: F841


@tlx.jit
def bad_group_type():
    a = tlx.local_alloc((64, 64), ttgl.float32, 2)
    group = tlx.reuse_group(a, group_type=2)  # noqa: F841


@tlx.jit
def bad_overlap_argument():
    spec = tlx.storage_alias_spec()
    spec.set_buffer_overlap(3)


@tlx.jit
def bad_view_argument():
    x = tlx.local_view(3, 0)  # noqa: F841


@tlx.jit
def bad_storage_for_spec():
    spec = tlx.storage_alias_spec(storage=5)  # noqa: F841


@pytest.mark.parametrize(
    "kernel, fragment",
    [
        (bad_shape, "shape must be a tuple of ints"),
        (bad_dtype, "dtype must be a scalar Gluon dtype"),
        (pointer_dtype, "stock Triton cannot view shared memory as pointers"),
        (bad_num, "num must be positive, got 0"),
        (bad_storage, "storage must be a tlx.storage_kind"),
        (bad_reuse, "reuse must be None, a tlx.storage_alias_spec or a tlx.local_alloc buffer"),
        (bad_layout, "an smem buffer needs a shared layout"),
        (bad_layout_rank, "has rank 2 but one buffer has shape [64]"),
        (bad_tmem_rank, "a tmem buffer must be 2-D"),
        (bad_group_element, "tlx.reuse_group elements must be"),
        (bad_group_type, "group_type must be a tlx.reuse_group_type"),
        (bad_overlap_argument, "set_buffer_overlap expects a tlx.reuse_group"),
        (bad_view_argument, "tlx.local_view expects a tlx.local_alloc buffer"),
        (bad_storage_for_spec, "storage must be a tlx.storage_kind"),
    ],
    ids=lambda value: getattr(value, "__name__", None),
)
def test_wrong_argument_types(kernel, fragment):
    error = compile_error(kernel, target=SM100)
    assert fragment in error.error_message, error.error_message


@tlx.jit
def group_type_typo():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(a, group_type=tlx.reuse_group_type.share))


def test_an_enumeration_typo_lists_the_members():
    # Triton 3.6 meets the name first in the dependency scan of the kernel's cache key,
    # which raises the AttributeError itself; later releases a CompilationError at the line.
    with pytest.raises((CompilationError, AttributeError)) as caught:
        compile_kernel(group_type_typo)
    message = "tlx.reuse_group_type has no member 'share'; its members are shared, distinct"
    assert message in str(caught.value)
    if isinstance(caught.value, CompilationError):
        assert caught.value.node.lineno == line_of(group_type_typo, "reuse_group_type.share")
    with pytest.raises(AttributeError, match="its members are smem, tmem, smemCluster"):
        tlx.storage_kind.shmem  # noqa: B018
    assert not hasattr(tlx.storage_kind, "shmem")


CLI_KERNELS = """
import tlx
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl


@gluon.jit
def fill(buffer):
    tlx.local_view(buffer, 5)


@tlx.jit
def unsealed_to_helper():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float16, 2, reuse=spec)
    fill(a)


@tlx.jit
def error_inside_helper():
    a = tlx.local_alloc((64, 64), ttgl.float16, 2)
    fill(a)
"""


@pytest.mark.parametrize(
    ("kernel", "reason"),
    [
        ("unsealed_to_helper", 'buffer "a" (tlx.local_alloc at cli_kernels.py:15) of'),
        ("error_inside_helper", 'buffer "a" has 2 buffers: index 5 is out of range'),
    ],
)
@pytest.mark.parametrize("command", ["plan", "check"])
def test_the_cli_prints_the_reason_of_an_error_at_a_call(tmp_path, capsys, command, kernel, reason):
    """python -m tlx plan/check print the error at the call and, when Triton gave it no
    message (an error inside the called function), the errors it wraps."""
    from tlx.report.cli import main

    path = tmp_path / "cli_kernels.py"
    path.write_text(CLI_KERNELS)
    assert main([command, "--target", "sm_90a", f"{path}::{kernel}"]) == 1
    printed = capsys.readouterr().err
    assert "fill(a)" in printed and reason in printed, printed


@tlx.jit
def tree_over_two_specs():
    first = tlx.storage_alias_spec()
    second = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=first)
    b = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=second)
    tlx.reuse_group(a, b, group_type=DISTINCT)  # the tree
    fill(a.index(0))
    fill(b.index(0))


def test_a_tree_over_two_specs_warns_naming_its_buffers_and_specs():
    with pytest.warns(tlx.TLXWarning) as caught:
        compile_kernel(tree_over_two_specs)
    (warning,) = caught
    assert warning.lineno == absolute_line(tree_over_two_specs, "# the tree")
    message = str(warning.message)
    for fragment in (
        "is over buffers of 2 specs",
        'storage_alias_spec "first" (created at test_tlx_errors.py:',
        ': "a"; storage_alias_spec "second"',
        ': "b"), so it is no spec\'s overlap and places nothing',
    ):
        assert fragment in message, message


@tlx.jit
def tree_after_sealing_without_tree():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec)
    b = tlx.local_alloc((64, 64), ttgl.float16, 1, reuse=spec)
    fill(a.index(0))  # seals the spec without a tree: "no overlap tree", had it compiled
    tlx.reuse_group(a, b, group_type=DISTINCT)  # too late


def test_an_error_comes_without_the_warnings_of_the_trace():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        error = compile_error(tree_after_sealing_without_tree)
    assert_error(error, tree_after_sealing_without_tree, "# too late", "already sealed by")
    assert [str(w.message) for w in caught if issubclass(w.category, tlx.TLXWarning)] == []
