#include "gemm_baseline.hpp"

#include <cblas.h>

#include <cmath>
#include <vector>

#include "runtime.hpp"

namespace odnn_bench {

double gemm_baseline_ms(double flops, bool f64, int warmup, int reps, double* actual_flops) {
    int n = static_cast<int>(std::lround(std::cbrt(flops / 2.0)));
    if (n < 1) n = 1;
    *actual_flops = 2.0 * n * static_cast<double>(n) * n;
    const size_t count = static_cast<size_t>(n) * n;
    std::vector<double> a(f64 ? count : 0, 0.5), b(f64 ? count : 0, 0.25), c(f64 ? count : 0);
    std::vector<float> af(f64 ? 0 : count, 0.5f), bf(f64 ? 0 : count, 0.25f), cf(f64 ? 0 : count);
    bool ok = false;
    return measure(false, warmup, reps,
                   [&] {
                       if (f64)
                           cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n,
                                       b.data(), n, 0.0, c.data(), n);
                       else
                           cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, af.data(), n,
                                       bf.data(), n, 0.0f, cf.data(), n);
                       return true;
                   },
                   &ok);
}

}  // namespace odnn_bench
