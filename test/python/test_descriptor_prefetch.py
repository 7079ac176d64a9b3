"""The prefetch of a ``@tlx.jit`` kernel's TMA descriptors at its entry
(tlx/_descriptor_prefetch.py): which kernels get it, what the PTX says, that
ptxas takes it for sm_90a and sm_100a, and the hook it shares with others."""

from __future__ import annotations

import re

import pytest
import tlx
import torch
import triton
from _helpers import SM90, SM100
from tlx import _descriptor_prefetch
from tlx.compat import tma_load
from triton import knobs
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime import driver

pytestmark = pytest.mark.usefixtures("always_compile")

TILE = 64
TILE_LAYOUT = gl.constexpr(gl.NVMMASharedLayout(128, 16, rank=2))
ROWS = gl.constexpr(gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]))
SIGNATURE = {
    "source": f"tensordesc<fp16[{TILE},{TILE}],{TILE_LAYOUT.value!r}>",
    "destination": f"tensordesc<fp16[{TILE},{TILE}],{TILE_LAYOUT.value!r}>",
    "out_ptr": "*fp16",
    "TILE": "constexpr",
}
PREFETCH = re.compile(r"prefetch\.tensormap \[(%tlx_descriptor\d+)\];")


@gluon.jit
def _copy_tile(source, destination, out_ptr, TILE: gl.constexpr):
    tile = gl.allocate_shared_memory(gl.float16, [TILE, TILE], TILE_LAYOUT)
    ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(ready, count=1)
    fence_async_shared()
    mbarrier.expect(ready, source.block_type.nbytes)
    tma_load(source, [0, 0], ready, tile)
    mbarrier.wait(ready, 0)
    rows = gl.arange(0, TILE, gl.SliceLayout(1, ROWS))
    columns = gl.arange(0, TILE, gl.SliceLayout(0, ROWS))
    gl.store(out_ptr + rows[:, None] * TILE + columns[None, :], tile.load(ROWS))
    mbarrier.invalidate(ready)


@tlx.jit
def tlx_copy(source, destination, out_ptr, TILE: gl.constexpr):
    _copy_tile(source, destination, out_ptr, TILE)


@gluon.jit
def gluon_copy(source, destination, out_ptr, TILE: gl.constexpr):
    _copy_tile(source, destination, out_ptr, TILE)


def _compile(kernel, target):
    source_class = tlx.ASTSource if kernel is tlx_copy else GluonASTSource
    source = source_class(fn=kernel, signature=SIGNATURE, constexprs={"TILE": TILE})
    return triton.compile(source, target=target)


@pytest.mark.parametrize("target", [SM90, SM100], ids=["sm90a", "sm100a"])
def test_a_tlx_kernel_prefetches_each_descriptor_parameter_at_entry(target):
    compiled = _compile(tlx_copy, target)
    ptx = compiled.asm["ptx"]
    entry = ptx.index("// %bb.0:")
    prefetches = [match.start() for match in PREFETCH.finditer(ptx)]
    assert len(prefetches) == 2  # source and destination, used or not
    assert all(entry < at < ptx.index("mbarrier.init", entry) for at in prefetches)
    for parameter in ("tlx_copy_param_0", "tlx_copy_param_5"):
        assert re.search(rf"mov\.b64 %tlx_descriptor\d+, {parameter};", ptx)
    assert compiled.asm["cubin"]  # ptxas took it


def test_a_gluon_kernel_of_the_same_process_is_left_as_it_is():
    _compile(tlx_copy, SM90)
    assert isinstance(knobs.runtime.add_stages_inspection_hook, _descriptor_prefetch._StagesHook)
    assert "prefetch.tensormap" not in _compile(gluon_copy, SM90).asm["ptx"]


class CompileOnlyDriver:
    """What Triton's JIT asks of the driver before it compiles (``warmup`` launches
    nothing): an sm_90a device 0 and its stream."""

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return SM90

    def get_active_torch_device(self):
        return torch.device("cpu")


