// CUTLASS sm_90a implicit-GEMM convolution: wgrad, f16 and bf16 data, fp32 accumulation;
// 128 x 128 tiles, and 64 x 128 ones for filter gradients with at most 64 output channels.
#include "cuda/conv_sm90_kernel.cuh"

using Tile = cute::Shape<cute::_128, cute::Shape<cute::_128>, cute::Shape<cute::_64>>;
using TileM64 = cute::Shape<cute::_64, cute::Shape<cute::_128>, cute::Shape<cute::_64>>;
ODNN_SM90_CONV_INSTANCE(wgrad_f16, kWgrad, cutlass::half_t, Tile)
ODNN_SM90_CONV_INSTANCE(wgrad_bf16, kWgrad, cutlass::bfloat16_t, Tile)
ODNN_SM90_CONV_INSTANCE(wgrad_m64_f16, kWgrad, cutlass::half_t, TileM64)
ODNN_SM90_CONV_INSTANCE(wgrad_m64_bf16, kWgrad, cutlass::bfloat16_t, TileM64)
