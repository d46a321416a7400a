// CUTLASS 2.x sm_80 implicit-GEMM convolution: wgrad, f16 data, fp32 accumulation.
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_CONV_INSTANCE(wgrad_f16, kWgrad, cutlass::half_t)
