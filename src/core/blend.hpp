// cuDNN's output rule, shared by every op on both backends:
//   y = alpha * result + beta * y_prior, and beta == 0 means y is never read
// (so NaN or garbage already in y cannot leak into the result).
#pragma once

#include "core/elem_access.hpp"

namespace odnn::core {

// Scaling factors as cuDNN passes them: double for DOUBLE tensors, float otherwise.
struct Scale {
    double alpha = 1.0;
    double beta = 0.0;
};

ODNN_HD double blend(double result, double alpha, double beta, const void* y, int64_t index, int dtype) {
    return beta == 0.0 ? alpha * result : alpha * result + beta * load_elem(y, index, dtype);
}

ODNN_HD void blend_store(void* y, int64_t index, int dtype, double result, double alpha, double beta) {
    store_elem(y, index, dtype, blend(result, alpha, beta, y, index, dtype));
}

// The same rule for a FLOAT output the CPU fast paths hold directly: in double, rounded
// once (as blend_store does); `y` is read only when beta != 0.
ODNN_HD float blend_float(double result, double alpha, double beta, const float& y) {
    return static_cast<float>(beta == 0.0 ? alpha * result : alpha * result + beta * static_cast<double>(y));
}

}  // namespace odnn::core
