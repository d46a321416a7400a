// CUTLASS sm_90a implicit-GEMM convolution: wgrad, f16 data, fp32 accumulation.
#include "cuda/conv_sm90_kernel.cuh"

using Tile = cute::Shape<cute::_128, cute::Shape<cute::_128>, cute::Shape<cute::_64>>;
ODNN_SM90_CONV_INSTANCE(wgrad_f16, kWgrad, cutlass::half_t, Tile)
