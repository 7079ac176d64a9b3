"""The forms that would free a view's group stride from the buffer's size
(``tlx.compat.VIEW_FORMS`` "runtime_row", "group_rows" and "selected_rows"; docs/planner.md,
"What stays above the ideal": the planner writes runtime_row on 3.6 and 3.7, selected_rows
on 3.9), compiled by the installed Triton as written: buffer k of group
g of 4 KiB f16 tiles at 2048 + 18432 g + 4096 k bytes of a [432, 128] x i8 backing (18432 is
4.5 tiles)."""

# ruff: noqa: E501
import re

import pytest
import triton
from tlx import compat
from triton.backends.compiler import GPUTarget

HEADER = """
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#rank1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#rank2 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @store(%g: i32, %k: i32) {
    %ones = arith.constant dense<1.000000e+00> : tensor<16x128xf16, #blocked>
    %backing = ttg.local_alloc : () -> !ttg.memdesc<432x128xi8, #rank1, #smem, mutable>
"""
FOOTER = """
    %tile = ttg.memdesc_index %tiles[%k] : !ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable> -> !ttg.memdesc<16x128xf16, #rank2, #smem, mutable>
    ttg.local_store %ones, %tile : tensor<16x128xf16, #blocked> -> !ttg.memdesc<16x128xf16, #rank2, #smem, mutable>
    tt.return
  }
}
"""
FORMS = {
    # The group's start row (2048 + 18432 g) / 128, computed at run time.
    "runtime_row": """
    %c144 = arith.constant 144 : i32
    %c16 = arith.constant 16 : i32
    %scaled = arith.muli %g, %c144 : i32
    %row = arith.addi %scaled, %c16 : i32
    %bytes = ttg.memdesc_index %backing[%row] : !ttg.memdesc<432x128xi8, #rank1, #smem, mutable> -> !ttg.memdesc<128xi8, #rank1, #smem, mutable>
    %tiles = ttg.memdesc_reinterpret %bytes : !ttg.memdesc<128xi8, #rank1, #smem, mutable> -> !ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable>
""",
    "group_rows": """
    %groups = ttg.memdesc_reinterpret %backing : !ttg.memdesc<432x128xi8, #rank1, #smem, mutable> -> !ttg.memdesc<3x144x128xi8, #rank2, #smem, mutable>
    %group = ttg.memdesc_index %groups[%g] : !ttg.memdesc<3x144x128xi8, #rank2, #smem, mutable> -> !ttg.memdesc<144x128xi8, #rank2, #smem, mutable, 3x144x128>
    %rows = ttg.memdesc_subslice %group[16, 0] : !ttg.memdesc<144x128xi8, #rank2, #smem, mutable, 3x144x128> -> !ttg.memdesc<128x128xi8, #rank2, #smem, mutable, 3x144x128>
    %tiles = ttg.memdesc_reinterpret %rows : !ttg.memdesc<128x128xi8, #rank2, #smem, mutable, 3x144x128> -> !ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable>
""",
}
# "selected_rows": each of the three groups' views at its constant start row 16 + 144 g, in
# the form of a view at a byte offset that the release writes ("sliced_rows" or
# "indexed_row"), the group's chosen at run time by scf.if on g.
GROUP_VIEW = {
    "sliced_rows": """
    %rows{g} = ttg.memdesc_subslice %backing[{row}, 0] : !ttg.memdesc<432x128xi8, #rank1, #smem, mutable> -> !ttg.memdesc<128x128xi8, #rank1, #smem, mutable, 432x128>
    %tiles{g} = ttg.memdesc_reinterpret %rows{g} : !ttg.memdesc<128x128xi8, #rank1, #smem, mutable, 432x128> -> !ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable>
""",
    "indexed_row": """
    %row{g} = arith.constant {row} : i32
    %bytes{g} = ttg.memdesc_index %backing[%row{g}] : !ttg.memdesc<432x128xi8, #rank1, #smem, mutable> -> !ttg.memdesc<128xi8, #rank1, #smem, mutable>
    %tiles{g} = ttg.memdesc_reinterpret %bytes{g} : !ttg.memdesc<128xi8, #rank1, #smem, mutable> -> !ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable>
""",
}
SELECT_GROUP = """
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %is0 = arith.cmpi eq, %g, %c0 : i32
    %is1 = arith.cmpi eq, %g, %c1 : i32
    %tiles = scf.if %is0 -> (!ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable>) {
      scf.yield %tiles0 : !ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable>
    } else {
      %rest = scf.if %is1 -> (!ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable>) {
        scf.yield %tiles1 : !ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable>
      } else {
        scf.yield %tiles2 : !ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable>
      }
      scf.yield %rest : !ttg.memdesc<4x16x128xf16, #rank2, #smem, mutable>
    }
"""


