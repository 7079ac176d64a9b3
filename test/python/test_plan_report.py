"""The plan report: ``SpecPlan.advice`` on the tutorials' kernels, ``SpecPlan.to_svg()``
and ``python -m tlx plan`` (its output, its pictures, its errors and exit statuses)."""

import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from tlx.report import cli

REPOSITORY = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"

README_EXAMPLE_ARGS = [
    "--target",
    "sm_90a",
    "--signature",
    "words_ptr=*i32,halves_ptr=*i16,flags_ptr=*i8",
    "--constexpr",
    "N=32",
]


@pytest.fixture
def readme_example(tmp_path):
    """The README's complete example as a file (the CLI loads kernels from files)."""
    block = re.search(r"```python\n(.*?)```", (REPOSITORY / "README.md").read_text(), re.DOTALL)
    path = tmp_path / "share_bytes.py"
    path.write_text(block.group(1))
    return path


def run_cli(capsys, *arguments):
    status = cli.main([str(argument) for argument in arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --- advice on the tutorials' kernels ----------------------------------------------------------


def test_blackwell_head_dim_64_leaves_room_for_alpha_l_m():
    from tlx_kernels.blackwell import flash_attention as blackwell

    plans = blackwell.spec_plans(64, blackwell.num_stages(64))
    qk_storage = plans["qk_storage"]
    # qk_storage's 256 columns beside the O accumulators' 128.
    assert qk_storage.other_regions_units == 128
    assert plans["o_tiles_region"].other_regions_units == 256
    advice = {tuple(qk_storage.buffers[i].name for i in s.buffers): s for s in qk_storage.advice}
    for statistic in ("alpha_tiles", "l_tiles", "m_tiles"):
        split = advice[(statistic,)]
        assert split.fits and split.own_region
        assert (split.total_units, split.left_units) == (416, 96)
        assert split.message.startswith(f'"{statistic}" need not share with "qk_tiles"')
    assert not advice[("qk_tiles",)].fits


def test_blackwell_head_dim_128_must_share_everything():
    from tlx_kernels.blackwell import flash_attention as blackwell

    qk_storage = blackwell.spec_plans(128, blackwell.num_stages(128))["qk_storage"]
    assert qk_storage.other_regions_units == 256
    assert qk_storage.advice and not any(split.fits for split in qk_storage.advice)


def test_hopper_head_dim_128_must_alias_o_with_v():
    from tlx_kernels.hopper import attention as hopper

    smem = hopper.smem_plan(hopper.default_config(128), 128)
    names = [buffer.name for buffer in smem.buffers]
    advice = {tuple(names[i] for i in split.buffers): split for split in smem.advice}
    assert advice and not any(split.fits for split in advice.values())
    # O with bytes of its own: two 16 KiB tiles for each of the three stages on top of
    # 224 KiB, over the 227 KiB of sm_90a.
    assert advice[("o_tiles",)].total_units == 229376 + 3 * 2 * 16384
    assert advice[("o_tiles",)].budget_units == 232448


def test_no_advice_without_a_tree():
    from tlx_kernels.blackwell import flash_attention as blackwell

    assert blackwell.spec_plans(64, blackwell.num_stages(64))["o_tiles_region"].advice == ()


# --- pictures ----------------------------------------------------------------------------------


def test_svg_is_xml_with_a_lane_per_buffer_and_the_names():
    from tlx_kernels.blackwell import flash_attention as blackwell

    qk_storage = blackwell.spec_plans(64, blackwell.num_stages(64))["qk_storage"]
    root = ElementTree.fromstring(qk_storage.to_svg())
    assert root.tag == f"{SVG}svg"
    texts = [element.text for element in root.iter(f"{SVG}text")]
    for buffer in qk_storage.buffers:
        assert buffer.name in texts  # its lane's label
    assert "qk_tiles[0]" in texts and "p_tiles[3]" in texts
    # Every buffer is a rectangle with a tooltip naming it, coloured by its buffer group.
    tooltips = {
        rect.find(f"{SVG}title").text: rect.get("fill")
        for rect in root.iter(f"{SVG}rect")
        if rect.find(f"{SVG}title") is not None
    }
    assert (
        tooltips["qk_tiles[0]: columns 0 .. 128, buffer group 0"]
        == tooltips["alpha_tiles[0]: columns 64 .. 65, buffer group 0"]
    )
    assert (
        tooltips["qk_tiles[1]: columns 128 .. 256, buffer group 1"]
        != tooltips["qk_tiles[0]: columns 0 .. 128, buffer group 0"]
    )
    # The shared lane: p_tiles[0] over qk_tiles[0].
    assert any(
        tip.startswith("columns 0 .. 32, buffer group 0: qk_tiles[0], p_tiles[0]")
        for tip in tooltips
    )
    # The ruler ends at the region's end.
    assert "256" in texts and "columns" in texts


def test_svg_escapes_names():
    from tlx_kernels.blackwell import flash_attention as blackwell

    qk_storage = blackwell.spec_plans(64, blackwell.num_stages(64))["qk_storage"]
    odd = qk_storage.buffers[0].__class__(
        "a<b&c",
        qk_storage.buffers[0].shape,
        32,
        qk_storage.buffers[0].storage,
        qk_storage.buffers[0].layout,
    )
    import dataclasses

    renamed = dataclasses.replace(qk_storage, buffers=(odd, *qk_storage.buffers[1:]))
    root = ElementTree.fromstring(renamed.to_svg())
    assert "a<b&c" in [element.text for element in root.iter(f"{SVG}text")]


# --- python -m tlx plan ------------------------------------------------------------------------


def test_plan_prints_the_memory_map_advice_and_total(capsys, readme_example):
    status, out, err = run_cli(
        capsys, "plan", f"{readme_example}::share_bytes", *README_EXAMPLE_ARGS
    )
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "kernel share_bytes for sm_90a (num_warps=4)"
    assert lines[2].startswith('storage_alias_spec "spec" (created at share_bytes.py:')
    memory_map = lines[: lines.index("advice:")]
    table = {line.split()[0]: line.split()[1:] for line in memory_map if line.startswith('  "')}
    # buffer: offset, size, stride (bytes).
    assert table['"words"'][:3] == ["0", "4096", "4096"]
    assert table['"halves"'][:3] == ["0", "2048", "2048"]
    assert table['"flags"'][:3] == ["8192", "128", "128"]
    assert ["0", "..", "2048", "0", '"words"[0]', '"halves"[0]'] in [line.split() for line in lines]
    assert "advice:" in lines
    assert any(line.startswith('  "halves" need not share with "words"') for line in lines)
    region = re.search(r"smem region: (\d+) bytes", out).group(1)
    assert (
        lines[-1]
        == f"  smem: {region} of 232448 bytes ({232448 - int(region)} left): spec {region}"
    )


def test_plan_totals_a_share_of_the_sm_where_ctas_share_one(capsys, readme_example):
    status, out, err = run_cli(
        capsys,
        "plan",
        f"{readme_example}::share_bytes",
        *README_EXAMPLE_ARGS,
        "--ctas-per-sm",
        "2",
    )
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "kernel share_bytes for sm_90a (num_warps=4, 2 CTAs an SM)"
    region = re.search(r"smem region: (\d+) bytes", out).group(1)
    # 113 KiB each: the SM's 228 KiB halved, less the KiB reserved for each CTA.
    assert (
        lines[-1]
        == f"  smem: {region} of 115712 bytes ({115712 - int(region)} left): spec {region}"
    )
    status, out, err = run_cli(
        capsys,
        "plan",
        f"{readme_example}::share_bytes",
        *README_EXAMPLE_ARGS,
        "--ctas-per-sm",
        "0",
    )
    assert status == 2 and out == ""
    assert "--ctas-per-sm: ctas_per_sm must be a positive int, got 0" in err


def test_plan_writes_one_svg_per_spec(capsys, readme_example, tmp_path):
    directory = tmp_path / "pictures"
    status, out, _ = run_cli(
        capsys, "plan", f"{readme_example}::share_bytes", *README_EXAMPLE_ARGS, "--svg", directory
    )
    assert status == 0
    picture = directory / "share_bytes.spec.svg"
    assert f"wrote {picture}" in out.splitlines()
    texts = [e.text for e in ElementTree.parse(picture).getroot().iter(f"{SVG}text")]
    assert {"words", "halves", "flags", "words[0]", "halves[3]"} <= set(texts)


def test_plan_for_blackwell_reports_tmem_against_512_columns(capsys):
    from tlx_kernels.blackwell import flash_attention as blackwell

    source = blackwell.kernel_source(64, blackwell.num_stages(64))
    signature = ",".join(
        f"{name}={type_text}"
        for name, type_text in source.signature.items()
        if type_text != "constexpr"
    )
    values = {
        "BLOCK_N": blackwell.BLOCK_N,
        "HEAD_DIM": 64,
        "NUM_STAGES": blackwell.num_stages(64),
        "CAUSAL": False,
    }
    constexprs = [f"--constexpr={name}={value}" for name, value in values.items()]
    status, out, err = run_cli(
        capsys,
        "plan",
        f"{blackwell.__file__}::attention_fwd_kernel",
        "--target",
        "sm_100a",
        "--signature",
        signature,
        *constexprs,
    )
    assert status == 0, err
    assert "  tmem: 384 of 512 columns (128 left): qk_storage 256, o_tiles_region 128" in out
    assert '  "alpha_tiles" need not share with "qk_tiles": in a region of their own (32 ' in out


def test_a_plan_that_does_not_fit_prints_the_compilers_error(capsys, tmp_path):
    kernel = tmp_path / "too_big.py"
    kernel.write_text(
        "import tlx\n"
        "from triton.experimental.gluon import language as gl\n"
        "\n"
        "@tlx.jit\n"
        "def too_big(N: gl.constexpr):\n"
        "    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)\n"
        "    a = tlx.local_alloc((N, N), gl.float32, 4, reuse=spec)\n"
        "    b = tlx.local_alloc((N, N), gl.float32, 4, reuse=spec)\n"
        "    spec.set_buffer_overlap(tlx.reuse_group(a, b, "
        "group_type=tlx.reuse_group_type.distinct))\n"
    )
    status, out, err = run_cli(
        capsys, "plan", f"{kernel}::too_big", "--target", "sm_90a", "--constexpr", "N=128"
    )
    assert status == 1 and out == ""
    assert "at 5:4:" in err and "(created at too_big.py:6)" in err
    assert 'spec "spec" needs 524288 bytes of shared memory, more than the target' in err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.py::k"], "missing.py: no such file"),
        (["{example}"], "is not FILE.py::KERNEL"),
        (
            ["{example}::nope"],
            "nope is not defined in {example}; its @tlx.jit kernels: share_bytes",
        ),
        (["{example}::N"], "N is not a @tlx.jit function"),
        (["{example}::share_bytes", "--signature", "words_ptr"], "is not NAME=TYPE"),
        (["{example}::share_bytes", "--constexpr", "N"], "is not NAME=VALUE"),
        (["{example}::share_bytes", "--constexpr", "M=1"], "share_bytes has no parameter M"),
        (
            ["{example}::share_bytes", "--constexpr", "N=32,X=1"],
            "share_bytes has no parameter X",
        ),
        (
            ["{example}::share_bytes", "--constexpr", "N=32,64"],
            "--constexpr item '64' (in 'N=32,64') is not NAME=VALUE",
        ),
        (
            ["{example}::share_bytes", "--constexpr", "N=32"],
            "parameter words_ptr, halves_ptr, flags_ptr of share_bytes has no type",
        ),
    ],
)
def test_bad_command_lines_exit_with_2(capsys, readme_example, arguments, message):
    example = str(readme_example)
    arguments = [a.format(example=example) for a in arguments]
    status, out, err = run_cli(capsys, "plan", *arguments, "--target", "sm_90a")
    assert status == 2 and out == ""
    assert err.startswith("python -m tlx plan: error: ")
    assert message.format(example=example) in err


