"""Seeded races: the tutorials' kernels with one ordering removed from their TTGIR.

Each seed names a tutorial kernel, how its TTGIR (as stock Triton produces it for the
target) is mutated — an operation dropped, or moved before another — and the source
lines of the two accesses the hazard check must report. Mutating the TTGIR keeps the
tutorials free of bug switches; the operations are found by their op name and the
Python source line that holds a given piece of code (``line_of``), so a seed follows the
tutorial when its lines move.
test/python/test_hazards.py checks every seed; bench/hazard_check.py times them;
test/gpu/sanitize_hazards.py runs the Hopper ones under compute-sanitizer.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import runpy
import types
from dataclasses import dataclass
from pathlib import Path

import tlx_kernels

TUTORIALS = Path(__file__).resolve().parents[2] / "tutorials"
# The kernels' source files, found by their file names (unique in the package).
KERNEL_SOURCES = {path.name: path for path in Path(tlx_kernels.__file__).parent.rglob("*.py")}


@dataclass(frozen=True)
class Operation:
    """The ``nth`` operation named ``name`` whose location is ``file:line``."""

    name: str
    file: str
    line: int
    nth: int = 0


@dataclass(frozen=True)
class Seed:
    """``operation`` is dropped, or moved right after ``moved_after``; the hazard check
    must report a race between the accesses at the two ``expected`` (file, line)."""

    name: str
    kernel: str  # see kernel()
    operation: Operation
    moved_after: Operation | None
    expected: frozenset
    why: str
    # False where the mutated kernel may hang on a GPU (test/gpu/sanitize_hazards.py skips it).
    runs_on_gpu: bool = True


# The host module of each kernel family the corpus compiles, by the name of its keys.
KERNEL_MODULES = {
    "hopper_flash_attention": "tlx_kernels.hopper.attention",
    "hopper_gemm": "tlx_kernels.hopper.gemm",
    "hopper_fused_mlp": "tlx_kernels.hopper.fused_mlp",
    "blackwell_flash_attention": "tlx_kernels.blackwell.flash_attention",
}


def kernel_module(name):
    """The host module of kernel family ``name`` (a key of KERNEL_MODULES)."""
    return importlib.import_module(KERNEL_MODULES[name])


def _tutorial_file(file_name):
    """The globals of a tutorial that keeps its own kernel (01-aliasing-basics.py), run as a
    script without its main."""
    return types.SimpleNamespace(**runpy.run_path(str(TUTORIALS / file_name)))


# A Hopper attention key's variant of its head dim's default configuration.
ATTENTION_VARIANTS = {
    "": {},
    "_store_o_during_next_s": {"overlap_o_store": True, "store_o_during_next_s": True},
}


def attention_config(key):
    """(head dim, tutorial Config) of a Hopper attention key: hopper_attention_d<head dim>,
    then a suffix of ATTENTION_VARIANTS."""
    attention = kernel_module("hopper_flash_attention")
    match = re.fullmatch(r"hopper_attention_d(\d+)(.*)", key)
    head_dim = int(match[1])
    return head_dim, attention.benchmark_configs(head_dim)[0].replace(
        **ATTENTION_VARIANTS[match[2]]
    )


def gemm_config(key):
    """The tutorial Config of a Hopper GEMM key: hopper_gemm, hopper_gemm_persistent,
    hopper_gemm_pipelined (one warpgroup, no warp specialization, C over the ring), or
    hopper_gemm_staggered (persistent, the second consumer's last two K steps after the first
    one's tile; two stages, which fit with C beside the ring on every Triton)."""
    gemm = kernel_module("hopper_gemm")
    if key.endswith("staggered"):
        return gemm.Config(128, 256, 64, 2, alias_c=False, persistent=True, stagger=2)
    if key.endswith("persistent"):
        return gemm.Config(128, 128, 64, 3, alias_c=False, persistent=True)
    if key.endswith("pipelined"):
        return gemm.Config(128, 64, 64, 6, alias_c=True, warp_specialize=False)
    return gemm.default_config()


def fused_mlp_config(key):
    """The Config of a fused MLP key: hopper_fused_mlp_<layout> (the layout's default), or
    hopper_fused_mlp_chunks: 64 x 128 tiles whose consumers take every other hidden chunk
    (four chunks at hidden 512: the epilogue over the rings' first stage follows both
    consumers' last chunks)."""
    mlp = kernel_module("hopper_fused_mlp")
    variant = key.rsplit("_", 1)[1]
    if variant == "chunks":
        return mlp.CHUNK_SPLIT_CONFIGS["shared"][0]
    return mlp.default_config(variant)


def kernel(key):
    """(tlx.ASTSource, target, options, values) of a tutorial kernel the check runs."""
    if key.startswith("hopper_attention_d"):
        attention = kernel_module("hopper_flash_attention")
        head_dim, config = attention_config(key)
        source = attention.kernel_source(config, head_dim, causal=True)
        return (
            source,
            attention.SM90A,
            attention.COMPILE_OPTIONS,
            {"seq_len": 512, "batch_heads": 1},
        )
    if key.startswith("hopper_attention_backward_d"):
        from tlx_kernels.hopper import attention_backward

        head_dim = int(key.rsplit("d", 1)[1])
        config = attention_backward.autotune_space(head_dim)[0]
        source = attention_backward.kernel_source(config, head_dim, causal=True)
        values = {"seq_len": 300, "group": 2, "batch_kv_heads": 1}
        return source, attention_backward.SM90A, config.compile_options, values
    if key.startswith("blackwell_attention_d"):
        attention = kernel_module("blackwell_flash_attention")
        head_dim = int(key.rsplit("d", 1)[1])
        source = attention.kernel_source(head_dim, attention.num_stages(head_dim), causal=True)
        return source, attention.SM100A, attention.COMPILE_OPTIONS, {"seq_len": 512}
    if key.startswith("hopper_gemm"):
        gemm = kernel_module("hopper_gemm")
        config = gemm_config(key)
        source = gemm.kernel_source(config)
        values = {"M": 256, "N": 512, "K": 512, "GROUP_M": config.group_m}
        return source, gemm.SM90A, gemm.COMPILE_OPTIONS, values
    if key.startswith("hopper_fused_mlp"):
        mlp = kernel_module("hopper_fused_mlp")
        values = {"tokens": 256, "d_model": 512, "hidden": 512}
        config = fused_mlp_config(key)
        return mlp.kernel_source(config), mlp.SM90A, mlp.COMPILE_OPTIONS, values
    raise KeyError(key)


# The tutorial kernels (keys of kernel()) that must check clean.
TUTORIAL_KERNELS = (
    "hopper_attention_d64",
    "hopper_attention_d128",
    "hopper_attention_d64_store_o_during_next_s",
    "hopper_attention_d128_store_o_during_next_s",
    "hopper_attention_backward_d64",
    "hopper_attention_backward_d128",
    "hopper_gemm",
    "hopper_gemm_persistent",
    "hopper_gemm_pipelined",
    "hopper_gemm_staggered",
    "hopper_fused_mlp_shared",
    "hopper_fused_mlp_separate",
    "hopper_fused_mlp_phases",
    "hopper_fused_mlp_chunks",
    "blackwell_attention_d64",
    "blackwell_attention_d128",
)

HOPPER_ATTENTION = "attention_kernel.py"
COMMON = "attention_common.py"
BLACKWELL_ATTENTION = "flash_attention.py"
FUSED_MLP = "fused_mlp_kernel.py"
HOPPER_COMMON = "common.py"


@functools.cache
def _statements(file_name: str) -> tuple[tuple[int, int], ...]:
    tree = ast.parse(Path(file_name).read_text())
    return tuple(
        (node.lineno, node.end_lineno) for node in ast.walk(tree) if isinstance(node, ast.stmt)
    )


def statement_line(file_name: str, line: int) -> int:
    """The first line of the innermost statement of ``file_name`` that holds ``line``:
    Triton versions place the location of a call written over several lines on
    different lines of it (3.9 its first, 3.6 the line of an argument)."""
    if not Path(file_name).is_file():
        return line
    spans = [(start, end) for start, end in _statements(file_name) if start <= line <= end]
    return min(spans, key=lambda span: span[1] - span[0])[0] if spans else line


def line_of(file_name: str, text: str, function: str | None = None) -> int:
    """The first line of the statement of the kernel source ``file_name`` (within ``function``
    if given) whose source holds ``text`` on exactly one line: seeds name their operations by
    their code, so that they follow the kernel when its lines move."""
    path = KERNEL_SOURCES[file_name]
    lines = path.read_text().splitlines()
    first, last = 1, len(lines)
    if function is not None:
        (definition,) = (
            node
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.FunctionDef) and node.name == function
        )
        first, last = definition.lineno, definition.end_lineno
    found = [number for number in range(first, last + 1) if text in lines[number - 1]]
    if len(found) != 1:
        raise LookupError(f"{text!r} is on {len(found)} lines of {file_name}, not one")
    return statement_line(str(path), found[0])


