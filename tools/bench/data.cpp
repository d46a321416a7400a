#include "data.hpp"

#include <cmath>
#include <cstring>

#include "core/scalar_convert.hpp"

namespace odnn_bench {

Dt dtype_of(const std::string& dt) {
    if (dt == "f64") return {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, 8};
    if (dt == "f16") return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, 2};
    if (dt == "bf16") return {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, 2};
    if (dt == "i8") return {CUDNN_DATA_INT8, CUDNN_DATA_INT32, 1};
    return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 4};
}

std::vector<unsigned char> make_data(size_t count, const Dt& t, unsigned seed) {
    std::vector<unsigned char> out(count * t.bytes);
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < count; ++i) {
        x = x * 1664525u + 1013904223u;
        const float v = static_cast<float>(static_cast<int>((x >> 24) % 9) - 4) * 0.25f;
        switch (t.data) {
            case CUDNN_DATA_DOUBLE: { const double d = v; std::memcpy(&out[i * 8], &d, 8); break; }
            case CUDNN_DATA_HALF: { const uint16_t h = odnn::core::float_to_half(v); std::memcpy(&out[i * 2], &h, 2); break; }
            case CUDNN_DATA_BFLOAT16: { const uint16_t b = odnn::core::float_to_bf16(v); std::memcpy(&out[i * 2], &b, 2); break; }
            case CUDNN_DATA_INT8: out[i] = static_cast<unsigned char>(static_cast<int8_t>(v * 4)); break;
            default: std::memcpy(&out[i * 4], &v, 4); break;
        }
    }
    return out;
}

std::vector<double> to_double(const std::vector<unsigned char>& raw, const Dt& t) {
    const size_t n = raw.size() / t.bytes;
    std::vector<double> out(n);
    for (size_t i = 0; i < n; ++i) {
        switch (t.data) {
            case CUDNN_DATA_DOUBLE: std::memcpy(&out[i], &raw[i * 8], 8); break;
            case CUDNN_DATA_HALF: { uint16_t h; std::memcpy(&h, &raw[i * 2], 2); out[i] = odnn::core::half_to_float(h); break; }
            case CUDNN_DATA_BFLOAT16: { uint16_t b; std::memcpy(&b, &raw[i * 2], 2); out[i] = odnn::core::bf16_to_float(b); break; }
            case CUDNN_DATA_INT8: out[i] = static_cast<int8_t>(raw[i]); break;
            default: { float f; std::memcpy(&f, &raw[i * 4], 4); out[i] = f; break; }
        }
    }
    return out;
}

std::vector<unsigned char> from_double(const std::vector<double>& v, const Dt& t) {
    std::vector<unsigned char> out(v.size() * t.bytes);
    for (size_t i = 0; i < v.size(); ++i) {
        switch (t.data) {
            case CUDNN_DATA_DOUBLE: std::memcpy(&out[i * 8], &v[i], 8); break;
            case CUDNN_DATA_HALF: { const uint16_t h = odnn::core::float_to_half(static_cast<float>(v[i])); std::memcpy(&out[i * 2], &h, 2); break; }
            case CUDNN_DATA_BFLOAT16: { const uint16_t b = odnn::core::float_to_bf16(static_cast<float>(v[i])); std::memcpy(&out[i * 2], &b, 2); break; }
            case CUDNN_DATA_INT8: {
                const double r = std::nearbyint(v[i]);
                out[i] = static_cast<unsigned char>(static_cast<int8_t>(r > 127 ? 127 : r < -128 ? -128 : r));
                break;
            }
            default: { const float f = static_cast<float>(v[i]); std::memcpy(&out[i * 4], &f, 4); break; }
        }
    }
    return out;
}

void strides_for(int nb, const int* dims, bool nhwc, int* strides) {
    if (!nhwc) {
        int s = 1;
        for (int i = nb - 1; i >= 0; --i) {
            strides[i] = s;
            s *= dims[i];
        }
        return;
    }
    int s = 1;
    strides[1] = s;
    s *= dims[1];
    for (int i = nb - 1; i >= 2; --i) {
        strides[i] = s;
        s *= dims[i];
    }
    strides[0] = s;
}

size_t count(int nb, const int* d) {
    size_t n = 1;
    for (int i = 0; i < nb; ++i) n *= static_cast<size_t>(d[i]);
    return n;
}

std::string status_text(CudnnLib& lib, const char* what, cudnnStatus_t s) {
    char why[512] = "";
    if (auto f = reinterpret_cast<decltype(&::cudnnGetLastErrorString)>(lib.sym("cudnnGetLastErrorString")))
        f(why, sizeof why);
    const char* name = reinterpret_cast<decltype(&::cudnnGetErrorString)>(lib.sym("cudnnGetErrorString"))(s);
    return std::string(what) + ": " + name + (why[0] ? std::string(" (") + why + ")" : "");
}


}  // namespace odnn_bench
