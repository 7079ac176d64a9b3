"""TLX_DUMP_ALIAS_IR=1 prints a kernel's specs as a TLX-dialect module; fed to
``triton-opt`` (the MLIR half, run as a subprocess so this process never
loads MLIR 22) it gives the plan the kernel used: the same backing
allocations, expanded view shapes and buffer offsets."""

import os
import re
import subprocess
from pathlib import Path

import pytest
import tlx
from _helpers import (
    ROWS,
    SM90,
    SM100,
    compile_kernel,
    constant_slots,
    fill,
    fill_tmem,
    find_triton_opt,
)
from triton.experimental.gluon import language as ttgl

DISTINCT = ttgl.constexpr(tlx.reuse_group_type.distinct)
TMEM = ttgl.constexpr(tlx.storage_kind.tmem)
pytestmark = pytest.mark.usefixtures("always_compile")


@pytest.fixture
def triton_opt():
    path = find_triton_opt()
    if path is None:
        pytest.skip("triton-opt is not built (build/bin/triton-opt) and not on PATH")
    return str(path)


def compile_with_dump(kernel, capfd, target, **constexprs):
    os.environ["TLX_DUMP_ALIAS_IR"] = "1"
    try:
        compiled = compile_kernel(kernel, target=target, **constexprs)
    finally:
        del os.environ["TLX_DUMP_ALIAS_IR"]
    dump = capfd.readouterr().err
    start = dump.index("// TLX storage alias specs")
    return compiled, dump[start : dump.index("\n}\n", start) + 3]


@tlx.jit
def two_smem_specs():
    spec = tlx.storage_alias_spec()
    a = tlx.local_alloc((32, 64), ttgl.float16, 2, reuse=spec)
    b = tlx.local_alloc((64,), ttgl.float32, 2, reuse=spec)
    c = tlx.local_alloc((64, 64), ttgl.float32, 2, reuse=spec)
    spec.set_buffer_overlap(tlx.reuse_group(tlx.reuse_group(a, b, group_type=DISTINCT), c))
    sized = tlx.storage_alias_spec(buffer_size_bytes=65536)
    d = tlx.local_alloc((64, 64), ttgl.bfloat16, 2, reuse=sized)
    e = tlx.local_alloc((32, 32), ttgl.int8, 2)
    for k in ttgl.static_range(2):
        fill(a.index(k))
        b.index(k).store(ttgl.full([64], 0, ttgl.float32, ttgl.SliceLayout(0, ROWS)))
        fill(c.index(k))
        fill(d.index(k))
        fill(e.index(k))