SEEDS = (
    Seed(
        "q_ready wait dropped",
        "hopper_attention_d64",
        Operation(
            "ttng.wait_barrier",
            HOPPER_ATTENTION,
            line_of(
                HOPPER_ATTENTION,
                "mbarrier.wait(q_ready.index(q_index), (tile_count // Q_BUFFERS) & 1)",
            ),
        ),
        None,
        frozenset(
            {
                (
                    COMMON,
                    line_of(COMMON, "q_tiles.index(first + tile).reshape([1, Q_ROWS, HEAD_DIM])"),
                ),
                (HOPPER_ATTENTION, line_of(HOPPER_ATTENTION, "o_smem.store(o)")),
            }
        ),
        "a consumer no longer waits for its Q tile: the next tile's Q load (over the O the "
        "consumer stores) is not ordered after the O store",
    ),
    Seed(
        "O store wait dropped",
        "hopper_attention_d64",
        Operation(
            "ttng.async_tma_store_wait",
            HOPPER_ATTENTION,
            line_of(HOPPER_ATTENTION, "tma.store_wait(0)", function="_attend_rows"),
        ),
        None,
        frozenset(
            {
                (
                    HOPPER_ATTENTION,
                    line_of(HOPPER_ATTENTION, "tma_store(desc_o, [off_bh, rows, 0], o_smem"),
                ),
                (
                    COMMON,
                    line_of(COMMON, "q_tiles.index(first + tile).reshape([1, Q_ROWS, HEAD_DIM])"),
                ),
            }
        ),
        "q_empty is arrived while the TMA store still reads O: the next Q load overwrites it",
    ),
    Seed(
        "q_empty wait dropped in the loader",
        "hopper_attention_d64",
        Operation(
            "ttng.wait_barrier",
            HOPPER_ATTENTION,
            line_of(HOPPER_ATTENTION, "mbarrier.wait(q_empty.index(first_q + c)"),
        ),
        None,
        frozenset(
            {
                (HOPPER_ATTENTION, line_of(HOPPER_ATTENTION, "o_smem.store(o)")),
                (
                    COMMON,
                    line_of(COMMON, "q_tiles.index(first + tile).reshape([1, Q_ROWS, HEAD_DIM])"),
                ),
            }
        ),
        "a TMA load into a Q buffer whose shared sibling O is still written and stored",
    ),
    Seed(
        "fence dropped after the O store",
        "hopper_attention_d64",
        Operation(
            "ttng.fence_async_shared",
            HOPPER_ATTENTION,
            line_of(HOPPER_ATTENTION, "fence_async_shared()", function="_store_o"),
        ),
        None,
        frozenset(
            {
                (HOPPER_ATTENTION, line_of(HOPPER_ATTENTION, "o_smem.store(o)")),
                (
                    COMMON,
                    line_of(COMMON, "q_tiles.index(first + tile).reshape([1, Q_ROWS, HEAD_DIM])"),
                ),
            }
        ),
        "O's local_store (generic proxy) over a Q buffer is not fenced before the TMA load "
        "(async proxy) of the next Q into it, though the mbarriers order them",
    ),
    Seed(
        "tile_done wait dropped",
        "hopper_attention_d128",
        Operation(
            "ttng.wait_barrier",
            HOPPER_ATTENTION,
            line_of(
                HOPPER_ATTENTION,
                "mbarrier.wait(tile_done, tile_count & 1)",
                function="_store_o",
            ),
        ),
        None,
        frozenset(
            {
                (HOPPER_ATTENTION, line_of(HOPPER_ATTENTION, "o_smem.store(o)")),
                (
                    HOPPER_ATTENTION,
                    line_of(HOPPER_ATTENTION, "q, k_tiles.index(stage).permute((1, 0)), s_zero"),
                ),
            }
        ),
        "O is written over the last K stage before the other consumer's last S has read it",
    ),
    Seed(
        "kv_empty arrive before the O store's wait",
        "hopper_attention_d128",
        Operation(
            "ttng.async_tma_store_wait",
            HOPPER_ATTENTION,
            line_of(HOPPER_ATTENTION, "tma.store_wait(0)", function="_release_after_store"),
        ),
        Operation(
            "ttng.arrive_barrier",
            HOPPER_ATTENTION,
            line_of(
                HOPPER_ATTENTION,
                "mbarrier.arrive(kv_empty.index(index))",
                function="_release_after_store",
            ),
        ),
        frozenset(
            {
                (
                    HOPPER_ATTENTION,
                    line_of(HOPPER_ATTENTION, "tma_store(desc_o, [off_bh, rows, 0], o_smem"),
                ),
                (COMMON, line_of(COMMON, "k_tiles.index(stage).reshape([1, BLOCK_N, HEAD_DIM])")),
            }
        ),
        "the stage under O is released while the TMA store still reads O: the loader's TMA "
        "load of the next K into it races with the store",
    ),
    Seed(
        "kv_empty wait dropped in the loader",
        "hopper_attention_d128",
        # The second load_kv_blocks of the loader's tile (the first loads the blocks that go
        # before Q, none with Q in registers).
        Operation(
            "ttng.wait_barrier",
            COMMON,
            line_of(COMMON, "mbarrier.wait(kv_empty.index(stage)"),
            nth=1,
        ),
        None,
        frozenset(
            {(COMMON, line_of(COMMON, "k_tiles.index(stage).reshape([1, BLOCK_N, HEAD_DIM])"))}
        ),
        "the loader refills a K/V stage before the consumers released it: its TMA load of K "
        "lands on the K it loaded a ring earlier (one buffer index: an ordinary pipeline race)",
        # The loader runs rings ahead: a consumer's wait by parity may sleep for ever.
        runs_on_gpu=False,
    ),
    Seed(
        "fused MLP: the loader's empty2 wait dropped",
        "hopper_fused_mlp_shared",
        Operation(
            "ttng.wait_barrier",
            FUSED_MLP,
            line_of(FUSED_MLP, "mbarrier.wait(state.empty2.index(stage)"),
        ),
        None,
        frozenset(
            {
                (
                    FUSED_MLP,
                    line_of(
                        FUSED_MLP,
                        "tma_load(desc_w2, [off_h, state.off_n], state.ready2.index(stage)",
                    ),
                ),
                (
                    HOPPER_COMMON,
                    line_of(
                        HOPPER_COMMON, "acc = warpgroup_mma(a, b_ring.index(stage)", "ring_matmul"
                    ),
                ),
            }
        ),
        "the phases share one ring: the TMA load of W2 into a stage no longer waits for the "
        "phase-1 warpgroup_mma still reading X and W1 from that stage's bytes",
    ),
    Seed(
        "fused MLP phases: the drain before W2 dropped",
        "hopper_fused_mlp_phases",
        Operation(
            "ttng.wait_barrier",
            FUSED_MLP,
            line_of(FUSED_MLP, "mbarrier.wait(state.empty1.index(last1 % STAGES1)"),
        ),
        None,
        frozenset(
            {
                (
                    FUSED_MLP,
                    line_of(
                        FUSED_MLP,
                        "tma_load(desc_w2, [off_h, state.off_n], state.ready2.index(stage)",
                    ),
                ),
                (
                    HOPPER_COMMON,
                    line_of(
                        HOPPER_COMMON, "acc = warpgroup_mma(a, b_ring.index(stage)", "ring_matmul"
                    ),
                ),
            }
        ),
        "the W2 ring lies over the X/W1 ring's bytes: the TMA load of W2 no longer waits for "
        "the phase-1 warpgroup_mma still reading X and W1 there",
    ),
    Seed(
        "fused MLP phases: the drain after W2 dropped",
        "hopper_fused_mlp_phases",
        Operation(
            "ttng.wait_barrier",
            FUSED_MLP,
            line_of(FUSED_MLP, "mbarrier.wait(state.empty2.index(last2 % STAGES2)"),
        ),
        None,
        frozenset(
            {
                (
                    FUSED_MLP,
                    line_of(
                        FUSED_MLP,
                        "tma_load(desc_x, [state.off_m, off_k], state.ready1.index(stage)",
                    ),
                ),
                (
                    FUSED_MLP,
                    line_of(
                        FUSED_MLP,
                        "acc_y = warpgroup_mma(h_tile, state.w2_ring.index(stage), acc_y",
                    ),
                ),
            }
        ),
        "the X/W1 ring lies under the W2 ring's bytes: the next chunk's TMA load of X no "
        "longer waits for the phase-2 warpgroup_mma still reading W2 there",
    ),
    Seed(
        "fused MLP chunks: the rings_read wait dropped",
        "hopper_fused_mlp_chunks",
        Operation(
            "ttng.wait_barrier",
            FUSED_MLP,
            line_of(FUSED_MLP, "mbarrier.wait(state.rings_read, 0)"),
            nth=1,
        ),
        None,
        frozenset(
            {
                (FUSED_MLP, line_of(FUSED_MLP, "partial.store(acc_y)")),
                (
                    HOPPER_COMMON,
                    line_of(
                        HOPPER_COMMON, "acc = warpgroup_mma(a, b_ring.index(stage)", "ring_matmul"
                    ),
                ),
            }
        ),
        "consumer 1 writes its partial Y over the rings' first stage while consumer 0's last "
        "chunk's phase-1 product may still read it",
    ),
    Seed(
        "fused MLP chunks: the partial_written wait dropped",
        "hopper_fused_mlp_chunks",
        Operation(
            "ttng.wait_barrier",
            FUSED_MLP,
            line_of(FUSED_MLP, "mbarrier.wait(state.partial_written, 0)"),
        ),
        None,
        frozenset(
            {
                (FUSED_MLP, line_of(FUSED_MLP, "partial.store(acc_y)")),
                (FUSED_MLP, line_of(FUSED_MLP, "acc_y = acc_y + partial.load(acc_y.type.layout)")),
            }
        ),
        "consumer 0 reads consumer 1's partial Y before it is written",
    ),
    Seed(
        "alpha_ready wait dropped",
        "blackwell_attention_d128",
        Operation(
            "ttng.wait_barrier",
            BLACKWELL_ATTENTION,
            line_of(BLACKWELL_ATTENTION, "mbarrier.wait(alpha_ready.index(g), (j - 1) & 1)"),
        ),
        None,
        frozenset(
            {
                (
                    BLACKWELL_ATTENTION,
                    line_of(
                        BLACKWELL_ATTENTION,
                        "gl.sum(alpha_tiles.index(g).load(column_layout), 1)",
                    ),
                ),
                (
                    BLACKWELL_ATTENTION,
                    line_of(BLACKWELL_ATTENTION, "k_tiles.index(stage).permute((1, 0)),"),
                ),
            }
        ),
        "the correction partition's TMEM load of alpha is not ordered before the next "
        "S = Q K^T, which tcgen05 writes over alpha",
    ),
    Seed(
        "p_ready wait dropped",
        "blackwell_attention_d128",
        Operation(
            "ttng.wait_barrier",
            BLACKWELL_ATTENTION,
            line_of(
                BLACKWELL_ATTENTION,
                "mbarrier.wait(p_ready.index(g * NUM_MMA_SLICES + sl), block & 1)",
            ),
            nth=1,
        ),
        None,
        frozenset(
            {
                (
                    BLACKWELL_ATTENTION,
                    line_of(BLACKWELL_ATTENTION, "p_tiles.index(g * NUM_MMA_SLICES + 1).store("),
                ),
                (
                    BLACKWELL_ATTENTION,
                    line_of(BLACKWELL_ATTENTION, "k_tiles.index(stage).permute((1, 0)),"),
                ),
            }
        ),
        "the MMA partition no longer waits for P's second slice: the softmax's TMEM store "
        "of it races with the next S = Q K^T written over it",
    ),
    Seed(
        "s_ready wait dropped",
        "blackwell_attention_d128",
        Operation(
            "ttng.wait_barrier",
            BLACKWELL_ATTENTION,
            line_of(BLACKWELL_ATTENTION, "mbarrier.wait(s_ready.index(g), j & 1)"),
        ),
        None,
        frozenset(
            {
                (
                    BLACKWELL_ATTENTION,
                    line_of(
                        BLACKWELL_ATTENTION,
                        "alpha_tiles.index(g).store(gl.convert_layout(alpha[:, None]",
                    ),
                ),
                (
                    BLACKWELL_ATTENTION,
                    line_of(BLACKWELL_ATTENTION, "k_tiles.index(stage).permute((1, 0)),"),
                ),
            }
        ),
        "the softmax no longer waits for S: its TMEM store of alpha over S races with the "
        "tcgen05_mma that writes S",
    ),
)


