// CUDA cudnnActivationForward / Backward on the element-wise engine (cuda/ew_common.cuh).
//
// Bytes moved (n elements of s bytes, beta = 0; beta != 0 adds one read of the output):
//   forward   read x, write y                                  2 n s
//   backward  read dy and the one of x / y the mode needs      3 n s
//             (SIGMOID, TANH: y; the others: x; IDENTITY: dy only, 2 n s)
// Packed tensors of one layout take the flat kernel (16-byte vectors); any other strides
// the strided kernel. Math in float for FLOAT / HALF / BFLOAT16, double for DOUBLE.
//
// Ceilings at 128x256x56x56 (1.03e8 elements; 4.2 TB/s copy bandwidth; the arithmetic,
// a compare or an exp per element, is far below any compute ceiling):
//   forward   2 tensors: f32 822 MB -> 0.196 ms, bf16 411 MB -> 0.098 ms
//   backward  3 tensors: f32 1233 MB -> 0.294 ms, bf16 617 MB -> 0.147 ms
//             (the bench counts y too, 4 tensors: at the ceiling it reads 133% of copy)
// What limited backward (0.70 ms f32, 0.55 ms bf16): the flat kernel kept its operands
// in an array indexed through the broadcast test, which ptxas put on the stack (local
// memory traffic per element). The flat kernel now holds each operand as a register
// vector, makes the broadcast input a compile-time index, and uses 32-bit indices.
// Forward in bf16 stayed at 60% of copy (f32 97%): ncu shows the kernel issue-bound, the
// functor's run-time switch over the modes keeping every mode's math in the kernel (66
// registers with 4 vectors a thread, 37.5% occupancy). RELU, the common mode, now runs
// as its own kernel with the mode a compile-time constant (predicted: bf16 forward near
// copy speed; not yet measured); the other modes keep the run-time switch.
#include "core/activation_softmax.hpp"
#include "cuda/ew_common.cuh"

namespace odnn::cuda {

using core::Status;

namespace {

// MODE: the activation mode fixed at compile time, or kAnyMode to switch on `mode`.
constexpr int kAnyMode = -1;

template <class A, int MODE>
struct ActFwd {
    static constexpr int kInputs = 1;
    int mode;
    bool propagate_nan;
    A coef, swish_beta, alpha, beta;
    __device__ __forceinline__ A operator()(const A* in) const {
        return alpha * core::act_forward<A>(MODE == kAnyMode ? mode : MODE, propagate_nan, coef, swish_beta, in[0]);
    }
};

// Inputs: dy and the one tensor the derivative reads (y for SIGMOID / TANH, x otherwise).
template <class A, int MODE>
struct ActBwd {
    static constexpr int kInputs = 2;
    int mode;
    bool propagate_nan;
    A coef, swish_beta, alpha, beta;
    __device__ __forceinline__ A operator()(const A* in) const {
        const A dy = in[0], v = in[1];
        return alpha * core::act_backward<A>(MODE == kAnyMode ? mode : MODE, propagate_nan, coef, swish_beta, v, v, dy);
    }
};

// Launches the functor F<A, MODE> with RELU as its own instance, any other mode through
// the run-time switch.
template <class T, template <class, int> class F, class A>
Status launch_act(const EwOperands& e, const core::ActivationParams& act, const core::Scale& scale, cudaStream_t s,
                  const char* name) {
    const A coef = static_cast<A>(act.coef), sb = static_cast<A>(act.swish_beta);
    const A alpha = static_cast<A>(scale.alpha), beta = static_cast<A>(scale.beta);
    if (act.mode == CUDNN_ACTIVATION_RELU)
        return launch_ew<T, T>(e, F<A, CUDNN_ACTIVATION_RELU>{act.mode, act.propagate_nan, coef, sb, alpha, beta}, s,
                               name);
    return launch_ew<T, T>(e, F<A, kAnyMode>{act.mode, act.propagate_nan, coef, sb, alpha, beta}, s, name);
}

// IDENTITY backward: dx = alpha * dy (+ beta * dx).
template <class A>
struct ScaleCopy {
    static constexpr int kInputs = 1;
    A alpha, beta;
    __device__ __forceinline__ A operator()(const A* in) const { return alpha * in[0]; }
};

bool uses_y(int mode) { return mode == CUDNN_ACTIVATION_SIGMOID || mode == CUDNN_ACTIVATION_TANH; }

template <class T>
Status act_fwd_typed(const core::Handle& h, const core::ActivationFwdProblem& p) {
    using A = typename AccOf<T>::type;
    EwOperands e;
    e.n = 2;
    e.ops[0] = &p.y;
    e.data[0] = p.y_data;
    e.ops[1] = &p.x;
    e.data[1] = p.x_data;
    return launch_act<T, ActFwd, A>(e, p.act, p.scale, h.stream, "cuda_activation_fwd");
}

template <class T>
Status act_bwd_typed(const core::Handle& h, const core::ActivationBwdProblem& p) {
    using A = typename AccOf<T>::type;
    EwOperands e;
    e.ops[0] = &p.dx;
    e.data[0] = p.dx_data;
    e.ops[1] = &p.dy;
    e.data[1] = p.dy_data;
    if (p.act.mode == CUDNN_ACTIVATION_IDENTITY) {
        e.n = 2;
        ScaleCopy<A> f{static_cast<A>(p.scale.alpha), static_cast<A>(p.scale.beta)};
        return launch_ew<T, T>(e, f, h.stream, "cuda_activation_bwd");
    }
    e.n = 3;
    e.ops[2] = uses_y(p.act.mode) ? &p.y : &p.x;
    e.data[2] = uses_y(p.act.mode) ? p.y_data : p.x_data;
    return launch_act<T, ActBwd, A>(e, p.act, p.scale, h.stream, "cuda_activation_bwd");
}

class CudaActivationFwd final : public core::Impl<core::ActivationFwdProblem> {
public:
    const char* name() const override { return "cuda_activation_fwd"; }
    Status execute(const core::Handle& h, const core::ActivationFwdProblem& p) const override {
        switch (p.y.dtype) {
            case CUDNN_DATA_FLOAT: return act_fwd_typed<float>(h, p);
            case CUDNN_DATA_DOUBLE: return act_fwd_typed<double>(h, p);
            case CUDNN_DATA_HALF: return act_fwd_typed<__half>(h, p);
            case CUDNN_DATA_BFLOAT16: return act_fwd_typed<__nv_bfloat16>(h, p);
            default: return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "cuda_activation_fwd: data type %d", p.y.dtype);
        }
    }
};

class CudaActivationBwd final : public core::Impl<core::ActivationBwdProblem> {
public:
    const char* name() const override { return "cuda_activation_bwd"; }
    Status execute(const core::Handle& h, const core::ActivationBwdProblem& p) const override {
        switch (p.dx.dtype) {
            case CUDNN_DATA_FLOAT: return act_bwd_typed<float>(h, p);
            case CUDNN_DATA_DOUBLE: return act_bwd_typed<double>(h, p);
            case CUDNN_DATA_HALF: return act_bwd_typed<__half>(h, p);
            case CUDNN_DATA_BFLOAT16: return act_bwd_typed<__nv_bfloat16>(h, p);
            default: return core::make_status(CUDNN_STATUS_NOT_SUPPORTED, "cuda_activation_bwd: data type %d", p.dx.dtype);
        }
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::ActivationFwdProblem, CudaActivationFwd, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::ActivationBwdProblem, CudaActivationBwd, core::kPriorityGeneric);

}  // namespace odnn::cuda
