// CUTLASS sm_90a GEMMs for 1 x 1 / im2col convolutions: dgrad (A K-contiguous, B
// N-contiguous), f16 and bf16, written in the data type or in fp32 (the im2col gradient,
// summed again by col2im).
#include "cuda/conv_sm90_gemm.cuh"

ODNN_SM90_GEMM_INSTANCE(gemm_dgrad_f16, cutlass::half_t, cutlass::half_t, RowMajor, RowMajor)
ODNN_SM90_GEMM_INSTANCE(gemm_dgrad_bf16, cutlass::bfloat16_t, cutlass::bfloat16_t, RowMajor, RowMajor)
ODNN_SM90_GEMM_INSTANCE(gemm_dgrad_f16_f32, cutlass::half_t, float, RowMajor, RowMajor)
ODNN_SM90_GEMM_INSTANCE(gemm_dgrad_bf16_f32, cutlass::bfloat16_t, float, RowMajor, RowMajor)
