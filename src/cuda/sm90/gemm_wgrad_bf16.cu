// CUTLASS sm_90a GEMM for 1 x 1 / im2col convolutions: wgrad (A M-contiguous, B N-contiguous), bf16,
// fp32 partial sums.
#include "cuda/conv_sm90_gemm.cuh"

ODNN_SM90_GEMM_INSTANCE(gemm_wgrad_bf16, cutlass::bfloat16_t, float, ColumnMajor, RowMajor)