def test_signatures_keep_commas_inside_brackets():
    descriptor = "tensordesc<fp16[1,128,64],NVMMASharedLayout(swizzle_byte_width=128, rank=3)>"
    assert cli.parse_signature([f"d={descriptor}, n=i32", "p=*fp16"]) == {
        "d": descriptor,
        "n": "i32",
        "p": "*fp16",
    }
    assert cli.parse_constexpr(["A=64", "B=True", "C=fast", "D=1.5"]) == {
        "A": 64,
        "B": True,
        "C": "fast",
        "D": 1.5,
    }


def test_constexprs_are_a_comma_list_as_signatures_are():
    assert cli.parse_constexpr(["A=64, B=True", "C=fast,D=(1, 2)", "E=[3,4]"]) == {
        "A": 64,
        "B": True,
        "C": "fast",
        "D": (1, 2),
        "E": [3, 4],
    }
    for entry, item in (("N=32,X", "X"), ("=1,N=32", "=1"), ("N=32,,=", "=")):
        with pytest.raises(cli.UsageError, match=f"--constexpr item '{item}' "):
            cli.parse_constexpr([entry])
    with pytest.raises(cli.UsageError, match="--constexpr ' ' is not NAME=VALUE"):
        cli.parse_constexpr([" "])


def test_plan_takes_every_constexpr_of_one_list(capsys, tmp_path):
    kernel = tmp_path / "two_constexprs.py"
    kernel.write_text(
        "import tlx\n"
        "from triton.experimental.gluon import language as ttgl\n"
        "@tlx.jit\n"
        "def two(N: ttgl.constexpr, STAGES: ttgl.constexpr):\n"
        "    spec = tlx.storage_alias_spec(storage=tlx.storage_kind.smem)\n"
        "    a = tlx.local_alloc((N, N), ttgl.float32, STAGES, reuse=spec)\n"
        "    spec.set_buffer_overlap(tlx.reuse_group(a, group_type=tlx.reuse_group_type.shared))\n"
    )
    status, out, err = run_cli(
        capsys, "plan", f"{kernel}::two", "--target", "sm_90a", "--constexpr", "N=32,STAGES=3"
    )
    assert status == 0, err
    assert re.search(r"smem region: 12288 bytes", out), out


def test_python_dash_m_tlx_runs_the_cli(readme_example):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tlx",
            "plan",
            f"{readme_example}::share_bytes",
            *README_EXAMPLE_ARGS,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("kernel share_bytes for sm_90a")
