"""The complete example of README.md compiles for sm_90a (it runs on a Hopper
GPU in test/gpu/test_tlx_docs_example.py), and the plan reports README.md,
docs/plan-report.md and docs/attention-backward.md show (text, pictures and the
commands that print them) are what the tools print now."""

import re
import shlex
from pathlib import Path

import pytest
import tlx
from _helpers import REPOSITORY, compile_kernel, constant_slots, load_api_example
from tlx.report import cli

README = (REPOSITORY / "README.md").read_text()

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


# --- the plan report as README.md and docs/plan-report.md show it ---------------------------------

DOCS = REPOSITORY / "docs"
same_plans_as_shown = pytest.mark.skipif(
    tlx.compat.NEEDS_WHOLE_VIEWS,
    reason="the documents show plans with views smaller than the region (not Triton 3.8)",
)


def text_blocks(document: Path):
    return re.findall(r"```text\n(.*?)```", document.read_text(), re.DOTALL)


@same_plans_as_shown
def test_readme_shows_what_the_plan_cli_prints(tmp_path, monkeypatch, capsys):
    (tmp_path / "share_bytes.py").write_text(
        re.search(r"```python\n(.*?)```", (REPOSITORY / "README.md").read_text(), re.DOTALL)[1]
    )
    monkeypatch.chdir(tmp_path)
    command = re.search(r"python -m tlx plan (share_bytes.py.*?)\n```", README, re.DOTALL)[1]
    status = cli.main(["plan", *shlex.split(command.replace("\\\n", " "))])
    assert status == 0
    (shown,) = [
        block
        for block in text_blocks(REPOSITORY / "README.md")
        if block.startswith("kernel share_bytes")
    ]
    assert capsys.readouterr().out == shown
    picture = (tmp_path / "pictures" / "share_bytes.spec.svg").read_text()
    assert picture == (DOCS / "images" / "share_bytes.spec.svg").read_text()


@same_plans_as_shown
def test_plan_report_document_shows_the_blackwell_advice():
    from tlx_kernels.blackwell import flash_attention as blackwell

    plans = blackwell.spec_plans(64, blackwell.num_stages(64))
    printed = cli.report("attention_fwd_kernel", "sm_100a", 4, tuple(plans.values()))
    (shown,) = text_blocks(DOCS / "plan-report.md")
    lines = printed.splitlines()
    for line in shown.splitlines():
        if line.strip() != "...":
            assert line in lines
    picture = (DOCS / "images" / "blackwell_attention.qk_storage.svg").read_text()
    assert picture == plans["qk_storage"].to_svg()


@same_plans_as_shown
def test_the_backward_documents_plan_command_draws_its_picture(tmp_path, monkeypatch):
    """docs/attention-backward.md's command names every constexpr of the configuration it
    draws, with its value, and draws the picture the document shows (D, F and S, the
    descriptor types, as this Triton prints them)."""
    from tlx_kernels.hopper import attention_backward as bwd

    document = (DOCS / "attention-backward.md").read_text()
    block = re.search(r"```sh\n(D=.*?)```", document, re.DOTALL)[1]
    command = re.search(r"python -m tlx plan (.*)", block.replace("\\\n", " "))[1]
    config = bwd.Config(64, 128, 4, p_in_smem=True)
    signature = bwd.kernel_source(config, 128).signature
    types = {"$D": "desc_q", "$F": "desc_dq", "$S": "desc_statistics"}
    for variable, name in types.items():
        command = command.replace(variable, signature[name])
    arguments = shlex.split(command)
    shown = {}
    for flag, value in zip(arguments, arguments[1:], strict=False):
        if flag == "--constexpr":
            shown.update(pair.split("=") for pair in value.split(","))
    expected = bwd.HOST.constexprs(config, HEAD_DIM=128, CAUSAL=False)
    assert shown == {name: str(value) for name, value in expected.items()}
    monkeypatch.chdir(REPOSITORY / "language" / "tlx_kernels" / "hopper")
    arguments[arguments.index("pictures")] = str(tmp_path)
    assert cli.main(["plan", *arguments]) == 0
    picture = (tmp_path / "attention_bwd_kernel.smem.svg").read_text()
    assert picture == (DOCS / "images" / "hopper_attention_backward.smem.svg").read_text()
