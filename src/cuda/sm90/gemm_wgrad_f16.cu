// CUTLASS sm_90a GEMM for 1 x 1 / im2col convolutions: wgrad (A M-contiguous, B N-contiguous), f16,
// fp32 partial sums.
#include "cuda/conv_sm90_gemm.cuh"

ODNN_SM90_GEMM_INSTANCE(gemm_wgrad_f16, cutlass::half_t, float, ColumnMajor, RowMajor)
