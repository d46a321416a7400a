// CUTLASS 2.x sm_80 implicit-GEMM convolution: dgrad; f16 and bf16 data with fp32
// accumulation, FLOAT data in TF32 multiplies, and FLOAT in fp32 FMAs on the CUDA cores.
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_CONV_INSTANCE(dgrad_f16, kDgrad, cutlass::half_t)
ODNN_SM80_CONV_INSTANCE(dgrad_bf16, kDgrad, cutlass::bfloat16_t)
ODNN_SM80_CONV_INSTANCE(dgrad_tf32, kDgrad, float)
ODNN_SM80_FMA_INSTANCE(dgrad_f32, kDgrad)
