#include "core/dtype.hpp"

namespace odnn::core {

bool dtype_is_known(cudnnDataType_t t) {
    const int v = static_cast<int>(t);
    return v >= 0 && v <= kMaxDataType;
}

const char* dtype_name(cudnnDataType_t t) {
    switch (static_cast<int>(t)) {
        case 0: return "FLOAT";
        case 1: return "DOUBLE";
        case 2: return "HALF";
        case 3: return "INT8";
        case 4: return "INT32";
        case 5: return "INT8x4";
        case 6: return "UINT8";
        case 7: return "UINT8x4";
        case 8: return "INT8x32";
        case 9: return "BFLOAT16";
        case 10: return "INT64";
        case 11: return "BOOLEAN";
        case 12: return "FP8_E4M3";
        case 13: return "FP8_E5M2";
        case 14: return "FAST_FLOAT_FOR_FP8";
        case 15: return "FP8_E8M0";
        case 16: return "FP4_E2M1";
        case 17: return "INT4";
        case 18: return "UINT4";
        case 19: return "UINT32";
        default: return "unknown data type";
    }
}

int dtype_bits(cudnnDataType_t t) {
    switch (static_cast<int>(t)) {
        case 0: return 32;   // FLOAT
        case 1: return 64;   // DOUBLE
        case 2: return 16;   // HALF
        case 3: return 8;    // INT8
        case 4: return 32;   // INT32
        case 5: return 32;   // INT8x4
        case 6: return 8;    // UINT8
        case 7: return 32;   // UINT8x4
        case 8: return 256;  // INT8x32
        case 9: return 16;   // BFLOAT16
        case 10: return 64;  // INT64
        case 11: return 8;   // BOOLEAN (one byte per element)
        case 12: return 8;   // FP8_E4M3
        case 13: return 8;   // FP8_E5M2
        case 14: return 32;  // FAST_FLOAT_FOR_FP8 (a compute type)
        case 15: return 8;   // FP8_E8M0
        case 16: return 4;   // FP4_E2M1
        case 17: return 4;   // INT4
        case 18: return 4;   // UINT4
        case 19: return 32;  // UINT32
        default: return 0;
    }
}

int dtype_vector_count(cudnnDataType_t t) {
    switch (static_cast<int>(t)) {
        case 5:
        case 7: return 4;
        case 8: return 32;
        default: return 1;
    }
}

bool dtype_is_float(cudnnDataType_t t) {
    switch (static_cast<int>(t)) {
        case 0:
        case 1:
        case 2:
        case 9:
        case 12:
        case 13:
        case 15:
        case 16: return true;
        default: return false;
    }
}

}  // namespace odnn::core
