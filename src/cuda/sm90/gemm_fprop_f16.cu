// CUTLASS sm_90a GEMM for 1 x 1 / im2col convolutions: fprop (A, B K-contiguous), f16.
#include "cuda/conv_sm90_gemm.cuh"

ODNN_SM90_GEMM_INSTANCE(gemm_fprop_f16, cutlass::half_t, cutlass::half_t, RowMajor, ColumnMajor)
