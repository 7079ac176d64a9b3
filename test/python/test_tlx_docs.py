"""The complete example of README.md compiles for sm_90a (it runs on a Hopper
GPU in test/gpu/test_tlx_docs_example.py)."""

import re

import pytest
from _helpers import compile_kernel, constant_slots, load_api_example

pytestmark = pytest.mark.usefixtures("always_compile")


def test_api_example_compiles_to_the_documented_plan(tmp_path):
    example = load_api_example(tmp_path)
    signature = {"words_ptr": "*i32", "halves_ptr": "*i16", "flags_ptr": "*i8"}
    compiled = compile_kernel(example.share_bytes, signature, N=32)
    ttgir = compiled.asm["ttgir"]
    # The table of the document: a 16 KiB region; halves j at 8192 (j // 2) +
    # 2048 (j % 2) = slots 0, 1, 4, 5 of 2 KiB; flags i at 8192 i + 4096 =
    # slots 32, 96 of 128 B.
    assert re.findall(
        r"ttg\.local_alloc \{alignment = 128 : i32\} : \(\) -> !ttg\.memdesc<128x128xi8", ttgir
    )
    assert constant_slots(ttgir, "halves") == [0, 1, 4, 5]
    assert sorted(set(constant_slots(ttgir, "flags"))) == [32, 96]
    assert compiled.metadata.shared == 16384