def access_lines(hazard) -> frozenset:
    """{(file, statement line)} of a hazard's two accesses, to compare with ``expected``."""
    return frozenset(
        (Path(access.file_name).name, statement_line(access.file_name, access.line))
        for access in (hazard.first, hazard.second)
    )


def _find(lines, module, operation: Operation) -> int:
    from tlx.hazards import ttgir as _ttgir

    found = []
    for number, line in enumerate(lines):
        text = line.strip()
        if operation.name not in text:
            continue
        _, location = _ttgir._strip_location(text)
        file_name, line_number, _ = module.source_location(location)
        if (
            Path(file_name).name == operation.file
            and statement_line(file_name, line_number) == operation.line
        ):
            found.append(number)
    if len(found) <= operation.nth:
        raise LookupError(f"{operation} is not in the kernel's TTGIR")
    return found[operation.nth]


def mutate(text: str, seed: Seed) -> str:
    """The TTGIR ``text`` with the seed's operation dropped or moved (the first
    operation of the mutated text that matches ``moved_after`` is the anchor)."""
    from tlx.hazards import ttgir as _ttgir

    module = _ttgir.parse_module(text)
    lines = text.splitlines()
    moved = lines.pop(_find(lines, module, seed.operation))
    if seed.moved_after is not None:
        target = _find(lines, module, seed.moved_after)
        indent = re.match(r"\s*", lines[target]).group(0)
        lines.insert(target + 1, indent + moved.strip())
    return "\n".join(lines)
