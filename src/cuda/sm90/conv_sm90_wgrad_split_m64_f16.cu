// CUTLASS sm_90a collectives in odnn's split filter-gradient kernel: f16 data, fp32 partial
// sums, 64 x 64 tiles (K <= 64: C = 64 fills a 64-column tile, where a 128-column one is
// half empty), 6 stages (two CTAs per SM).
#include "cuda/conv_sm90_wgrad_split.cuh"

using Tile = cute::Shape<cute::_64, cute::Shape<cute::_64>, cute::Shape<cute::_64>>;
ODNN_SM90_WGRAD_SPLIT_INSTANCE(wgrad_split_m64_f16, cutlass::half_t, Tile, 6)
