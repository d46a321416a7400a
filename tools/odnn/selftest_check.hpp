// odnn selftest's verdict on one output: the library's values against the reference's,
// with a tolerance derived from the data types and the work behind each value.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cudnn.h"

namespace odnn_tool {

// |got - ref| <= abs + rel * |ref| passes.
struct Tolerance {
    double abs = 0;
    double rel = 0;
};

// Unit roundoff of a data type (INT8 and other integers: 0.5, i.e. rounding to an integer).
double unit_roundoff(cudnnDataType_t t);

// The tolerance of a result stored in `out`, computed in `compute` from `terms` terms
// (the reduction length; 1 for element-wise ops, more for transcendental math) whose
// magnitudes add up to about `scale`: two rounding steps of the output, and an
// accumulation error that grows with the number of terms.
Tolerance tolerance_for(cudnnDataType_t out, cudnnDataType_t compute, double terms, double scale = 1.0);

struct Comparison {
    bool pass = false;
    double max_abs_err = 0;     // max |got - ref| over finite pairs
    double max_rel_err = 0;     // max |got - ref| / max(|ref|, 1)
    double worst_ratio = 0;     // max |got - ref| / (abs + rel * |ref|): <= 1 passes
    size_t worst_index = 0;
    size_t mismatches = 0;      // elements outside the tolerance
    size_t count = 0;
    std::string why;            // why it failed ("" when it passed)
};

// Compares element by element. NaN in `ref` requires NaN in `got`; NaN or infinity in
// `got` where `ref` is finite fails (a poisoned output element was never written). A
// comparison is refused as vacuous when at least `max_zero_fraction` of `ref` is exactly
// zero (and it has more than 4 elements): such a check proves nothing.
Comparison compare_values(const std::vector<double>& got, const std::vector<double>& ref, const Tolerance& tol,
                          double max_zero_fraction = 0.9);

}  // namespace odnn_tool
