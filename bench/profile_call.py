"""One call of a grid row's contender, for Nsight Compute: why a short row trails.

    ncu --profile-from-start off --clock-control none \
        --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum \
        python bench/profile_call.py attention ours 512 128 [--causal] [--dtype bf16]
    ... python bench/profile_call.py attention cudnn 512 128
    ... python bench/profile_call.py gemm ours 1024 1024 1024 [--config 128,64,7]
    ... python bench/profile_call.py gemm cublas 1024 1024 1024

The contender runs a few times (compiling, tuning), then once between cudaProfilerStart and
cudaProfilerStop, so that ``--profile-from-start off`` profiles that call's kernels alone.
Attention rows have the grid's shape (B x N = 32768 tokens, H = 16, fp16 unless --dtype);
``ours`` is the autotuned kernel (tuned for this row first) unless ``--config`` names the
tutorial's configuration: BLOCK_M,BLOCK_N,stages[,key=value...] with the ``Config`` fields.

What the profiles said on an H100 (README.md, Known limits): at N = 512 both attention kernels
move the same DRAM bytes (403 MB read and 125 MB written at D = 128) and cuDNN sustains more
of the DRAM's bandwidth through the call; cuBLAS's GEMMs at 1024 and 2048 cubed are clusters of
two CTAs (kernel names ..._1x2_..., cluster size 2), whose TMA loads are multicast to both.
"""

import argparse

import torch
from tlx_kernels.hopper import attention as fa
from tlx_kernels.hopper import gemm
from torch.nn.attention import SDPBackend, sdpa_kernel

GRID_TOKENS = 32768
GRID_HEADS = 16
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
WARMUP_CALLS = 5


def _config_fields(text):
    """(positional ints, keyword values) of a --config string."""
    positional, keywords = [], {}
    for item in text.split(","):
        if "=" in item:
            name, value = item.split("=")
            keywords[name] = value == "True" if value in ("True", "False") else int(value)
        else:
            positional.append(int(item))
    return positional, keywords


def attention_call(who, seq_len, head_dim, causal, dtype, config):
    shape = (GRID_TOKENS // seq_len, GRID_HEADS, seq_len, head_dim)
    q, k, v = (torch.randn(shape, device="cuda", dtype=dtype) for _ in range(3))
    if who == "cudnn":

        def call():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

        return call
    if config is None:
        return lambda: fa.autotuned_attention(q, k, v, causal)
    positional, keywords = _config_fields(config)
    chosen = fa.Config(*positional, **{"alias_o": True, **keywords})
    return lambda: fa.attention(q, k, v, causal, config=chosen)


def gemm_call(who, M, N, K, dtype, config):
    a = torch.randn(M, K, device="cuda", dtype=dtype)
    b = torch.randn(K, N, device="cuda", dtype=dtype)
    if who == "cublas":
        return lambda: a @ b
    if config is None:
        return lambda: gemm.autotuned_matmul(a, b)
    positional, keywords = _config_fields(config)
    block_n, block_k, stages = positional
    chosen = gemm.Config(128, block_n, block_k, stages, **{"alias_c": False, **keywords})
    return lambda: gemm.matmul(a, b, config=chosen)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel", choices=("attention", "gemm"))
    parser.add_argument("who", choices=("ours", "cudnn", "cublas"))
    parser.add_argument("sizes", type=int, nargs="+", help="attention: N D; gemm: M N K")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--dtype", choices=tuple(DTYPES), default="fp16")
    parser.add_argument(
        "--config",
        help="ours: the tutorial's configuration (attention: BLOCK_M,BLOCK_N,stages[,k=v]; "
        "gemm: BLOCK_N,BLOCK_K,stages[,k=v]) instead of the autotuned one",
    )
    args = parser.parse_args()
    dtype = DTYPES[args.dtype]
    if args.kernel == "attention":
        if args.who == "cublas" or len(args.sizes) != 2:
            parser.error("attention takes ours or cudnn and two sizes, N and D")
        call = attention_call(args.who, *args.sizes, args.causal, dtype, args.config)
    else:
        if args.who == "cudnn" or len(args.sizes) != 3:
            parser.error("gemm takes ours or cublas and three sizes, M N K")
        call = gemm_call(args.who, *args.sizes, dtype, args.config)
    for _ in range(WARMUP_CALLS):
        call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    call()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
