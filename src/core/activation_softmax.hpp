// Problems of cudnnActivationForward / Backward and cudnnSoftmaxForward / Backward, and
// the scalar math both backends share (double in the reference, float in CUDA kernels
// for FLOAT / HALF / BFLOAT16 data, double for DOUBLE data).
#pragma once

#include "core/ops_desc.hpp"
#include "core/tensor_ops.hpp"

namespace odnn::core {

// ---- Activation ----

struct ActivationParams {
    int mode = CUDNN_ACTIVATION_RELU;
    bool propagate_nan = false;  // RELU and CLIPPED_RELU: NaN in gives NaN out, else 0
    double coef = 0.0;           // CLIPPED_RELU ceiling, ELU alpha
    double swish_beta = 1.0;
};

// y = f(x).
template <class T>
ODNN_HD T act_forward(int mode, bool propagate_nan, T coef, T swish_beta, T x) {
    switch (mode) {
        case CUDNN_ACTIVATION_SIGMOID: return T(1) / (T(1) + hd_exp(-x));
        case CUDNN_ACTIVATION_RELU:
            if (x != x) return propagate_nan ? x : T(0);
            return x > T(0) ? x : T(0);
        case CUDNN_ACTIVATION_TANH: return hd_tanh(x);
        case CUDNN_ACTIVATION_CLIPPED_RELU: {
            if (x != x) return propagate_nan ? x : T(0);
            const T v = x > T(0) ? x : T(0);
            return v > coef ? coef : v;
        }
        case CUDNN_ACTIVATION_ELU: return x > T(0) ? x : coef * hd_expm1(x);
        case CUDNN_ACTIVATION_SWISH: return x / (T(1) + hd_exp(-swish_beta * x));
        default: return x;  // IDENTITY
    }
}

// dx = dy * f'(x). SIGMOID and TANH take the derivative from y (as cuDNN does); the
// others from x.
template <class T>
ODNN_HD T act_backward(int mode, bool propagate_nan, T coef, T swish_beta, T x, T y, T dy) {
    switch (mode) {
        case CUDNN_ACTIVATION_SIGMOID: return dy * y * (T(1) - y);
        case CUDNN_ACTIVATION_RELU:
            if (x != x) return propagate_nan ? x : T(0);
            return x > T(0) ? dy : T(0);
        case CUDNN_ACTIVATION_TANH: return dy * (T(1) - y * y);
        case CUDNN_ACTIVATION_CLIPPED_RELU:
            if (x != x) return propagate_nan ? x : T(0);
            return x > T(0) && x < coef ? dy : T(0);
        case CUDNN_ACTIVATION_ELU: return x > T(0) ? dy : dy * coef * hd_exp(x);
        case CUDNN_ACTIVATION_SWISH: {
            const T s = T(1) / (T(1) + hd_exp(-swish_beta * x));
            return dy * (s + swish_beta * x * s * (T(1) - s));
        }
        default: return dy;  // IDENTITY
    }
}

struct ActivationFwdProblem {
    static constexpr const char* kOpName = "cudnnActivationForward";
    ActivationParams act;
    Operand x, y;
    const void* x_data = nullptr;
    void* y_data = nullptr;
    Scale scale;
};

struct ActivationBwdProblem {
    static constexpr const char* kOpName = "cudnnActivationBackward";
    ActivationParams act;
    Operand y, dy, x, dx;
    const void* y_data = nullptr;
    const void* dy_data = nullptr;
    const void* x_data = nullptr;
    void* dx_data = nullptr;
    Scale scale;
};

// ---- Softmax ----

// Which dims a softmax reduces over: INSTANCE all but N, CHANNEL only C. A group (one
// softmax) is an index over the kept dims, row-major; its elements are indexed row-major
// over the reduced dims.
struct SoftmaxSplit {
    int nb_kept = 0;
    int kept[kMaxOperandDims] = {};
    int nb_reduced = 0;
    int reduced[kMaxOperandDims] = {};
    unsigned reduced_mask = 0;  // bit d set: dim d is reduced
    int64_t groups = 1;
    int64_t length = 1;

    // Scalar offset in `o` of element k of group g. Both index lists ascend, so walking
    // the dims from the last, each kept one takes the next digit of g and each reduced one
    // the next of k; with constant dims (Operand::offset's note).
    ODNN_HD int64_t offset(const Operand& o, int64_t g, int64_t k) const {
        int64_t idx[kMaxOperandDims] = {};
        ODNN_UNROLL
        for (int d = kMaxOperandDims - 1; d >= 0; --d) {
            if (d >= o.nb_dims) continue;
            int64_t& r = (reduced_mask >> d) & 1u ? k : g;
            idx[d] = r % o.dims[d];
            r /= o.dims[d];
        }
        return o.offset(idx);
    }
};

SoftmaxSplit softmax_split(cudnnSoftmaxMode_t mode, const Operand& x);

struct SoftmaxFwdProblem {
    static constexpr const char* kOpName = "cudnnSoftmaxForward";
    cudnnSoftmaxAlgorithm_t algo = CUDNN_SOFTMAX_ACCURATE;
    cudnnSoftmaxMode_t mode = CUDNN_SOFTMAX_MODE_INSTANCE;
    SoftmaxSplit split;
    Operand x, y;
    const void* x_data = nullptr;
    void* y_data = nullptr;
    Scale scale;
};

struct SoftmaxBwdProblem {
    static constexpr const char* kOpName = "cudnnSoftmaxBackward";
    cudnnSoftmaxAlgorithm_t algo = CUDNN_SOFTMAX_ACCURATE;
    cudnnSoftmaxMode_t mode = CUDNN_SOFTMAX_MODE_INSTANCE;
    SoftmaxSplit split;
    Operand y, dy, dx;
    const void* y_data = nullptr;
    const void* dy_data = nullptr;
    void* dx_data = nullptr;
    Scale scale;
};

// ---- Builders ----

Status activation_forward(const Handle& h, const ActivationDesc& d, const void* alpha, const TensorDesc& x,
                          const void* x_data, const void* beta, const TensorDesc& y, void* y_data);
Status activation_backward(const Handle& h, const ActivationDesc& d, const void* alpha, const TensorDesc& y,
                           const void* y_data, const TensorDesc& dy, const void* dy_data, const TensorDesc& x,
                           const void* x_data, const void* beta, const TensorDesc& dx, void* dx_data);
Status softmax_forward(const Handle& h, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, const void* alpha,
                       const TensorDesc& x, const void* x_data, const void* beta, const TensorDesc& y, void* y_data);
Status softmax_backward(const Handle& h, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode, const void* alpha,
                        const TensorDesc& y, const void* y_data, const TensorDesc& dy, const void* dy_data,
                        const void* beta, const TensorDesc& dx, void* dx_data);

}  // namespace odnn::core
