// Reading and writing one element of any cuDNN data type as a double, for
// generic (type-erased) kernels on both backends. `index` counts elements; for
// 4-bit types two elements share a byte (low nibble first).
#pragma once

#include <stdint.h>

#include "cudnn_graph.h"
#include "core/scalar_convert.hpp"

namespace odnn::core {

// Types the generic load/store handles.
ODNN_HD bool elem_numeric(int dtype) {
    switch (dtype) {
        case CUDNN_DATA_FLOAT: case CUDNN_DATA_DOUBLE: case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16:
        case CUDNN_DATA_INT8: case CUDNN_DATA_UINT8: case CUDNN_DATA_INT32: case CUDNN_DATA_INT64:
        case CUDNN_DATA_UINT32: case CUDNN_DATA_INT8x4: case CUDNN_DATA_UINT8x4: case CUDNN_DATA_INT8x32:
        case CUDNN_DATA_BOOLEAN: case CUDNN_DATA_FP8_E4M3: case CUDNN_DATA_FP8_E5M2: case CUDNN_DATA_INT4:
        case CUDNN_DATA_UINT4:
            return true;
        default:
            return false;
    }
}

ODNN_HD double round_half_even(double v) {
    double r = static_cast<double>(static_cast<int64_t>(v >= 0 ? v + 0.5 : v - 0.5));
    if ((r - v == 0.5 || v - r == 0.5) && static_cast<int64_t>(r) % 2 != 0) r -= (v >= 0 ? 1.0 : -1.0);
    return r;
}

// Integers saturate; NaN becomes 0.
ODNN_HD int64_t saturate_int(double v, double lo, double hi) {
    if (!(v == v)) return 0;
    v = round_half_even(v < lo ? lo : (v > hi ? hi : v));
    return static_cast<int64_t>(v);
}

ODNN_HD double load_elem(const void* base, int64_t index, int dtype) {
    const unsigned char* p = static_cast<const unsigned char*>(base);
    switch (dtype) {
        case CUDNN_DATA_FLOAT: return reinterpret_cast<const float*>(p)[index];
        case CUDNN_DATA_DOUBLE: return reinterpret_cast<const double*>(p)[index];
        case CUDNN_DATA_HALF: return half_to_float(reinterpret_cast<const uint16_t*>(p)[index]);
        case CUDNN_DATA_BFLOAT16: return bf16_to_float(reinterpret_cast<const uint16_t*>(p)[index]);
        case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32:
            return reinterpret_cast<const int8_t*>(p)[index];
        case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4: return p[index];
        case CUDNN_DATA_BOOLEAN: return p[index] ? 1.0 : 0.0;
        case CUDNN_DATA_INT32: return reinterpret_cast<const int32_t*>(p)[index];
        case CUDNN_DATA_UINT32: return reinterpret_cast<const uint32_t*>(p)[index];
        case CUDNN_DATA_INT64: return static_cast<double>(reinterpret_cast<const int64_t*>(p)[index]);
        case CUDNN_DATA_FP8_E4M3: return Fp8E4M3::decode(p[index]);
        case CUDNN_DATA_FP8_E5M2: return Fp8E5M2::decode(p[index]);
        case CUDNN_DATA_INT4: {
            int v = (p[index >> 1] >> ((index & 1) * 4)) & 0xf;
            return v >= 8 ? v - 16 : v;
        }
        case CUDNN_DATA_UINT4: return (p[index >> 1] >> ((index & 1) * 4)) & 0xf;
        default: return 0.0;
    }
}

ODNN_HD void store_elem(void* base, int64_t index, int dtype, double v) {
    unsigned char* p = static_cast<unsigned char*>(base);
    switch (dtype) {
        case CUDNN_DATA_FLOAT: reinterpret_cast<float*>(p)[index] = static_cast<float>(v); break;
        case CUDNN_DATA_DOUBLE: reinterpret_cast<double*>(p)[index] = v; break;
        case CUDNN_DATA_HALF:
            reinterpret_cast<uint16_t*>(p)[index] = float_to_half(static_cast<float>(v));
            break;
        case CUDNN_DATA_BFLOAT16:
            reinterpret_cast<uint16_t*>(p)[index] = float_to_bf16(static_cast<float>(v));
            break;
        case CUDNN_DATA_INT8: case CUDNN_DATA_INT8x4: case CUDNN_DATA_INT8x32:
            reinterpret_cast<int8_t*>(p)[index] = static_cast<int8_t>(saturate_int(v, -128.0, 127.0));
            break;
        case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4:
            p[index] = static_cast<uint8_t>(saturate_int(v, 0.0, 255.0));
            break;
        case CUDNN_DATA_BOOLEAN: p[index] = v != 0.0 ? 1 : 0; break;
        case CUDNN_DATA_INT32:
            reinterpret_cast<int32_t*>(p)[index] = static_cast<int32_t>(saturate_int(v, -2147483648.0, 2147483647.0));
            break;
        case CUDNN_DATA_UINT32:
            reinterpret_cast<uint32_t*>(p)[index] = static_cast<uint32_t>(saturate_int(v, 0.0, 4294967295.0));
            break;
        case CUDNN_DATA_INT64:
            reinterpret_cast<int64_t*>(p)[index] = saturate_int(v, -9223372036854775808.0, 9223372036854774784.0);
            break;
        case CUDNN_DATA_FP8_E4M3: p[index] = static_cast<uint8_t>(Fp8E4M3::encode(static_cast<float>(v))); break;
        case CUDNN_DATA_FP8_E5M2: p[index] = static_cast<uint8_t>(Fp8E5M2::encode(static_cast<float>(v))); break;
        case CUDNN_DATA_INT4: case CUDNN_DATA_UINT4: {
            const int64_t q = dtype == CUDNN_DATA_INT4 ? saturate_int(v, -8.0, 7.0) : saturate_int(v, 0.0, 15.0);
            const int shift = static_cast<int>(index & 1) * 4;
            unsigned char& b = p[index >> 1];
            b = static_cast<unsigned char>((b & ~(0xf << shift)) | ((q & 0xf) << shift));
            break;
        }
        default: break;
    }
}

// Offset (in elements) of the `linear`-th element of a strided tensor, row-major over dims.
ODNN_HD int64_t strided_offset(int64_t linear, int nb_dims, const int64_t* dims, const int64_t* strides) {
    int64_t off = 0;
    for (int d = nb_dims - 1; d >= 0; --d) {
        const int64_t i = linear % dims[d];
        linear /= dims[d];
        off += i * strides[d];
    }
    return off;
}

}  // namespace odnn::core
