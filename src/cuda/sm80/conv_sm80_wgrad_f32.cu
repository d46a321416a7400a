// CUTLASS 2.x sm_80 implicit-GEMM convolution: wgrad, FLOAT data, fp32 FMAs (CUDA cores).
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_FMA_INSTANCE(wgrad_f32, kWgrad)
