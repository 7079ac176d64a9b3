"""Unit tests of the planner's Python layer (tlx.planner): input checks and
normalisation, importing it alone, target queries, the value types against the
binding (tlx._planner) and the lifetime check of phases."""

import dataclasses
import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from _planner_helpers import (
    SMEM,
    TMEM,
    nvmma,
    only_error,
)
from tlx import _planner as _native
from tlx import planner
from tlx.planner import (
    Buffer,
    Diagnostic,
    ElementKind,
    Group,
    Layout,
    LayoutKind,
    Spec,
    Storage,
    buffer_size,
    cta_split_of_cga_bases,
    describe,
    distinct,
    has_buffer_dimension,
    has_tensor_memory,
    plan,
    smem_limit_for_target,
    storage_unavailable,
    stored_element_bits,
    target_name,
    view_of,
)

# --- Python layer --------------------------------------------------------------------------------


def test_group_kind_must_be_shared_or_distinct():
    with pytest.raises(ValueError, match='reuse group kind must be "shared" or "distinct"'):
        Group("overlapping", (0, 1))


@pytest.mark.parametrize("child", ["a", 1.0, True])
def test_group_children_must_be_indices_or_groups(child):
    with pytest.raises(TypeError, match="reuse group children must be buffer indices"):
        Group("shared", (0, child))


def test_inputs_are_normalised():
    buffer = Buffer("a", [2, 64], 16, "smem")
    assert buffer.shape == (2, 64) and buffer.storage is SMEM
    assert Spec("t", "tmem").storage is TMEM
    assert Group("shared", [0, 1]).children == (0, 1)
    assert hash(buffer) == hash(Buffer("a", (2, 64), 16))


PACKAGE_DIR = Path(__file__).resolve().parents[2] / "language" / "tlx"


def run_isolated_planner(package, code):
    """Runs `code` in a fresh interpreter that finds only `package` (a copy of
    parts of language/tlx) as `tlx`, whatever else is installed."""
    (package / "__init__.py").write_text("")
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(package.parent)},
        cwd=package.parent,
    )


# The planner's Python face: its dataclasses and functions, and the rules per release and
# target it exports.
PLANNER_SOURCES = ("planner.py", "_rules.py")


def test_missing_extension_raises_import_error_with_build_hint(tmp_path):
    package = tmp_path / "tlx"
    package.mkdir()
    for source in PLANNER_SOURCES:
        shutil.copy(PACKAGE_DIR / source, package)
    completed = run_isolated_planner(package, "import tlx.planner")
    assert completed.returncode != 0
    assert "ImportError: the planner extension tlx._planner is not built" in completed.stderr
    assert "pip install --no-build-isolation -e ." in completed.stderr
    assert "-DTLX_BUILD_MLIR=OFF" in completed.stderr


def test_planner_imports_without_triton(tmp_path):
    package = tmp_path / "tlx"
    package.mkdir()
    for source in PLANNER_SOURCES:
        shutil.copy(PACKAGE_DIR / source, package)
    for extension in PACKAGE_DIR.glob("_planner*"):
        shutil.copy(extension, package)
    code = "import sys, tlx.planner; assert 'triton' not in sys.modules, 'triton imported'"
    completed = run_isolated_planner(package, code)
    assert completed.returncode == 0, completed.stderr


def test_tmem_exists_on_blackwell_only():
    assert [has_tensor_memory(cc) for cc in (0, 80, 90, 100, 103, 110, 120)] == [
        True,
        False,
        False,
        True,
        True,
        True,
        False,
    ]
    assert [target_name(cc) for cc in (0, 90, 100)] == ["an unknown target", "sm_90a", "sm_100a"]
    t = Buffer("t", (2, 128, 64), 32, TMEM, Layout(LayoutKind.TENSOR_MEMORY, block_n=64))
    assert plan(Spec("t", TMEM, capability=100), [t]).ok
    assert [d.message for d in plan(Spec("t", TMEM, capability=90), [t]).errors] == [
        'spec "t": tensor memory (tmem) needs a Blackwell target (sm_100a or newer), but the '
        "kernel is compiled for sm_90a"
    ]
    assert storage_unavailable(Storage.SMEM, 90) == ""


