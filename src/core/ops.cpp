#include "core/ops.hpp"

#include <cstring>

#include "core/dtype.hpp"
#include "core/elem_access.hpp"
#include "core/replay.hpp"

namespace odnn::core {

Status set_tensor(const Handle& h, const TensorDesc& y, void* y_data, const void* value) {
    SetTensorProblem p;
    p.y = y;
    p.y_data = y_data;
    // value has y's element type; a vector type's value is one of its scalars.
    const int bits = dtype_bits(scalar_view(y).dtype);
    std::memcpy(p.value, value, static_cast<size_t>((bits + 7) / 8));
    log_replay(h, p);
    return dispatch(h, p);
}

Status scale_tensor(const Handle& h, const TensorDesc& y, void* y_data, const void* alpha) {
    ODNN_REQUIRE_SUPPORTED(elem_numeric(y.dtype), "cudnnScaleTensor does not support data type %s",
                           dtype_name(y.dtype));
    ScaleTensorProblem p;
    p.y = y;
    p.y_data = y_data;
    // Scaling factors are double for DOUBLE tensors and float otherwise (cuDNN's rule).
    p.alpha = y.dtype == CUDNN_DATA_DOUBLE ? *static_cast<const double*>(alpha)
                                           : static_cast<double>(*static_cast<const float*>(alpha));
    log_replay(h, p);
    return dispatch(h, p);
}

}  // namespace odnn::core
