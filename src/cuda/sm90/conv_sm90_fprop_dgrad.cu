// CUTLASS sm_90a implicit-GEMM convolutions: fprop and dgrad, f16 and bf16 data, fp32
// accumulation. (Instances share translation units, four at most: the CUTLASS headers'
// parse and the shared templates are most of a unit's compile time, ~35 of its 65 s.)
#include "cuda/conv_sm90_kernel.cuh"

using Tile = cute::Shape<cute::_128, cute::_128, cute::Shape<cute::_64>>;
ODNN_SM90_CONV_INSTANCE(fprop_f16, kFprop, cutlass::half_t, Tile)
ODNN_SM90_CONV_INSTANCE(fprop_bf16, kFprop, cutlass::bfloat16_t, Tile)
ODNN_SM90_CONV_INSTANCE(dgrad_f16, kDgrad, cutlass::half_t, Tile)
ODNN_SM90_CONV_INSTANCE(dgrad_bf16, kDgrad, cutlass::bfloat16_t, Tile)