def test_stored_element_bits():
    assert stored_element_bits(ElementKind.POINTER, 0) == 64
    assert stored_element_bits(ElementKind.INTEGER, 1) == 8
    assert stored_element_bits(ElementKind.FLOAT, 8) == 8
    assert stored_element_bits(ElementKind.FLOAT, 4) == 4
    assert stored_element_bits(ElementKind.INTEGER, 16) == 16
    fp4 = Buffer("fp4", (2, 16, 16), stored_element_bits(ElementKind.FLOAT, 4))
    assert buffer_size(fp4) == 128


def test_a_tmem_tile_without_buffer_dimension_is_one_buffer():
    acc = Buffer("acc", (128, 128), 32, TMEM, Layout(LayoutKind.TENSOR_MEMORY, block_n=128))
    assert not has_buffer_dimension(acc)
    assert has_buffer_dimension(Buffer("a", (128, 128), 32))
    p = Buffer("p", (1, 128, 64), 16, TMEM, Layout(LayoutKind.TENSOR_MEMORY, block_n=64))
    result = plan(Spec("t", TMEM), [acc, p], distinct(0, 1))
    assert result.ok, result.diagnostics
    assert buffer_size(acc) == 128
    assert [view.offset for view in result.views] == [0, 128]
    assert result.region_size == 256 and result.views[0].slots == 2


def test_smem_limit_is_the_targets():
    assert [smem_limit_for_target(cc) for cc in (80, 86, 90, 100, 120)] == [
        166912,
        101376,
        232448,
        232448,
        101376,
    ]
    big = Buffer("big", (3, 128, 128), 32)  # 196608 bytes
    assert plan(Spec("s"), [big]).ok
    sm80 = plan(Spec("s", capability=80), [big])
    assert Spec("s", capability=80).smem_limit_bytes == 166912
    assert [d.message for d in sm80.errors] == [
        'spec "s" needs 196608 bytes of shared memory, more than the target\'s limit of '
        "166912 bytes"
    ]


def test_a_tile_split_over_ctas_is_sized_per_cta():
    assert cta_split_of_cga_bases([[1, 0]]) == (2, 1)
    assert cta_split_of_cga_bases([[0, 1], [0, 2]]) == (1, 4)
    assert cta_split_of_cga_bases([[0, 0]]) == (1, 1)
    pair = Layout(LayoutKind.TENSOR_MEMORY, block_n=128, cta_split_m=2)
    acc = Buffer("acc", (256, 128), 32, TMEM, pair)
    assert buffer_size(acc) == 128
    assert buffer_size(dataclasses.replace(acc, layout=Layout(LayoutKind.TENSOR_MEMORY))) == 256
    result = plan(Spec("t", TMEM), [acc])
    assert result.ok and result.region_size == 128
    assert result.backing_block == (128, 128) and result.backing_shape == (256, 128)


def test_buffers_of_one_spec_split_alike():
    pair = Layout(LayoutKind.TENSOR_MEMORY, block_n=128, cta_split_m=2)
    acc = Buffer("acc", (256, 128), 32, TMEM, pair)
    lone = Buffer("lone", (1, 128, 64), 32, TMEM, Layout(LayoutKind.TENSOR_MEMORY, block_n=64))
    error = only_error(plan(Spec("t", TMEM), [acc, lone]))
    assert error.buffer == 1
    assert error.message == (
        'buffer "lone" is split over 1 x 1 CTAs but buffer "acc" over 2 x 1; the buffers of '
        'spec "t" share one allocation and must be split alike'
    )
    odd = Buffer("odd", (1, 98, 64), 32, TMEM, dataclasses.replace(pair, cta_split_m=4))
    assert "does not divide" in only_error(plan(Spec("t", TMEM), [odd])).message
    split_smem = Buffer("a", (2, 256, 64), 16, SMEM, Layout(cta_split_m=2))
    assert "shared memory split over the CTAs" in only_error(plan(Spec("s"), [split_smem])).message


# Every struct the extension binds (its enumerations have ``__members__``).
NATIVE_STRUCTS = [
    name
    for name, value in vars(_native).items()
    if isinstance(value, type) and not hasattr(value, "__members__")
]


def _bound_fields(native) -> list[str]:
    return [name for name, value in vars(native).items() if isinstance(value, property)]


# Optional native fields whose value is no int: a default-constructed struct holds None,
# which does not say the type.
OPTIONAL_STRUCT_FIELDS = {
    ("IndexProgram", "row"): planner.IndexOperand | None,
    ("IndexProgram", "group"): planner.IndexOperand | None,
}