@tlx.jit
def flash_attention_tmem(SLICES: ttgl.constexpr):
    spec = tlx.storage_alias_spec(storage=TMEM)
    qk = tlx.local_alloc((128, 128), ttgl.float32, 2, TMEM, reuse=spec)
    p = tlx.local_alloc((128, 128 // SLICES), ttgl.float16, 2 * SLICES, TMEM, reuse=spec)
    alpha = tlx.local_alloc((128, 1), ttgl.float32, 2, TMEM, reuse=spec)
    spec.set_buffer_overlap(
        tlx.reuse_group(
            qk,
            tlx.reuse_group(tlx.reuse_group(p, group_size=SLICES), alpha, group_type=DISTINCT),
        )
    )
    for k in ttgl.static_range(2):
        fill_tmem(qk.index(k))
        fill_tmem(alpha.index(k))
    for k in ttgl.static_range(2 * SLICES):
        fill_tmem(p.index(k))


def test_dump_is_the_tlx_module_of_the_kernel(capfd):
    _, dump = compile_with_dump(two_smem_specs, capfd, SM90)
    assert 'ttg.target = "cuda:90"' in dump
    assert "tt.func @two_smem_specs() {" in dump
    assert "%spec = tlx.storage_alias_spec storage = smem : !tlx.storage_alias_spec<smem>" in dump
    assert (
        "%sized = tlx.storage_alias_spec storage = smem, size = 65536 : "
        "!tlx.storage_alias_spec<smem, 65536>" in dump
    )
    assert re.search(
        r"%a = tlx\.storage_alias_local_alloc %spec : !tlx\.storage_alias_spec<smem> -> "
        r"!ttg\.memdesc<2x32x64xf16, #ttg\.nvmma_shared<\{swizzlingByteWidth = 128, "
        r"transposed = false, elementBitWidth = 16\}>, #ttg\.shared_memory, mutable>",
        dump,
    )
    assert re.search(r"%group = tlx\.reuse_group\(%a, %b\) group_kind = distinct : \(", dump)
    assert re.search(r"%group_1 = tlx\.reuse_group\(%group, %c\) group_kind = shared : \(", dump)
    assert (
        "tlx.set_buffer_overlap(%spec, %group_1) : (!tlx.storage_alias_spec<smem>, "
        "!tlx.reuse_group<shared>) -> ()" in dump
    )
    # A local_alloc without reuse is a spec of its own.
    assert "%e_region = tlx.storage_alias_spec storage = smem" in dump
    assert "%e = tlx.storage_alias_local_alloc %e_region" in dump


def test_dump_prints_group_size(capfd):
    _, dump = compile_with_dump(flash_attention_tmem, capfd, SM100, SLICES=4)
    assert "!tlx.storage_alias_spec<tmem>" in dump
    assert re.search(r"tlx\.reuse_group\(%p\) group_kind = shared, group_size = 4 : \(", dump)
    assert "#ttng.tensor_memory_encoding<blockM = 128, blockN = 32, colStride = 1>" in dump


def test_no_dump_without_the_variable(capfd):
    compile_kernel(two_smem_specs)
    assert "tlx.storage_alias_spec" not in capfd.readouterr().err


def run_triton_opt(triton_opt, dump: str, tmp_path: Path, *passes: str) -> str:
    module = tmp_path / "dump.mlir"
    module.write_text(dump)
    result = subprocess.run(
        [triton_opt, str(module), *passes], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def memdesc_shape(text: str) -> str:
    """``4x64x64xf16`` of ``!ttg.memdesc<4x64x64xf16, ...>``."""
    return re.match(r"!ttg\.memdesc<([^,]+),", text).group(1)


def backings(ir: str):
    """(type text up to the encoding, alignment) of each SMEM or TMEM backing
    allocation, sorted."""
    found = re.findall(
        r"(?:ttg\.local_alloc \{alignment = (\d+) : i32\}|ttng\.tmem_alloc) : \(\) -> "
        r"!ttg\.memdesc<([^,]+),",
        ir,
    )
    return sorted((shape, int(alignment or 0)) for alignment, shape in found)


def kernel_plan(ttgir: str):
    """Backings and views (name -> expanded shape) of the compiled kernel."""
    views = dict(
        re.findall(
            r"%(\w+) = ttg\.memdesc_reinterpret %\w+ : [^>]*> -> !ttg\.memdesc<([^,]+),", ttgir
        )
    )
    return backings(ttgir), views


def lowered_plan(lowered: str):
    views = re.findall(r"tlx\.local_alias %\S+ : .* -> !ttg\.memdesc<([^,]+),", lowered)
    return backings(lowered), views


def placements(offsets_module: str):
    """The #tlx.placement of each user, in order: (slots, period, scale, offset, step)."""
    found = re.findall(
        r"tlx\.storage_alias_local_alloc %\S+ \{placement = #tlx\.placement<slots = (\d+), "
        r"period = (\d+), scale = (\d+), offset = (\d+), step = (\d+)>\}",
        offsets_module,
    )
    return [tuple(int(x) for x in placement) for placement in found]


@pytest.mark.parametrize(
    "kernel, target, constexprs, users",
    [
        # users in the dump's order: (view name, buffer size in bytes/columns,
        # group size); a view of another user's type is CSE'd into that one.
        (
            two_smem_specs,
            SM90,
            {},
            [("a", 4096, 1), ("b", 256, 1), ("c", 16384, 1), ("d", 8192, 1), ("e", 1024, 1)],
        ),
        (
            flash_attention_tmem,
            SM100,
            {"SLICES": 4},
            [("qk", 128, 1), ("p", 16, 4), ("alpha", 1, 1)],
        ),
    ],
    ids=["smem", "tmem"],
)
def test_triton_opt_reproduces_the_kernel_plan(
    triton_opt, tmp_path, capfd, kernel, target, constexprs, users
):
    compiled, dump = compile_with_dump(kernel, capfd, target, **constexprs)
    ttgir = compiled.asm["ttgir"]
    kernel_backings, kernel_views = kernel_plan(ttgir)

    lowered = run_triton_opt(triton_opt, dump, tmp_path, "--tlx-storage-alias-lowering")
    lowered_backings, lowered_views = lowered_plan(lowered)
    assert lowered_backings == kernel_backings
    assert lowered_views == [kernel_views[name] for name, _, _ in users]

    offsets = placements(
        run_triton_opt(
            triton_opt,
            dump,
            tmp_path,
            "--tlx-storage-alias-size-definition",
            "--tlx-buffer-offset-calculation",
        )
    )
    assert len(offsets) == len(users)
    for (name, _, group_size), (slots, period, scale, offset, step) in zip(
        users, offsets, strict=True
    ):
        # The kernel indexes every buffer with constants 0, 1, ...: each lands
        # on the slot the placement gives, in a view of as many slots.
        kernel_slots = constant_slots(ttgir, name)
        expected = [scale * (i // period) + offset + step * (i % period) for i in range(8)]
        assert kernel_slots == expected[: len(kernel_slots)], name
        assert kernel_views[name].startswith(f"{slots}x"), name
        assert period % group_size == 0, name
