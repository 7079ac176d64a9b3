"""The Hopper (sm_90a) kernels: attention, GEMM and fused MLP, each a kernel module and a host
module, and what they share (common, attention_common, attention_schedule)."""
