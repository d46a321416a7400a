// CUTLASS sm_90a implicit-GEMM convolution: fprop, bf16 data, fp32 accumulation.
#include "cuda/conv_sm90_kernel.cuh"

using Tile = cute::Shape<cute::_128, cute::_128, cute::Shape<cute::_64>>;
ODNN_SM90_CONV_INSTANCE(fprop_bf16, kFprop, cutlass::bfloat16_t, Tile)
