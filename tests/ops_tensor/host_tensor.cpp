#include "ops_tensor/host_tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace ops_test {

size_t dtype_size(cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_FLOAT: case CUDNN_DATA_INT32: return 4;
        case CUDNN_DATA_DOUBLE: return 8;
        case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
        default: return 1;  // INT8, UINT8 and the vector types' lanes
    }
}

bool dtype_is_float(cudnnDataType_t dt) {
    return dt == CUDNN_DATA_FLOAT || dt == CUDNN_DATA_DOUBLE || dt == CUDNN_DATA_HALF || dt == CUDNN_DATA_BFLOAT16;
}

double dtype_eps(cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_FLOAT: return std::ldexp(1.0, -23);
        case CUDNN_DATA_DOUBLE: return std::ldexp(1.0, -52);
        case CUDNN_DATA_HALF: return std::ldexp(1.0, -10);
        case CUDNN_DATA_BFLOAT16: return std::ldexp(1.0, -7);
        default: return 0.0;
    }
}

cudnnDataType_t parse_dtype(const std::string& s) {
    if (s == "f32") return CUDNN_DATA_FLOAT;
    if (s == "f64") return CUDNN_DATA_DOUBLE;
    if (s == "f16") return CUDNN_DATA_HALF;
    if (s == "bf16") return CUDNN_DATA_BFLOAT16;
    if (s == "i8") return CUDNN_DATA_INT8;
    if (s == "i32") return CUDNN_DATA_INT32;
    if (s == "u8") return CUDNN_DATA_UINT8;
    if (s == "i8x4") return CUDNN_DATA_INT8x4;
    if (s == "i8x32") return CUDNN_DATA_INT8x32;
    throw std::runtime_error("unknown data type '" + s + "'");
}

std::string dtype_tag(cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_FLOAT: return "f32";
        case CUDNN_DATA_DOUBLE: return "f64";
        case CUDNN_DATA_HALF: return "f16";
        case CUDNN_DATA_BFLOAT16: return "bf16";
        case CUDNN_DATA_INT8: return "i8";
        case CUDNN_DATA_INT32: return "i32";
        case CUDNN_DATA_UINT8: return "u8";
        case CUDNN_DATA_INT8x4: return "i8x4";
        case CUDNN_DATA_INT8x32: return "i8x32";
        default: return "dt" + std::to_string(static_cast<int>(dt));
    }
}

