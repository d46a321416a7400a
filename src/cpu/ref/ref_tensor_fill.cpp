// Reference cudnnSetTensor / cudnnScaleTensor: one pass over every element of a
// strided tensor. Overlapping strides (allowed by the descriptor) make the result
// of scaling depend on visit order, as on NVIDIA's library; filling does not.
#include <cstring>

#include "core/dtype.hpp"
#include "core/elem_access.hpp"
#include "core/ops.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

class RefSetTensor final : public core::Impl<core::SetTensorProblem> {
public:
    const char* name() const override { return "ref_set_tensor"; }
    Status execute(const core::Handle&, const core::SetTensorProblem& p) const override {
        const core::ScalarView y = core::scalar_view(p.y);
        const int64_t n = y.num_elements();
        const int bits = core::dtype_bits(y.dtype);
        unsigned char* base = static_cast<unsigned char*>(p.y_data);
        // Legacy tensor descriptors hold whole-byte types only (FLOAT .. BFLOAT16).
        const size_t bytes = static_cast<size_t>(bits / 8);
#pragma omp parallel for schedule(static) if (n > 65536)
        for (int64_t i = 0; i < n; ++i) {
            const int64_t off = core::strided_offset(i, y.nb_dims, y.dims, y.strides);
            std::memcpy(base + off * static_cast<int64_t>(bytes), p.value, bytes);
        }
        return Status::ok();
    }
};

class RefScaleTensor final : public core::Impl<core::ScaleTensorProblem> {
public:
    const char* name() const override { return "ref_scale_tensor"; }
    Status execute(const core::Handle&, const core::ScaleTensorProblem& p) const override {
        const core::ScalarView y = core::scalar_view(p.y);
        const int64_t n = y.num_elements();
        for (int64_t i = 0; i < n; ++i) {
            const int64_t off = core::strided_offset(i, y.nb_dims, y.dims, y.strides);
            const double v = core::load_elem(p.y_data, off, y.dtype);
            core::store_elem(p.y_data, off, y.dtype, v * p.alpha);
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::SetTensorProblem, RefSetTensor, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::ScaleTensorProblem, RefScaleTensor, core::kPriorityReference);

}  // namespace odnn::cpu
