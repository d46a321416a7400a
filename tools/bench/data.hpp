// Data, layouts and error text shared by the bench's problem runners.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime.hpp"

namespace odnn_bench {

struct Dt {
    cudnnDataType_t data;
    cudnnDataType_t compute;
    int bytes;
};

Dt dtype_of(const std::string& dt);

// Deterministic small values (multiples of 1/4 in [-1, 1]): exact in every type,
// sums stay exact in fp32 for moderate reductions, and nothing is all-zero.
std::vector<unsigned char> make_data(size_t count, const Dt& t, unsigned seed);
std::vector<double> to_double(const std::vector<unsigned char>& raw, const Dt& t);
// Values stored as t's elements (rounded to nearest even; INT8 rounded and saturated).
std::vector<unsigned char> from_double(const std::vector<double>& v, const Dt& t);

// Strides of a logical N C spatial... tensor in NCHW or NHWC memory order.
void strides_for(int nb, const int* dims, bool nhwc, int* strides);
size_t count(int nb, const int* d);

// "<what>: CUDNN_STATUS_X (the library's last-error message)".
std::string status_text(CudnnLib& lib, const char* what, cudnnStatus_t s);

}  // namespace odnn_bench

// Inside a runner returning RunResult r: record the failure and return.
#define BENCH_TRY(what, call)                              \
    do {                                                   \
        const cudnnStatus_t st_ = (call);                  \
        if (st_ != CUDNN_STATUS_SUCCESS) {                 \
            r.error = odnn_bench::status_text(lib, what, st_); \
            return r;                                      \
        }                                                  \
    } while (0)
