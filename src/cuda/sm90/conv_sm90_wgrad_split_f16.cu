// CUTLASS sm_90a collectives in odnn's split filter-gradient kernel: f16 data, fp32 partial
// sums, 128 x 128 tiles, 6 stages (K > 64).
#include "cuda/conv_sm90_wgrad_split.cuh"

using Tile = cute::Shape<cute::_128, cute::Shape<cute::_128>, cute::Shape<cute::_64>>;
ODNN_SM90_WGRAD_SPLIT_INSTANCE(wgrad_split_f16, cutlass::half_t, Tile, 6)
