// CUTLASS 2.x sm_80 implicit-GEMM convolution: fprop, f16 data, fp32 accumulation.
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_CONV_INSTANCE(fprop_f16, kFprop, cutlass::half_t)
