"""The complete example of docs/api.md compiles for sm_90a (it runs on a Hopper
GPU in test/gpu/test_tlx_docs_example.py)."""

import importlib.util
import re
from pathlib import Path

import pytest
import tlx
import triton
from triton.backends.compiler import GPUTarget

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def load_example(directory: Path):
    """The first ```python block of docs/api.md, imported as a module (Triton
    reads a kernel's source from its file)."""
    block = re.search(r"```python\n(.*?)```", API_DOC.read_text(), re.DOTALL).group(1)
    path = directory / "api_example.py"
    path.write_text(block)
    spec = importlib.util.spec_from_file_location("api_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def always_compile(monkeypatch):
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")


def test_api_example_compiles_to_the_documented_plan(tmp_path):
    example = load_example(tmp_path)
    signature = {"words_ptr": "*i32", "halves_ptr": "*i16", "flags_ptr": "*i8"}
    source = tlx.ASTSource(fn=example.share_bytes, signature=signature, constexprs={"N": 32})
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32))
    ttgir = compiled.asm["ttgir"]
    # The table of the document: a 16 KiB region; halves j at 8192 (j // 2) +
    # 2048 (j % 2) = slots 0, 1, 4, 5 of 2 KiB; flags i at 8192 i + 4096 =
    # slots 32, 96 of 128 B.
    assert re.findall(
        r"ttg\.local_alloc \{alignment = 128 : i32\} : \(\) -> !ttg\.memdesc<128x128xi8", ttgir
    )
    halves = re.findall(r"ttg\.memdesc_index %halves\[%c(\d+)_i32\]", ttgir)
    assert [int(slot) for slot in halves] == [0, 1, 4, 5]
    flags = re.findall(r"ttg\.memdesc_index %flags\[%c(\d+)_i32\]", ttgir)
    assert sorted({int(slot) for slot in flags}) == [32, 96]
    assert compiled.metadata.shared == 16384