def _declared_type(like):
    """The annotation a dataclass field declares for a native field whose
    default-constructed value is ``like`` (its origin for a generic: ``tuple``)."""
    if type(like) in planner._PYTHON_ENUMS:
        return planner._PYTHON_ENUMS[type(like)]
    if type(like) in planner._NATIVE_ENUMS:
        return str
    if like is None:
        return int | None
    if isinstance(like, list):
        return tuple
    return planner._PYTHON_TYPES.get(type(like), type(like))


def test_every_bound_struct_has_its_dataclass():
    assert NATIVE_STRUCTS
    for name in NATIVE_STRUCTS:
        assert planner._PYTHON_TYPES[getattr(_native, name)] is getattr(planner, name)


@pytest.mark.parametrize("name", NATIVE_STRUCTS)
def test_each_dataclass_declares_the_fields_its_struct_binds(name):
    """The fields written in planner.py are the binding's (python/PlannerExtension.cpp):
    the same names in the same order, of the types and with the defaults of the
    native struct, so that the source cannot drift from the C++ side."""
    native, python = getattr(_native, name), getattr(planner, name)
    bound = _bound_fields(native)
    fields = dataclasses.fields(python)
    names = [field.name for field in fields]
    # Group keeps the positional order Group(kind, children, group_size); Diagnostic
    # adds the planner's raw text.
    expected = ["kind", "children", "group_size"] if python is Group else bound
    assert sorted(expected) == sorted(bound)
    assert names == expected + (["template"] if python is Diagnostic else [])
    hints = typing.get_type_hints(python)
    like = native()
    for field in fields[: len(bound)]:
        value = getattr(like, field.name)
        hint = hints[field.name]
        declared = tuple if typing.get_origin(hint) is tuple else hint
        optional = OPTIONAL_STRUCT_FIELDS.get((name, field.name))
        assert declared == (optional or _declared_type(value)), field.name
        if field.default is not dataclasses.MISSING:
            assert field.default == planner._from_native(value), field.name


def test_value_types_are_frozen_hashable_and_round_trip_through_the_planner():
    spec = Spec("ring", capability=90)
    buffers = [Buffer("a", (4, 128, 64), 16, layout=nvmma(128)), Buffer("b", (4, 64, 256), 16)]
    result = plan(spec, buffers, distinct(0, 1))
    assert result == plan(spec, buffers, distinct(0, 1))
    assert hash(result) == hash(plan(spec, buffers, distinct(0, 1)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.size_bytes = 0
    # Defaults come from the native structs; strings and lists become enums and tuples.
    assert Buffer("x", [2, 8], 8, "smem") == Buffer("x", (2, 8), 8, Storage.SMEM, Layout())
    assert Spec("s").whole_views is True and Spec("s").explicit_size_bytes is None
    assert result.backing_kind == "shared_bytes"
    assert describe(result, buffers) == _native.describe(
        planner._to_native(result), planner._to_native(tuple(buffers)), ""
    )
    view = result.views[1]
    assert view_of(buffers[1], view.placement) == view


def test_the_lifetime_check_of_phases_holds_within_each_sequence_of_control():
    # x (phase 0) and w2 (phase 1) share bytes.
    x, w2 = Buffer("x", (2, 64, 64), 16), Buffer("w2", (2, 64, 64), 16)
    phased = plan(Spec("s"), [x, w2], [distinct(0), distinct(1)])
    assert phased.ok
    assert planner.phase_overlaps(phased, [x, w2]) == (planner.PhaseOverlap(0, 1),)

    def check(x_uses, w2_uses):
        uses = [[planner.PhaseUse(s, p) for s, p in found] for found in (x_uses, w2_uses)]
        return planner.check_phase_lifetimes(phased, [x, w2], uses, "s")

    # Two partitions (sequences 1 and 2) each use x then w2; their positions
    # interleave, but across sequences there is no order to check.
    assert check([(1, 1), (2, 3)], [(1, 2), (2, 4)]) == ()
    # Within sequence 2, w2 (position 5) falls between two uses of x.
    (problem,) = check([(1, 1), (2, 3), (2, 6)], [(1, 2), (2, 5)])
    assert problem.kind == "phase_lifetime_overlap"
    assert problem.buffers == (1, 0)
    assert problem.numbers == (5, 3, 6, 1, 0)
    assert problem.message.startswith(
        'buffer "w2" (phase 1) is used between two uses of buffer "x" (phase 0) of spec "s"'
    )
    # A buffer used in one sequence only never meets the other there.
    assert check([(0, 1), (0, 3)], [(1, 2)]) == ()
