// CUTLASS 2.x sm_80 implicit-GEMM convolution: wgrad, bf16 data, fp32 accumulation.
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_CONV_INSTANCE(wgrad_bf16, kWgrad, cutlass::bfloat16_t)
