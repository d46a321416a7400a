// Runs one problem through one cuDNN library: descriptors, data, algorithm choice,
// warm-up and timed repetitions, and the output read back for comparison.
#pragma once

#include <string>
#include <vector>

#include "problem.hpp"
#include "runtime.hpp"

namespace odnn_bench {

struct Options {
    int warmup = 5;
    int reps = 20;
    int algo = -1;                 // -1: the library's first choice (Get…_v7, or Find with `find`)
    bool find = false;             // choose by cudnnFind*Algorithm (measured), as frameworks' benchmark mode
    size_t workspace_limit = 4ull << 30;
    bool check = true;             // read outputs back to compare libraries
    bool overhead = false;         // also time a call's host part and calls queued back to back
};

struct RunResult {
    bool ok = false;
    std::string error;
    double ms = 0;
    int algo = -1;
    size_t workspace = 0;
    std::vector<double> out;  // output values (when Options::check)
    Overhead overhead;        // when Options::overhead, on a GPU
};

RunResult run_problem(CudnnLib& lib, const Problem& p, const Options& o);
// The element-wise and normalization problems (ops_bench.cpp).
RunResult run_op(CudnnLib& lib, const Problem& p, const Options& o);
double op_bytes(const Problem& p);

// Work of a problem: FLOPs (0 for pure data movement) and the minimum bytes moved.
double problem_flops(const Problem& p);
double problem_bytes(const Problem& p);

}  // namespace odnn_bench
