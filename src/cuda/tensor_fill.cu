// CUDA cudnnSetTensor / cudnnScaleTensor: one thread per element of a strided tensor
// of any rank (up to 9 with the vector-lane dim), on the handle's stream.
#include "core/cuda_runtime.hpp"
#include "core/dtype.hpp"
#include "core/elem_access.hpp"
#include "core/ops.hpp"
#include "cuda/launch.cuh"

namespace odnn::cuda {

using core::Status;

namespace {

template <class T>
__global__ void fill_kernel(T* y, Shape s, int64_t n, T value) {
    ODNN_GRID_STRIDE_LOOP(i, n)
        y[core::strided_offset(i, s.nb_dims, s.dims, s.strides)] = value;
}

__global__ void scale_kernel(void* y, Shape s, int64_t n, int dtype, double alpha) {
    ODNN_GRID_STRIDE_LOOP(i, n) {
        const int64_t off = core::strided_offset(i, s.nb_dims, s.dims, s.strides);
        core::store_elem(y, off, dtype, core::load_elem(y, off, dtype) * alpha);
    }
}

template <class T>
void launch_fill(const core::SetTensorProblem& p, const Shape& s, int64_t n, cudaStream_t stream) {
    T v;
    memcpy(&v, p.value, sizeof v);
    fill_kernel<T><<<grid_for(n), 256, 0, stream>>>(static_cast<T*>(p.y_data), s, n, v);
}

class CudaSetTensor final : public core::Impl<core::SetTensorProblem> {
public:
    const char* name() const override { return "cuda_set_tensor"; }
    Status execute(const core::Handle& h, const core::SetTensorProblem& p) const override {
        const core::ScalarView v = core::scalar_view(p.y);
        const Shape s = to_shape(v);
        const int64_t n = v.num_elements();
        switch (core::dtype_bits(v.dtype)) {
            case 8: launch_fill<uint8_t>(p, s, n, h.stream); break;
            case 16: launch_fill<uint16_t>(p, s, n, h.stream); break;
            case 32: launch_fill<uint32_t>(p, s, n, h.stream); break;
            case 64: launch_fill<unsigned long long>(p, s, n, h.stream); break;
            default:
                return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "cudnnSetTensor: data type %s",
                                         core::dtype_name(v.dtype));
        }
        return core::cuda_check_launch("cuda_set_tensor");
    }
};

class CudaScaleTensor final : public core::Impl<core::ScaleTensorProblem> {
public:
    const char* name() const override { return "cuda_scale_tensor"; }
    Status execute(const core::Handle& h, const core::ScaleTensorProblem& p) const override {
        const core::ScalarView v = core::scalar_view(p.y);
        const int64_t n = v.num_elements();
        scale_kernel<<<grid_for(n), 256, 0, h.stream>>>(p.y_data, to_shape(v), n, static_cast<int>(v.dtype),
                                                        p.alpha);
        return core::cuda_check_launch("cuda_scale_tensor");
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::SetTensorProblem, CudaSetTensor, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::ScaleTensorProblem, CudaScaleTensor, core::kPriorityGeneric);

}  // namespace odnn::cuda
