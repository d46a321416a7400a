// CUTLASS 2.x sm_80 implicit-GEMM convolution: dgrad, bf16 data, fp32 accumulation.
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_CONV_INSTANCE(dgrad_bf16, kDgrad, cutlass::bfloat16_t)