def selected_rows(group_view_form):
    """The "selected_rows" form with each group's view in ``group_view_form``."""
    views = "".join(GROUP_VIEW[group_view_form].format(g=g, row=16 + 144 * g) for g in range(3))
    return views + SELECT_GROUP


# What the verifier of a release that refuses a form says (VIEW_FORMS gives the reason).
REFUSALS = {
    "refused: reinterpret keeps the byte size": "same logical storage size",
    "refused: a result larger than its source": "exceeds the source view",
    "refused: a stride of stride / 128 rows that is no power of two": "power-of-2",
    "refused: no view at a byte offset": "The split offset may not touch the tile",
}


def ptx_where_the_table_says(form, body, tmp_path, monkeypatch, capfd):
    """The PTX of ``body`` (the form ``form`` between HEADER and FOOTER) compiled by the
    installed Triton where ``compat.VIEW_FORMS`` says it accepts ``form``; None where it
    refuses it, after checking that its verifier says why."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / f"{form}.ttgir"
    source.write_text(HEADER + body + FOOTER)
    expected = compat.VIEW_FORMS[form][compat.TRITON_VERSION]
    if expected != "ok":
        with pytest.raises(RuntimeError):
            triton.compile(str(source), target=GPUTarget("cuda", 90, 32))
        assert REFUSALS[expected] in capfd.readouterr().err
        return None
    return triton.compile(str(source), target=GPUTarget("cuda", 90, 32)).asm["ptx"]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_free_group_stride_compiles_where_the_table_says(form, tmp_path, monkeypatch, capfd):
    ptx = ptx_where_the_table_says(form, FORMS[form], tmp_path, monkeypatch, capfd)
    if ptx is None:
        return
    # The group stride multiplies g, the tile's size k, and the stores start 2048 bytes in.
    assert re.search(r"mad\.lo\.s32\s+%r\d+, %r\d+, 18432,", ptx), ptx
    assert re.search(r"shl\.b32\s+%r\d+, %r\d+, 12;", ptx), ptx


def test_a_group_view_selected_at_run_time_compiles_where_the_table_says(
    tmp_path, monkeypatch, capfd
):
    """ "selected_rows": the groups' views in the form of a view at a byte offset that the
    release writes (3.8 writes none: there the 3.9 form's refusal), one chosen at run time."""
    group_view_form = (
        "sliced_rows" if compat.OFFSET_VIEW_FORM == "slots" else compat.OFFSET_VIEW_FORM
    )
    body = selected_rows(group_view_form)
    ptx = ptx_where_the_table_says("selected_rows", body, tmp_path, monkeypatch, capfd)
    if ptx is None:
        return
    # Each group's start, 2048 + 18432 g, added to the backing's address on its branch, then
    # the tile's size times k.
    for start in (2048, 20480, 38912):
        assert re.search(rf"add\.s32\s+%r\d+, %r\d+, {start};", ptx), (start, ptx)
    assert re.search(r"shl\.b32\s+%r\d+, %r\d+, 12;", ptx), ptx
