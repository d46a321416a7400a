// CUTLASS 2.x sm_80 implicit-GEMM convolution: dgrad, FLOAT data, TF32 multiplies, fp32 accumulation.
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_CONV_INSTANCE(dgrad_tf32, kDgrad, float)
