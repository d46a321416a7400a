// Storage types of the CPU fast paths: FLOAT, DOUBLE, HALF and BFLOAT16 tensors read as
// their exact value and written from a double result, with the scalar conversions of
// core/scalar_convert.hpp. A kernel is a template on the storage type T and computes
// exactly as for FLOAT; the conversions are the reference's (core::load_elem /
// store_elem), so a fast path stores the very values the reference stores:
//   load   every HALF / BFLOAT16 value is a float exactly (value_t<T> = float);
//   store  double -> float -> 16 bits, both round-to-nearest-even, as store_elem does.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/dtype.hpp"
#include "core/scalar_convert.hpp"
#include "core/status.hpp"
#include "cpu/f16c.hpp"
#include "cudnn_graph.h"

namespace odnn::cpu {

// 16-bit storage, distinct types so that overloads and templates can tell them apart.
struct Half {
    uint16_t bits;
};
struct Bf16 {
    uint16_t bits;
};
static_assert(sizeof(Half) == sizeof(uint16_t), "Half is its bits");

// A HALF buffer as its bits (the F16C block conversions of cpu/f16c.hpp take uint16_t).
inline const uint16_t* half_bits(const Half* p) { return reinterpret_cast<const uint16_t*>(p); }
inline uint16_t* half_bits(Half* p) { return reinterpret_cast<uint16_t*>(p); }

// The stored value, exactly: float for FLOAT / HALF / BFLOAT16, double for DOUBLE.
inline float load(float v) { return v; }
inline double load(double v) { return v; }
inline float load(Half v) { return core::half_to_float(v.bits); }
inline float load(Bf16 v) { return core::bf16_to_float(v.bits); }

template <class T>
using value_t = decltype(load(std::declval<T>()));

// A computed value rounded to the storage type.
template <class T>
inline T store(double v);
template <>
inline float store<float>(double v) { return static_cast<float>(v); }
template <>
inline double store<double>(double v) { return v; }
template <>
inline Half store<Half>(double v) { return Half{core::float_to_half(static_cast<float>(v))}; }
template <>
inline Bf16 store<Bf16>(double v) { return Bf16{core::float_to_bf16(static_cast<float>(v))}; }

// cuDNN's output rule for an element held directly: alpha * r (+ beta * y, y read only
// when beta != 0), in double, rounded once to T (core::blend_store's rule).
template <class T>
inline T blend(double r, double alpha, double beta, const T& y) {
    return store<T>(beta == 0.0 ? alpha * r : alpha * r + beta * static_cast<double>(load(y)));
}

// Runs of consecutive elements as value_t<T>, for kernels that compute a run at a time:
// FLOAT and DOUBLE in place; the 16-bit types in a caller's buffer, HALF through the F16C
// block conversions where f16c::usable() and otherwise (and BFLOAT16) through the scalar
// ones. The values are load()'s; a run of results rounded to value_t<T> (store<value_t<T>>)
// is stored as store<T> would round the results (double -> float -> 16 bits).
template <class T>
constexpr bool runs_in_place = std::is_same_v<T, value_t<T>>;

// A buffer for runs of up to N elements (one element, unused, where runs are in place).
template <class T, int64_t N>
using RunBuffer = value_t<T>[runs_in_place<T> ? 1 : N];

// The n elements at p, read.
template <class T, class V = value_t<T>>
inline const V* load_run(const T* p, int64_t n, V* buf) {
    if constexpr (runs_in_place<T>) {
        return p;
    } else {
        if constexpr (std::is_same_v<T, Half>) {
            if (f16c::usable()) {
                f16c::to_float(half_bits(p), buf, n);
                return buf;
            }
        }
        for (int64_t i = 0; i < n; ++i) buf[i] = load(p[i]);
        return buf;
    }
}

// Where to compute the n outputs at p, holding their stored values when `read` (a blend
// with beta != 0 reads them); store_run(v, p, n) then stores them.
template <class T, class V = value_t<T>>
inline V* output_run(T* p, int64_t n, bool read, V* buf) {
    if constexpr (runs_in_place<T>) {
        return p;
    } else {
        if (read) load_run(p, n, buf);
        return buf;
    }
}

template <class T, class V = value_t<T>>
inline void store_run(const V* v, T* p, int64_t n) {
    if constexpr (!runs_in_place<T>) {
        if constexpr (std::is_same_v<T, Half>) {
            if (f16c::usable()) {
                f16c::to_half(v, half_bits(p), n);
                return;
            }
        }
        for (int64_t i = 0; i < n; ++i) p[i] = store<T>(v[i]);
    }
}

// Storage types the fast paths take.
inline bool storage_supported(int t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

// The fast paths' data-type rule for operand `name` of type t, which must equal the
// type of operand `ref_name` (ref_t): NOT_SUPPORTED naming both otherwise.
// (Operands carry their cudnnDataType_t as an int.)
inline core::Status check_storage(int t, const char* name, int ref_t, const char* ref_name) {
    const auto type = [](int d) { return core::dtype_name(static_cast<cudnnDataType_t>(d)); };
    ODNN_REQUIRE_SUPPORTED(storage_supported(t), "%s is %s, not FLOAT, DOUBLE, HALF or BFLOAT16", name, type(t));
    ODNN_REQUIRE_SUPPORTED(t == ref_t, "%s is %s but %s is %s", name, type(t), ref_name, type(ref_t));
    return core::Status::ok();
}

// Calls f(T{}) for the storage type of `t` (one of storage_supported); the kernel takes
// T from the argument's type: with_storage(dt, [&](auto tag) { run<decltype(tag)>(p); }).
template <class F>
inline void with_storage(int t, F&& f) {
    switch (t) {
        case CUDNN_DATA_DOUBLE: f(double{}); return;
        case CUDNN_DATA_HALF: f(Half{}); return;
        case CUDNN_DATA_BFLOAT16: f(Bf16{}); return;
        default: f(float{}); return;
    }
}

}  // namespace odnn::cpu
