// CUTLASS 2.x sm_80 implicit-GEMM convolution: fprop, FLOAT data, fp32 FMAs (CUDA cores).
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_FMA_INSTANCE(fprop_f32, kFprop)
