// CUTLASS sm_90a GEMM for im2col convolutions: dgrad (A K-contiguous, B N-contiguous), f16,
// fp32 output (the im2col gradient, summed again by col2im).
#include "cuda/conv_sm90_gemm.cuh"

ODNN_SM90_GEMM_INSTANCE(gemm_dgrad_f16_f32, cutlass::half_t, float, RowMajor, RowMajor)