def test_a_jit_compiled_kernel_is_prefetched_and_found_again(monkeypatch):
    """Through Triton's JIT, which in 3.7+ asks the stages hook for a key at every launch:
    the kernel is compiled with the prefetch once and then found in its cache."""
    monkeypatch.setattr(driver, "_active", CompileOnlyDriver())
    tile = torch.zeros(TILE, TILE, dtype=torch.float16)
    descriptor = TensorDescriptor(tile, [TILE, TILE], [TILE, 1], [TILE, TILE], TILE_LAYOUT.value)
    arguments = (descriptor, descriptor, tile)
    first = tlx_copy.warmup(*arguments, TILE=TILE, grid=(1,))
    assert tlx_copy.warmup(*arguments, TILE=TILE, grid=(1,)) is first
    assert len(PREFETCH.findall(first.asm["ptx"])) == 2
    gluon_kernel = gluon_copy.warmup(*arguments, TILE=TILE, grid=(1,))
    assert "prefetch.tensormap" not in gluon_kernel.asm["ptx"]


def test_the_environment_variable_turns_it_off(monkeypatch):
    on = tlx.ASTSource(fn=tlx_copy, signature=SIGNATURE, constexprs={"TILE": TILE}).hash()
    monkeypatch.setenv(_descriptor_prefetch.ENVIRONMENT_VARIABLE, "0")
    off = tlx.ASTSource(fn=tlx_copy, signature=SIGNATURE, constexprs={"TILE": TILE})
    assert off.hash() != on  # never taken from the cache of the other setting
    assert "prefetch.tensormap" not in _compile(tlx_copy, SM90).asm["ptx"]


def test_a_hook_installed_before_is_kept(monkeypatch):
    seen = []

    def previous(*arguments):
        if not arguments:
            return "theirs", "their-hash"
        seen.append(arguments[3])

    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook", previous)
    _descriptor_prefetch.install()
    _descriptor_prefetch.install()  # once only
    hook = knobs.runtime.add_stages_inspection_hook
    assert hook.previous is previous
    key, digest = hook()
    assert key.startswith("theirs") and digest.startswith("their-hash") and key != "theirs"
    assert PREFETCH.search(_compile(tlx_copy, SM90).asm["ptx"])
    assert seen  # their hook saw the compilation


ENTRY = """\
.visible .entry k(
\t.param .align 64 .b8 k_param_0[128],
\t.param .u64 k_param_1,
\t.param .align 64 .b8 k_param_2[128]
)
{
\t.reg .b64 \t%rd<3>;
// %bb.0:
\tld.param.b64 \t%rd1, [k_param_1];
\tret;
}
"""


def test_the_ptx_gets_one_prefetch_per_descriptor_after_the_first_block_marker():
    ptx = _descriptor_prefetch.with_descriptor_prefetch(ENTRY)
    head, tail = ptx.split("// %bb.0:\n")
    assert head + "// %bb.0:\n" == ENTRY.split("\tld.param")[0]
    block, rest = tail.split("\t}\n", 1)
    assert rest == "\tld.param.b64 \t%rd1, [k_param_1];\n\tret;\n}\n"
    assert ".reg .b64 %tlx_descriptor<4>;" in block
    assert re.findall(r"mov\.b64 %tlx_descriptor(\d), (\w+);", block) == [
        ("0", "k_param_0"),
        ("2", "k_param_2"),
    ]
    assert PREFETCH.findall(block) == ["%tlx_descriptor1", "%tlx_descriptor3"]


def test_ptx_without_descriptors_or_with_them_only_in_a_function_is_unchanged():
    no_descriptor = ENTRY.replace(".align 64 .b8 k_param_0[128]", ".u64 k_param_0").replace(
        ".align 64 .b8 k_param_2[128]", ".u64 k_param_2"
    )
    function = ".func f(\n\t.param .align 64 .b8 f_param_0[128]\n)\n{\n\tret;\n}\n"
    for ptx in (no_descriptor, function + no_descriptor, "// no kernel\n"):
        assert _descriptor_prefetch.with_descriptor_prefetch(ptx) == ptx


def test_ptx_without_the_first_block_marker_warns_and_is_unchanged():
    ptx = ENTRY.replace("// %bb.0:\n", "")
    with pytest.warns(UserWarning, match=r"PTX of k has no '// %bb.0:' line .* 2 TMA descriptors"):
        assert _descriptor_prefetch.with_descriptor_prefetch(ptx) == ptx
