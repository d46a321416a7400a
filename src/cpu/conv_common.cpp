#include "cpu/conv_common.hpp"

namespace odnn::cpu {

const float* half_table() {
    static const float* table = [] {
        float* t = new float[65536];
        for (uint32_t i = 0; i < 65536; ++i) t[i] = core::half_to_float(static_cast<uint16_t>(i));
        return t;
    }();
    return table;
}

}  // namespace odnn::cpu