namespace {

uint16_t to_bf16_bits(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if (std::isnan(f)) return 0x7fc0;
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
}

float from_bf16_bits(uint16_t b) {
    const uint32_t x = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

double saturate(double v, double lo, double hi) {
    if (std::isnan(v)) return 0.0;
    return std::nearbyint(std::min(hi, std::max(lo, v)));
}

}  // namespace

double round_to(cudnnDataType_t dt, double v) {
    switch (dt) {
        case CUDNN_DATA_FLOAT: return static_cast<float>(v);
        case CUDNN_DATA_DOUBLE: return v;
        // Through float, as the library stores: double -> float -> half.
        case CUDNN_DATA_HALF: return static_cast<double>(static_cast<_Float16>(static_cast<float>(v)));
        case CUDNN_DATA_BFLOAT16: return from_bf16_bits(to_bf16_bits(static_cast<float>(v)));
        case CUDNN_DATA_INT32: return saturate(v, -2147483648.0, 2147483647.0);
        case CUDNN_DATA_UINT8: return saturate(v, 0.0, 255.0);
        default: return saturate(v, -128.0, 127.0);
    }
}

int64_t HostTensor::count() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

int64_t HostTensor::offset(const std::vector<int64_t>& idx) const {
    int64_t o = 0;
    for (size_t d = 0; d < dims.size(); ++d) o += (d == 1 && vect > 1 ? idx[d] / vect : idx[d]) * strides[d];
    return vect > 1 ? o * vect + idx[1] % vect : o;
}

double HostTensor::get(int64_t off) const {
    const unsigned char* p = bytes.data() + off * dtype_size(dt);
    switch (dt) {
        case CUDNN_DATA_FLOAT: { float f; std::memcpy(&f, p, 4); return f; }
        case CUDNN_DATA_DOUBLE: { double d; std::memcpy(&d, p, 8); return d; }
        case CUDNN_DATA_HALF: { _Float16 h; std::memcpy(&h, p, 2); return static_cast<double>(h); }
        case CUDNN_DATA_BFLOAT16: { uint16_t b; std::memcpy(&b, p, 2); return from_bf16_bits(b); }
        case CUDNN_DATA_INT32: { int32_t i; std::memcpy(&i, p, 4); return i; }
        case CUDNN_DATA_UINT8: return *p;
        default: return static_cast<int8_t>(*p);
    }
}

void HostTensor::set(int64_t off, double v) {
    unsigned char* p = bytes.data() + off * dtype_size(dt);
    switch (dt) {
        case CUDNN_DATA_FLOAT: { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
        case CUDNN_DATA_DOUBLE: std::memcpy(p, &v, 8); break;
        case CUDNN_DATA_HALF: { const _Float16 h = static_cast<_Float16>(static_cast<float>(v)); std::memcpy(p, &h, 2); break; }
        case CUDNN_DATA_BFLOAT16: { const uint16_t b = to_bf16_bits(static_cast<float>(v)); std::memcpy(p, &b, 2); break; }
        case CUDNN_DATA_INT32: { const int32_t i = static_cast<int32_t>(round_to(dt, v)); std::memcpy(p, &i, 4); break; }
        case CUDNN_DATA_UINT8: *p = static_cast<uint8_t>(round_to(dt, v)); break;
        default: *p = static_cast<uint8_t>(static_cast<int8_t>(round_to(CUDNN_DATA_INT8, v))); break;
    }
}

int64_t HostTensor::storage_scalars() const {
    int64_t last = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
        const int64_t extent = (d == 1 && vect > 1) ? dims[d] / vect : dims[d];
        last += (extent - 1) * strides[d];
    }
    return (last + 1) * vect + 8;
}

std::vector<bool> HostTensor::addressed() const {
    std::vector<bool> a(static_cast<size_t>(storage_scalars()), false);
    for_each_index(dims, [&](const std::vector<int64_t>& idx) { a[static_cast<size_t>(offset(idx))] = true; });
    return a;
}

std::vector<int64_t> make_strides(const std::vector<int64_t>& dims, const std::string& layout, std::mt19937_64& rng) {
    const int nb = static_cast<int>(dims.size());
    std::vector<int64_t> strides(dims.size());
    std::vector<int> order(dims.size());  // innermost first
    if (layout.find('x') != std::string::npos || std::isdigit(static_cast<unsigned char>(layout[0]))) {
        std::stringstream ss(layout);
        std::string tok;
        int i = 0;
        while (std::getline(ss, tok, 'x')) strides.at(i++) = std::stoll(tok);
        if (i != nb) throw std::runtime_error("explicit strides do not match the rank");
        return strides;
    }
    std::iota(order.begin(), order.end(), 0);
    std::reverse(order.begin(), order.end());  // nchw: last dim innermost
    bool gaps = false;
    if (layout == "nhwc" && nb >= 3) {
        order.clear();
        order.push_back(1);
        for (int d = nb - 1; d >= 2; --d) order.push_back(d);
        order.push_back(0);
    } else if (layout == "strided") {
        std::shuffle(order.begin(), order.end(), rng);
        gaps = true;
    } else if (layout != "nchw" && layout != "nhwc") {
        throw std::runtime_error("unknown layout '" + layout + "'");
    }
    int64_t s = 1;
    for (int d : order) {
        strides[d] = s;
        s *= dims[d] + (gaps ? static_cast<int64_t>(rng() % 3) : 0);
    }
    return strides;
}

HostTensor make_tensor(cudnnDataType_t dt, const std::vector<int64_t>& dims, const std::string& layout,
                       std::mt19937_64& rng, double poison) {
    HostTensor t;
    t.dt = dt;
    t.dims = dims;
    if (dt == CUDNN_DATA_INT8x4 || dt == CUDNN_DATA_INT8x32) {
        // NCHW_VECT_C: strides of packed NCHW over (n, c / vect, h, w), counted in vectors.
        t.vect = dt == CUDNN_DATA_INT8x4 ? 4 : 32;
        std::vector<int64_t> v = dims;
        v[1] /= t.vect;
        std::mt19937_64 unused;
        t.strides = make_strides(v, "nchw", unused);
    } else {
        t.strides = make_strides(dims, layout, rng);
    }
    t.bytes.assign(static_cast<size_t>(t.storage_scalars()) * dtype_size(dt), 0);
    for (int64_t i = 0; i < t.storage_scalars(); ++i) t.set(i, poison);
    return t;
}

void fill_uniform(HostTensor& t, double lo, double hi, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(lo, hi);
    for_each_index(t.dims, [&](const std::vector<int64_t>& idx) { t.put(idx, u(rng)); });
}

cudnnTensorDescriptor_t make_desc(const HostTensor& t) {
    cudnnTensorDescriptor_t d = nullptr;
    if (cudnnCreateTensorDescriptor(&d) != CUDNN_STATUS_SUCCESS) throw std::runtime_error("create descriptor");
    cudnnStatus_t s;
    if (t.vect > 1) {
        s = cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW_VECT_C, t.dt, static_cast<int>(t.dims[0]),
                                       static_cast<int>(t.dims[1]), static_cast<int>(t.dims[2]),
                                       static_cast<int>(t.dims[3]));
    } else {
        std::vector<int> dims(t.dims.begin(), t.dims.end()), strides(t.strides.begin(), t.strides.end());
        s = cudnnSetTensorNdDescriptor(d, t.dt, t.nb(), dims.data(), strides.data());
    }
    if (s != CUDNN_STATUS_SUCCESS) {
        cudnnDestroyTensorDescriptor(d);
        throw std::runtime_error(std::string("set descriptor: ") + cudnnGetErrorString(s));
    }
    return d;
}

}  // namespace ops_test
