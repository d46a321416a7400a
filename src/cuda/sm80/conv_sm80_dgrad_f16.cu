// CUTLASS 2.x sm_80 implicit-GEMM convolution: dgrad, f16 data, fp32 accumulation.
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_CONV_INSTANCE(dgrad_f16, kDgrad, cutlass::half_t)
