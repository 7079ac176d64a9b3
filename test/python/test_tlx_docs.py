"""The complete example of README.md compiles for sm_90a (it runs on a Hopper
GPU in test/gpu/test_tlx_docs_example.py)."""

import re

import pytest
import tlx
from _helpers import compile_kernel, constant_slots, load_api_example

pytestmark = pytest.mark.usefixtures("always_compile")


def test_api_example_compiles_to_the_documented_plan(tmp_path):
    example = load_api_example(tmp_path)
    signature = {"words_ptr": "*i32", "halves_ptr": "*i16", "flags_ptr": "*i8"}
    compiled = compile_kernel(example.share_bytes, signature, N=32)
    ttgir = compiled.asm["ttgir"]
    # The table of the document: halves j at 2048 j (slots 0 .. 3: halves 2 i and
    # 2 i + 1 are the two halves of words i), flags i after them at 8192 + 128 i
    # (slots 64, 65 of 128 B); 8448 bytes, 12288 where views must be whole.
    region = 12288 if tlx.compat.NEEDS_WHOLE_VIEWS else 8448
    backing = (
        rf"ttg\.local_alloc \{{alignment = 128 : i32\}} : \(\) -> !ttg\.memdesc<{region // 128}x"
    )
    assert re.findall(backing, ttgir)
    assert constant_slots(ttgir, "halves") == [0, 1, 2, 3]
    assert sorted(set(constant_slots(ttgir, "flags"))) == [64, 65]
    assert compiled.metadata.shared == region
