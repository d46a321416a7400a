#include "cpu/conv_common.hpp"

#include <cblas.h>
#include <omp.h>

namespace odnn::cpu {

const float* half_table() {
    static const float* table = [] {
        float* t = new float[65536];
        for (uint32_t i = 0; i < 65536; ++i) t[i] = core::half_to_float(static_cast<uint16_t>(i));
        return t;
    }();
    return table;
}

bool loops_threaded_around_blas() {
    if (omp_get_max_threads() < 2) return false;
#if defined(OPENBLAS_VERSION)
    // openblas_get_parallel(): 0 sequential, 1 pthreads, 2 OpenMP (shares our threads).
    if (openblas_get_parallel() == 1 && openblas_get_num_threads() > 1) return false;
#endif
    return true;
}

}  // namespace odnn::cpu
