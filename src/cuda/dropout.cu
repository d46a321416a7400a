// CUDA dropout forward and backward, the generator and mask layout of
// core/dropout_problem.hpp: one thread per 4 elements (one Philox block), the 4-bit
// pieces of a warp combined by shuffles into 32-bit mask words. The seed and offset
// are read from the states buffer on the device; a one-thread kernel then advances
// the offset (stream order keeps it after the main kernel).
// Bytes: forward x + y + n / 8 (mask); backward dy + dx + n / 8.
#include "core/cuda_runtime.hpp"
#include "core/dropout_problem.hpp"
#include "core/elem_access.hpp"
#include "cuda/launch.cuh"
#include "cuda/norm_common.cuh"

namespace odnn::cuda {

using core::Status;

namespace {

constexpr int kThreads = 256;

struct View {
    int nd;
    int64_t dims[core::kDimMax];
    int64_t strides[core::kDimMax];
    bool packed;  // row-major packed: offset == logical index
};

View view_of(const core::TensorDesc& t) {
    View v{};
    v.nd = t.nb_dims;
    int64_t s = 1;
    v.packed = true;
    for (int i = t.nb_dims - 1; i >= 0; --i) {
        v.dims[i] = t.dims[i];
        v.strides[i] = t.strides[i];
        if (t.dims[i] > 1 && t.strides[i] != s) v.packed = false;
        s *= t.dims[i];
    }
    return v;
}

__device__ __forceinline__ int64_t at(const View& v, int64_t i) {
    return v.packed ? i : core::strided_offset(i, v.nd, v.dims, v.strides);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    dropout_forward(const T* __restrict__ x, View xv, T* y, View yv, int64_t n, const core::DropoutStates* states,
                    bool keep_all, bool drop_all, uint32_t threshold, float scale, uint32_t* reserve) {
    using C = typename Io<T>::C;
    const int lane = threadIdx.x & 31;
    const int64_t quads = (n + 3) / 4;
    const uint64_t seed = states ? states->seed : 0;
    const uint64_t start = states ? core::dropout_first_block(states->offset) : 0;
    const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
    // Warp-uniform loop: every lane runs the same iterations (shuffles need them all).
    for (int64_t qb = static_cast<int64_t>(blockIdx.x) * blockDim.x + (threadIdx.x & ~31); qb < quads; qb += step) {
        const int64_t q = qb + lane;
        uint32_t nibble = 0;
        if (q < quads) {
            uint32_t words[4] = {0, 0, 0, 0};
            if (!keep_all && !drop_all) core::dropout_block(seed, start + static_cast<uint64_t>(q), words);
#pragma unroll
            for (int w = 0; w < 4; ++w) {
                const int64_t i = 4 * q + w;
                if (i < n) {
                    const bool keep = keep_all || (!drop_all && words[w] >= threshold);
                    const C v = keep ? Io<T>::in(x[at(xv, i)]) * static_cast<C>(scale) : C(0);
                    y[at(yv, i)] = Io<T>::out(v);
                    nibble |= static_cast<uint32_t>(keep) << w;
                }
            }
        }
        uint32_t word = nibble << ((lane & 7) * 4);
        word |= __shfl_xor_sync(0xffffffffu, word, 1);
        word |= __shfl_xor_sync(0xffffffffu, word, 2);
        word |= __shfl_xor_sync(0xffffffffu, word, 4);
        if ((lane & 7) == 0 && q < quads) reserve[q / 8] = word;
    }
}

__global__ void dropout_advance(core::DropoutStates* states, int64_t quads) {
    states->offset = 4 * (core::dropout_first_block(states->offset) + static_cast<uint64_t>(quads));
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    dropout_backward(const T* __restrict__ dy, View dyv, T* dx, View dxv, int64_t n, float scale,
                     const uint32_t* __restrict__ reserve) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(i, n) {
        const bool keep = (reserve[i / 32] >> (i % 32)) & 1u;
        const C v = keep ? Io<T>::in(dy[at(dyv, i)]) * static_cast<C>(scale) : C(0);
        dx[at(dxv, i)] = Io<T>::out(v);
    }
}

class CudaDropout final : public core::Impl<core::DropoutProblem> {
public:
    const char* name() const override { return "cuda_dropout"; }
    Status execute(const core::Handle& h, const core::DropoutProblem& p) const override {
        return with_float_type(p.x.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            const int64_t n = p.x.num_elements();
            const T* x = static_cast<const T*>(p.x_data);
            T* y = static_cast<T*>(p.y_data);
            if (p.backward) {
                dropout_backward<T><<<grid_for(n), kThreads, 0, h.stream>>>(x, view_of(p.x), y, view_of(p.y), n,
                                                                           p.scale, p.reserve);
                return launched(name());
            }
            const int64_t quads = (n + 3) / 4;
            auto* states = static_cast<core::DropoutStates*>(p.keep_all ? nullptr : p.states);
            dropout_forward<T><<<grid_for(quads), kThreads, 0, h.stream>>>(x, view_of(p.x), y, view_of(p.y), n,
                                                                          states, p.keep_all, p.drop_all,
                                                                          p.threshold, p.scale, p.reserve);
            if (states) dropout_advance<<<1, 1, 0, h.stream>>>(states, quads);
            return launched(name());
        });
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::DropoutProblem, CudaDropout, core::kPriorityGeneric);

}  // namespace odnn::cuda
