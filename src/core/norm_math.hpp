// Scalar math the normalization, pooling and sampling kernels share on both backends
// (host and device): the activation fused into batch normalization and its
// derivative, computed from the activation's output (what the backward pass has).
#pragma once

#include <math.h>

#include "core/norm_problem.hpp"
#include "core/scalar_convert.hpp"

namespace odnn::core {

ODNN_HD float math_exp(float v) { return expf(v); }
ODNN_HD double math_exp(double v) { return exp(v); }
ODNN_HD float math_tanh(float v) { return tanhf(v); }
ODNN_HD double math_tanh(double v) { return tanh(v); }
ODNN_HD float math_sqrt(float v) { return sqrtf(v); }
ODNN_HD double math_sqrt(double v) { return sqrt(v); }
ODNN_HD float math_pow(float a, float b) { return powf(a, b); }
ODNN_HD double math_pow(double a, double b) { return pow(a, b); }
ODNN_HD float math_floor(float v) { return floorf(v); }
ODNN_HD double math_floor(double v) { return floor(v); }

template <class T>
ODNN_HD bool is_nan(T v) {
    return v != v;
}

// act(v) for the activations batch normalization fuses.
template <class T>
ODNN_HD T norm_act_forward(const NormActivation& a, T v) {
    switch (a.mode) {
        case 1:  // RELU
            if (is_nan(v)) return a.propagate_nan ? v : T(0);
            return v > T(0) ? v : T(0);
        case 3: {  // CLIPPED_RELU: min(max(v, 0), coef)
            if (is_nan(v)) return a.propagate_nan ? v : T(0);
            const T c = static_cast<T>(a.coef);
            return v > T(0) ? (v < c ? v : c) : T(0);
        }
        case 0: return T(1) / (T(1) + math_exp(-v));  // SIGMOID
        case 2: return math_tanh(v);                  // TANH
        case 4: return v > T(0) ? v : static_cast<T>(a.coef) * (math_exp(v) - T(1));  // ELU
        default: return v;                                                             // IDENTITY
    }
}

// d act / d v at the v that produced y = act(v).
template <class T>
ODNN_HD T norm_act_grad_from_y(const NormActivation& a, T y) {
    switch (a.mode) {
        case 1: return y > T(0) ? T(1) : T(0);
        case 3: return (y > T(0) && y < static_cast<T>(a.coef)) ? T(1) : T(0);
        case 0: return y * (T(1) - y);
        case 2: return T(1) - y * y;
        case 4: return y > T(0) ? T(1) : y + static_cast<T>(a.coef);
        default: return T(1);
    }
}

}  // namespace odnn::core
