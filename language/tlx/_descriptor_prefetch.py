"""Prefetching a ``@tlx.jit`` kernel's TMA descriptors when it starts.

A TMA copy reads its 128-byte tensor map (descriptor) before it moves data; the
first copy of each descriptor otherwise waits for that read. ``prefetch.tensormap``
at the kernel's entry starts those reads while the kernel initializes its barriers:
0.16-0.2 us of an 8 us GEMM at 1024 cubed on an H200 (README.md, Known limits). Gluon
3.6-3.9 has no operation for it, so tlx adds it where Triton lets a library change
its pipeline: Triton's stages hook (``knobs.runtime.add_stages_inspection_hook``).
The hook acts only on modules ``mark`` marked (those ``tlx.ASTSource`` traced),
so other kernels of the process compile as they would without tlx.
``TLX_DESCRIPTOR_PREFETCH=0`` turns it off.
"""

from __future__ import annotations

import os
import re
import threading
import warnings

from triton import knobs
from triton._C.libtriton import ir

ENVIRONMENT_VARIABLE = "TLX_DESCRIPTOR_PREFETCH"
MODULE_ATTRIBUTE = "tlx.prefetch_descriptors"
# Part of the cache key of every kernel Triton 3.7+ compiles while the hook is installed.
_PIPELINE_KEY = "tlx-descriptor-prefetch-1"
# The first architecture with TMA and prefetch.tensormap.
_FIRST_CAPABILITY = 90
_ENTRY = re.compile(r"\.entry\s+(\w+)\s*\((.*?)\)", re.DOTALL)
# A kernel parameter holding a CUtensorMap (Triton passes host descriptors by value).
_DESCRIPTOR_PARAMETER = re.compile(r"\.param\s+\.align\s+64\s+\.b8\s+(\w+)\[128\]")
_ENTRY_BLOCK = "// %bb.0:"
_install_lock = threading.Lock()


def enabled() -> bool:
    """Whether kernels traced now get their descriptors prefetched."""
    return os.environ.get(ENVIRONMENT_VARIABLE, "1") not in ("", "0")


def with_descriptor_prefetch(ptx: str) -> str:
    """``ptx`` with a ``prefetch.tensormap`` of each descriptor parameter of its
    kernel (``.entry``) at the start of the kernel's first block; ``ptx`` itself when
    the kernel takes no descriptor. Warns, and changes nothing, when the PTX has no
    first-block marker to put them after."""
    entry = _ENTRY.search(ptx)
    if entry is None:
        return ptx
    names = _DESCRIPTOR_PARAMETER.findall(entry.group(2))
    if not names:
        return ptx
    block = ptx.find(_ENTRY_BLOCK, entry.end())
    if block < 0:
        warnings.warn(
            f"tlx: the PTX of {entry.group(1)} has no '{_ENTRY_BLOCK}' line to put the "
            f"prefetch of its {len(names)} TMA descriptors after; they are not prefetched",
            stacklevel=2,
        )
        return ptx
    registers = "%tlx_descriptor"
    lines = ["\t{", f"\t.reg .b64 {registers}<{2 * len(names)}>;"]
    for index, name in enumerate(names):
        parameter, generic = f"{registers}{2 * index}", f"{registers}{2 * index + 1}"
        lines += [
            f"\tmov.b64 {parameter}, {name};",
            f"\tcvta.param.u64 {generic}, {parameter};",
            f"\tprefetch.tensormap [{generic}];",
        ]
    lines.append("\t}")
    at = block + len(_ENTRY_BLOCK)
    return ptx[:at] + "\n" + "\n".join(lines) + ptx[at:]


def mark(module, context) -> None:
    """Marks a traced kernel's module for the prefetch (when ``enabled()``)."""
    if enabled():
        module.set_attr(MODULE_ATTRIBUTE, ir.builder(context).get_int32_attr(1))


class _StagesHook:
    """Triton's stages hook with the prefetch: wraps the LLVM stage to see whether
    the module is marked and the PTX stage to add the prefetch, after calling the
    hook that was installed before (``previous``)."""

    def __init__(self, previous):
        self.previous = previous
        self.own_key = (_PIPELINE_KEY, _PIPELINE_KEY)

    def __call__(self, *arguments):
        if not arguments:
            # Triton 3.7+ asks for (cache key, hash) of the changed pipeline, at every
            # launch through its JIT: without a previous hook, a constant.
            if self.previous is None:
                return self.own_key
            key, digest = self.previous()
            return key + _PIPELINE_KEY, digest + _PIPELINE_KEY
        if self.previous:
            self.previous(*arguments)
        _backend, stages, _options, _language, capability = arguments
        if capability is None or capability < _FIRST_CAPABILITY:
            return
        if "llir" not in stages or "ptx" not in stages:
            return
        make_llir, make_ptx = stages["llir"], stages["ptx"]
        # One compilation's stages: whether its module was marked.
        marked = []

        def llir(module, metadata):
            marked.append(module.get_int_attr(MODULE_ATTRIBUTE) == 1)
            return make_llir(module, metadata)

        def ptx(module, metadata):
            text = make_ptx(module, metadata)
            return with_descriptor_prefetch(text) if marked and marked[-1] else text

        stages["llir"], stages["ptx"] = llir, ptx


def install() -> None:
    """Installs the stages hook once per process, keeping the hook there was."""
    with _install_lock:
        current = knobs.runtime.add_stages_inspection_hook
        if not isinstance(current, _StagesHook):
            knobs.runtime.add_stages_inspection_hook = _StagesHook(current)
