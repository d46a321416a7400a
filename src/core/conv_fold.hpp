// cudnnGetFoldedConvBackwardDataDescriptors: a strided backward-data convolution written
// as a stride-1 one on folded tensors, with the transforms that get there and back.
//
// Along a spatial dim with stride s > 1 (pad p, filter R, dx size H, dy size Ho), dx is
// padded by p in front and folded by s: its element i lands in phase b = (i + p) % s,
// position q = (i + p) / s, the phases moving into channels (phase-major, the order
// cudnnTransformTensorEx folds in). The filter, zero-padded at the end to Rq * s taps
// (Rq = ceil(R / s)), is folded the same way: phase b of it holds taps b, s + b, 2s + b...
// A stride-s cross-correlation dgrad sends dy[o] * w[r] to dx[o * s + r - p]; with
// r = m * s + b that is folded position q = o + m of phase b: a stride-1, unpadded
// dgrad of the folded filter over dy. The folded dx has Hq = max(Ho + Rq - 1,
// ceil((H + p) / s)) positions (every contribution and every dx element has one); dy is
// zero-padded at the end to Hq - Rq + 1. Unfolding crops the p leading and the
// Hq * s - H - p trailing positions. Dims with stride 1 stay as they are (padding and
// dilation kept by the folded convolution).
//
// Not expressible, hence NOT_SUPPORTED: dilation > 1 along a folded dim (taps would skip
// phases), groups > 1 with any folding (folded channels interleave the groups), and
// CUDNN_CONVOLUTION mode with a filter longer than 1 along a folded dim (the flipped
// filter needs its phases reversed, which no fold transform does). cuDNN documents
// BAD_PARAM for tensors of more than 4 dims.
#pragma once

#include "core/conv_desc.hpp"
#include "core/ops_desc.hpp"
#include "core/status.hpp"
#include "core/tensor_desc.hpp"

namespace odnn::core {

struct FoldedBwdData {
    FilterDesc folded_filter;
    TensorDesc padded_diff;
    ConvDesc folded_conv;
    TensorDesc folded_grad;
    TensorTransformDesc filter_fold;  // filter -> folded_filter (cudnnTransformFilter)
    TensorTransformDesc diff_pad;     // dy -> padded_diff
    TensorTransformDesc grad_fold;    // dx -> folded_grad (to carry beta * dx through)
    TensorTransformDesc grad_unfold;  // folded_grad -> dx
};

// `format` is the layout of the folded tensors and filter (NCHW or NHWC).
Status fold_conv_bwd_data(const FilterDesc& w, const TensorDesc& dy, const ConvDesc& conv, const TensorDesc& dx,
                          cudnnTensorFormat_t format, FoldedBwdData* out);

}  // namespace odnn::core
