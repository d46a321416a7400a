// Runs one case through the public API on a handle and checks every output element
// against values computed here, independently of the library, in double.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cudnn.h"
#include "ops_tensor/cases.hpp"
#include "ops_tensor/host_tensor.hpp"

namespace ops_test {

// Test-side math, written from cuDNN's documented definitions.
double act_value(int mode, double x, double coef, double swish_beta, bool propagate_nan);
// dx for dy = 1: SIGMOID and TANH from y, the others from x (cuDNN's convention).
double act_slope(int mode, double x, double y, double coef, double swish_beta, bool propagate_nan);

// Compares `after` with the expectation for every logical element (value and the
// magnitude of the terms that made it, for the cancellation allowance) and checks that
// no scalar outside the view changed from `before`. `ulps` scales the tolerance.
using Expectation = std::function<std::pair<double, double>(const std::vector<int64_t>&)>;
::testing::AssertionResult check_output(const HostTensor& before, const HostTensor& after, const Expectation& expect,
                                        double ulps, bool allow_mostly_zero);

// Runs the case on `h` (its pointers are host pointers: the CPU backend).
void run_case(const Case& c, cudnnHandle_t h);

}  // namespace ops_test
