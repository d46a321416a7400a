// CUTLASS 2.x sm_80 implicit-GEMM convolution: wgrad; f16 and bf16 data with fp32
// accumulation, FLOAT data in TF32 multiplies, and FLOAT in fp32 FMAs on the CUDA cores.
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_CONV_INSTANCE(wgrad_f16, kWgrad, cutlass::half_t)
ODNN_SM80_CONV_INSTANCE(wgrad_bf16, kWgrad, cutlass::bfloat16_t)
ODNN_SM80_CONV_INSTANCE(wgrad_tf32, kWgrad, float)
ODNN_SM80_FMA_INSTANCE(wgrad_f32, kWgrad)
