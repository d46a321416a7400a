#include "cpu/conv_common.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include <sched.h>

namespace odnn::cpu {

const float* half_table() {
    static const float* table = [] {
        float* t = new float[65536];
        for (uint32_t i = 0; i < 65536; ++i) t[i] = core::half_to_float(static_cast<uint16_t>(i));
        return t;
    }();
    return table;
}

namespace {

// OpenMP's thread count when the library loads.
const int g_slots = std::max(1, omp_get_max_threads());

std::mutex g_blas_mutex;
int g_blas_users = 0;
int g_blas_saved = 1;

}  // namespace

int conv_slots() { return g_slots; }

void TaskTail::arrive() {
    busy_.fetch_sub(1);
    // The others are near the end of their last task as often as not: a short spin
    // catches that at once. Past it, yield the core at every check: a co-located busy
    // thread (or any other) gets it, and this one stays runnable, answering as soon as
    // the scheduler comes back to it (a sleeping thread can lose its core for a full
    // scheduler tick on a loaded machine).
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    for (int i = 0; busy_.load() != 0; ++i) {
        if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) {
            while (busy_.load() != 0) sched_yield();
            return;
        }
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

int conv_threads() { return std::max(1, std::min(g_slots, omp_in_parallel() ? 1 : omp_get_max_threads())); }

BlasSerial::BlasSerial() {
#if defined(OPENBLAS_VERSION)
    // openblas_get_parallel(): 0 sequential, 1 pthreads, 2 OpenMP.
    if (openblas_get_parallel() != 1) return;
    std::lock_guard<std::mutex> lock(g_blas_mutex);
    if (g_blas_users++ == 0) {
        g_blas_saved = openblas_get_num_threads();
        if (g_blas_saved > 1) openblas_set_num_threads(1);
    }
    active_ = true;
#endif
}

BlasSerial::~BlasSerial() {
#if defined(OPENBLAS_VERSION)
    if (!active_) return;
    std::lock_guard<std::mutex> lock(g_blas_mutex);
    if (--g_blas_users == 0 && g_blas_saved > 1) openblas_set_num_threads(g_blas_saved);
#endif
}

}  // namespace odnn::cpu
