// Test-side tensors: host buffers with their own element conversions, layouts and fills,
// written independently of the library (src/core/elem_access.hpp is not used here).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cudnn.h"

namespace ops_test {

size_t dtype_size(cudnnDataType_t dt);  // bytes of one scalar (INT8x4 / INT8x32: 1)
bool dtype_is_float(cudnnDataType_t dt);
// Relative precision of a type (the unit roundoff's double), 0 for integers.
double dtype_eps(cudnnDataType_t dt);
cudnnDataType_t parse_dtype(const std::string& s);  // f32 f64 f16 bf16 i8 i32 u8 i8x4 i8x32
std::string dtype_tag(cudnnDataType_t dt);

// The value a double becomes when stored as `dt` (round to nearest even, integers saturate).
double round_to(cudnnDataType_t dt, double v);

struct HostTensor {
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    std::vector<int64_t> dims;
    std::vector<int64_t> strides;  // scalars; with vect > 1 (NCHW_VECT_C) vectors
    int vect = 1;
    std::vector<unsigned char> bytes;

    int64_t count() const;
    int nb() const { return static_cast<int>(dims.size()); }
    // Scalar offset of a logical index.
    int64_t offset(const std::vector<int64_t>& idx) const;
    double get(int64_t off) const;
    void set(int64_t off, double v);
    double at(const std::vector<int64_t>& idx) const { return get(offset(idx)); }
    void put(const std::vector<int64_t>& idx, double v) { set(offset(idx), v); }
    void* data() { return bytes.data(); }
    // Scalars addressed by the layout, plus slack.
    int64_t storage_scalars() const;
    // Every offset the layout addresses.
    std::vector<bool> addressed() const;
};

// Strides for `layout`: nchw (row-major), nhwc (dim 1 innermost), strided (a seeded
// permutation of the dims with gaps), or explicit "s0xs1x..." strides.
std::vector<int64_t> make_strides(const std::vector<int64_t>& dims, const std::string& layout, std::mt19937_64& rng);

// A tensor with the layout, every scalar of the buffer (gaps too) set to `poison`.
HostTensor make_tensor(cudnnDataType_t dt, const std::vector<int64_t>& dims, const std::string& layout,
                       std::mt19937_64& rng, double poison);
// Fills the addressed elements with uniform values in [lo, hi] (integers: rounded).
void fill_uniform(HostTensor& t, double lo, double hi, std::mt19937_64& rng);

// Visits every logical index of `dims`, row-major.
template <class F>
void for_each_index(const std::vector<int64_t>& dims, F f) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
        f(idx);
        for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
}

// A descriptor for the tensor (cudnnSetTensorNdDescriptor, or 4d with NCHW_VECT_C).
cudnnTensorDescriptor_t make_desc(const HostTensor& t);

}  // namespace ops_test
