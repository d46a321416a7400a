// CUTLASS sm_90a collectives in odnn's split filter-gradient kernel: f16 and bf16 data,
// fp32 partial sums, 6 stages; 128 x 128 tiles (K > 64), and 64 x 64 ones for K <= 64
// (C = 64 fills a 64-column tile, where a 128-column one is half empty; two CTAs per SM).
#include "cuda/conv_sm90_wgrad_split.cuh"

using Tile = cute::Shape<cute::_128, cute::Shape<cute::_128>, cute::Shape<cute::_64>>;
using TileM64 = cute::Shape<cute::_64, cute::Shape<cute::_64>, cute::Shape<cute::_64>>;
ODNN_SM90_WGRAD_SPLIT_INSTANCE(wgrad_split_f16, cutlass::half_t, Tile, 6)
ODNN_SM90_WGRAD_SPLIT_INSTANCE(wgrad_split_bf16, cutlass::bfloat16_t, Tile, 6)
ODNN_SM90_WGRAD_SPLIT_INSTANCE(wgrad_split_m64_f16, cutlass::half_t, TileM64, 6)
ODNN_SM90_WGRAD_SPLIT_INSTANCE(wgrad_split_m64_bf16, cutlass::bfloat16_t, TileM64, 6)
