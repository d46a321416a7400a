// Problems of the tensor utility ops and their entry points into the backends.
#pragma once

#include "core/handle.hpp"
#include "core/impl_registry.hpp"
#include "core/blend.hpp"
#include "core/tensor_desc.hpp"

namespace odnn::core {

// cudnnSetTensor: every element of y becomes `value` (raw bytes of one element of y's type).
struct SetTensorProblem {
    static constexpr const char* kOpName = "cudnnSetTensor";
    TensorDesc y;
    void* y_data = nullptr;
    unsigned char value[8] = {};
};

// cudnnScaleTensor: y = alpha * y.
struct ScaleTensorProblem {
    static constexpr const char* kOpName = "cudnnScaleTensor";
    TensorDesc y;
    void* y_data = nullptr;
    double alpha = 1.0;
};

// Builds the problems (validating what the descriptors allow) and dispatches.
Status set_tensor(const Handle& h, const TensorDesc& y, void* y_data, const void* value);
Status scale_tensor(const Handle& h, const TensorDesc& y, void* y_data, const void* alpha);

}  // namespace odnn::core

namespace odnn::core {

// Reads cuDNN's host-side alpha / beta pointers: double for DOUBLE compute, float otherwise.
inline Scale read_scale(const void* alpha, const void* beta, bool double_precision) {
    Scale s;
    if (double_precision) {
        s.alpha = *static_cast<const double*>(alpha);
        s.beta = *static_cast<const double*>(beta);
    } else {
        s.alpha = *static_cast<const float*>(alpha);
        s.beta = *static_cast<const float*>(beta);
    }
    return s;
}

}  // namespace odnn::core
