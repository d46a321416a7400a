// CUTLASS sm_90a GEMM for 1 x 1 / im2col convolutions: dgrad (A K-contiguous, B N-contiguous), f16.
#include "cuda/conv_sm90_gemm.cuh"

ODNN_SM90_GEMM_INSTANCE(gemm_dgrad_f16, cutlass::half_t, cutlass::half_t, RowMajor, RowMajor)
