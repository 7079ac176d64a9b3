"""docs/porting.md: the worked port is exactly its diff applied to the reference-style
kernel (test/python/porting/reference_style_gemm.py), leaves the aliasing code as it is,
and compiles for sm_90a; the page's table names every reference name tlx answers."""

from __future__ import annotations

import importlib.util
import re

import pytest
import tlx
import triton
from _helpers import REPOSITORY, SM90
from tlx.api import _reference
from triton.experimental.gluon import language as ttgl

PORTING = REPOSITORY / "docs" / "porting.md"
REFERENCE_STYLE = REPOSITORY / "test" / "python" / "porting" / "reference_style_gemm.py"
TILE_LAYOUT = ttgl.NVMMASharedLayout(128, 16, rank=2)
SIGNATURE = {
    "a_desc": f"tensordesc<fp16[128,64],{TILE_LAYOUT!r}>",
    "b_desc": f"tensordesc<fp16[64,128],{TILE_LAYOUT!r}>",
    "c_desc": f"tensordesc<fp16[128,128],{TILE_LAYOUT!r}>",
    "K": "i32",
}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "NUM_STAGES": 3}
ALIASING = re.compile(r"storage_alias_spec|local_alloc|reuse_group|set_buffer_overlap")
HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
pytestmark = pytest.mark.usefixtures("always_compile")


def documented_diff() -> list[str]:
    """The lines of the ```diff block of docs/porting.md."""
    (block,) = re.findall(r"```diff\n(.*?)```", PORTING.read_text(), re.DOTALL)
    return block.splitlines()


def apply_unified_diff(text: str, diff: list[str]) -> str:
    """``text`` with ``diff`` (unified, one file) applied; every context and removed line
    must be the source's."""
    source = text.splitlines()
    result: list[str] = []
    position = 0
    for number, line in enumerate(diff):
        hunk = HUNK.match(line)
        if not hunk:
            continue
        start = int(hunk.group(1)) - 1
        result.extend(source[position:start])
        position = start
        for body in diff[number + 1 :]:
            if body.startswith("@@"):
                break
            kind, content = body[:1], body[1:]
            if kind in (" ", "-"):
                assert source[position] == content, f"line {position + 1}: {source[position]!r}"
                position += 1
            if kind in (" ", "+"):
                result.append(content)
    result.extend(source[position:])
    return "\n".join(result) + "\n"


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """The port as docs/porting.md makes it, imported from its file (Triton reads a
    kernel's source there)."""
    path = tmp_path_factory.mktemp("port") / "ported_gemm.py"
    path.write_text(apply_unified_diff(REFERENCE_STYLE.read_text(), documented_diff()))
    spec = importlib.util.spec_from_file_location("ported_gemm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_port_leaves_the_aliasing_code_unchanged():
    changed = [line for line in documented_diff()[2:] if line[:1] in "+-"]
    assert changed, "the page shows no diff"
    assert [line for line in changed if ALIASING.search(line)] == []


def test_the_documented_port_compiles_for_sm90a(ported):
    source = tlx.ASTSource(fn=ported.gemm_kernel, signature=SIGNATURE, constexprs=CONSTEXPRS)
    compiled = triton.compile(source, target=SM90, options={"num_warps": 4})
    ttgir = compiled.asm["ttgir"]
    for op in ("ttg.warp_specialize", "ttng.warp_group_dot", "ttng.async_tma_copy_global_to_local"):
        assert op in ttgir, op
    assert compiled.asm["cubin"]
    (plan,) = tlx.kernel_plans(source, SM90, {"num_warps": 4})
    assert plan.plan.size_bytes == 3 * (16384 + 16384)  # C takes the ring's first bytes


def test_the_table_names_every_reference_name_tlx_answers():
    table = PORTING.read_text().split("## The names", 1)[1].split("## A worked port", 1)[0]
    named = set(re.findall(r"`(?:tlx\.)?(\w+)\(?", table))
    builtins = {
        name
        for name, value in vars(_reference).items()
        if getattr(value, "__triton_builtin__", False) and not name.startswith("_")
    }
    assert builtins <= named, builtins - named
    assert set(_reference.NOT_PORTED) <= named, set(_reference.NOT_PORTED) - named
