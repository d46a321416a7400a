// CUTLASS sm_90a GEMM for 1 x 1 / im2col convolutions: fprop (A, B K-contiguous), bf16.
#include "cuda/conv_sm90_gemm.cuh"

ODNN_SM90_GEMM_INSTANCE(gemm_fprop_bf16, cutlass::bfloat16_t, cutlass::bfloat16_t, RowMajor, ColumnMajor)
