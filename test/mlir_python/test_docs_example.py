"""The worked example of docs/mlir.md runs and prints what the document shows; the
dialect's example module parses and lowers; the pipelines the document names parse."""

import contextlib
import io
import re

import pytest
from _tlx_mlir import NOT_BUILT, REPOSITORY, TLX_MLIR_BUILT

if not TLX_MLIR_BUILT:
    pytest.skip(NOT_BUILT, allow_module_level=True)

from tlx_mlir import ir, passmanager  # noqa: E402

DOCUMENT = (REPOSITORY / "docs" / "mlir.md").read_text()


def test_the_worked_example_prints_what_the_document_shows():
    example = DOCUMENT.split("### A worked example", 1)[1]
    code = re.search(r"```python\n(.*?)```", example, re.DOTALL)[1]
    shown = re.search(r"```text\n(.*?)```", example, re.DOTALL)[1]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "docs/mlir.md", "exec"), {})
    assert printed.getvalue() == shown


def test_the_dialect_block_is_a_module_that_lowers():
    block = re.search(r"## The `tlx` dialect\n\n```mlir\n(.*?)```", DOCUMENT, re.DOTALL)[1]
    with ir.Context():
        module = ir.Module.parse(block)
        assert module.operation.verify()
        passmanager.PassManager.parse("builtin.module(tlx-storage-alias-lowering)").run(
            module.operation
        )
        assert "tlx.storage_alias_spec" not in str(module)


@pytest.mark.parametrize(
    "pipeline",
    [
        "builtin.module(tlx-storage-alias-lowering)",
        "builtin.module(tlx-storage-alias-lowering{whole-views=false})",
    ],
)
def test_the_pipelines_of_the_document_parse(pipeline):
    assert pipeline.replace("builtin.module(", "").rstrip(")") in DOCUMENT
    with ir.Context():
        passmanager.PassManager.parse(pipeline)
