// f16c::usable(): the run-time check, in a file built for the baseline instruction set.
#include "cpu/f16c.hpp"

#include "core/knob.hpp"

namespace odnn::cpu::f16c {

bool usable() {
    static const bool ok = [] {
        if (core::knob_is("ODNN_CPU_F16C", "off")) return false;
#if defined(ODNN_CPU_HAS_F16C_UNIT) && (defined(__x86_64__) || defined(__i386__))
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
#else
        return false;
#endif
    }();
    return ok;
}

}  // namespace odnn::cpu::f16c
