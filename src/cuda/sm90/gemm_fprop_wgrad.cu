// CUTLASS sm_90a GEMMs for 1 x 1 / im2col convolutions, f16 and bf16: fprop (A, B
// K-contiguous) and wgrad (A M-contiguous, B N-contiguous, fp32 partial sums).
#include "cuda/conv_sm90_gemm.cuh"

ODNN_SM90_GEMM_INSTANCE(gemm_fprop_f16, cutlass::half_t, cutlass::half_t, RowMajor, ColumnMajor)
ODNN_SM90_GEMM_INSTANCE(gemm_fprop_bf16, cutlass::bfloat16_t, cutlass::bfloat16_t, RowMajor, ColumnMajor)
ODNN_SM90_GEMM_INSTANCE(gemm_wgrad_f16, cutlass::half_t, float, ColumnMajor, RowMajor)
ODNN_SM90_GEMM_INSTANCE(gemm_wgrad_bf16, cutlass::bfloat16_t, float, ColumnMajor, RowMajor)
