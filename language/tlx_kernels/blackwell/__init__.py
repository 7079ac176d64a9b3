"""The Blackwell (sm_100a) kernels: Flash Attention with S/P in shared TMEM, and a 2-CTA MMA."""
