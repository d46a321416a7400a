// CUTLASS sm_90a GEMM for 1 x 1 / im2col convolutions: dgrad (A K-contiguous, B N-contiguous), bf16.
#include "cuda/conv_sm90_gemm.cuh"

ODNN_SM90_GEMM_INSTANCE(gemm_dgrad_bf16, cutlass::bfloat16_t, cutlass::bfloat16_t, RowMajor, RowMajor)
