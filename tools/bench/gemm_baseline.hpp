#pragma once

namespace odnn_bench {

// Median time (ms) of an fp32 (or fp64) square GEMM of about `flops` FLOPs
// (M = N = K = cbrt(flops / 2)) through the BLAS odnn's CPU backend uses.
double gemm_baseline_ms(double flops, bool f64, int warmup, int reps, double* actual_flops);

}  // namespace odnn_bench
