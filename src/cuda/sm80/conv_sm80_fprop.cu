// CUTLASS 2.x sm_80 implicit-GEMM convolution: fprop; f16 and bf16 data with fp32
// accumulation, FLOAT data in TF32 multiplies, and FLOAT in fp32 FMAs on the CUDA cores.
#include "cuda/conv_sm80_kernel.cuh"

ODNN_SM80_CONV_INSTANCE(fprop_f16, kFprop, cutlass::half_t)
ODNN_SM80_CONV_INSTANCE(fprop_bf16, kFprop, cutlass::bfloat16_t)
ODNN_SM80_CONV_INSTANCE(fprop_tf32, kFprop, float)
ODNN_SM80_FMA_INSTANCE(fprop_f32, kFprop)
