// Shared pieces of the normalization / pooling / dropout / LRN / sampler tests (CPU
// numerics here, CUDA-vs-CPU in tests/gpu): host tensors of any layout and data type
// with the test's own element conversions, NaN poisoning, seeded fills, case files
// (one problem per line, key=value), and tolerance helpers. Header-only so the GPU
// test can include it.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_util.hpp"

namespace normtest {

// ---- Element conversions (the test's own; the library has its own) ----

inline float bf16_to_float(uint16_t b) {
    const uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline uint16_t float_to_bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

inline size_t dt_size(cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_DOUBLE: return 8;
        case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
        case CUDNN_DATA_INT8: return 1;
        default: return 4;
    }
}

// Unit roundoff of the storage type.
inline double dt_eps(cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_DOUBLE: return 1.2e-16;
        case CUDNN_DATA_HALF: return 4.9e-4;
        case CUDNN_DATA_BFLOAT16: return 3.9e-3;
        case CUDNN_DATA_INT8: return 0.5;
        default: return 6e-8;
    }
}

// The spacing of a type's values at zero (its smallest subnormal): an output that rounds
// into that range is off by up to half of it whatever its relative error, so comparisons
// of outputs stored in the type take it as an absolute floor.
inline double dt_tiny(cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_HALF: return 0x1p-24;
        case CUDNN_DATA_BFLOAT16: return 0x1p-133;
        case CUDNN_DATA_FLOAT: return 0x1p-149;
        default: return 0.0;
    }
}

inline cudnnDataType_t parse_dt(const std::string& s) {
    if (s == "f64") return CUDNN_DATA_DOUBLE;
    if (s == "f16") return CUDNN_DATA_HALF;
    if (s == "bf16") return CUDNN_DATA_BFLOAT16;
    if (s == "i8") return CUDNN_DATA_INT8;
    return CUDNN_DATA_FLOAT;
}

inline double load_raw(const unsigned char* p, cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_DOUBLE: { double v; std::memcpy(&v, p, 8); return v; }
        case CUDNN_DATA_HALF: { _Float16 v; std::memcpy(&v, p, 2); return static_cast<double>(v); }
        case CUDNN_DATA_BFLOAT16: { uint16_t v; std::memcpy(&v, p, 2); return bf16_to_float(v); }
        case CUDNN_DATA_INT8: return static_cast<int8_t>(*p);
        default: { float v; std::memcpy(&v, p, 4); return v; }
    }
}

inline void store_raw(unsigned char* p, cudnnDataType_t dt, double v) {
    switch (dt) {
        case CUDNN_DATA_DOUBLE: std::memcpy(p, &v, 8); break;
        case CUDNN_DATA_HALF: { const _Float16 h = static_cast<_Float16>(static_cast<float>(v)); std::memcpy(p, &h, 2); break; }
        case CUDNN_DATA_BFLOAT16: { const uint16_t b = float_to_bf16(static_cast<float>(v)); std::memcpy(p, &b, 2); break; }
        case CUDNN_DATA_INT8: {
            const double r = std::nearbyint(std::fmin(127.0, std::fmax(-128.0, v)));
            *p = static_cast<unsigned char>(static_cast<int8_t>(r));
            break;
        }
        default: { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
    }
}

// The value v becomes once stored in dt.
inline double quantize(cudnnDataType_t dt, double v) {
    unsigned char b[8];
    store_raw(b, dt, v);
    return load_raw(b, dt);
}

// ---- Host tensors ----

enum class Layout { nchw, nhwc, strided };

inline Layout parse_layout(const std::string& s) {
    if (s == "nhwc") return Layout::nhwc;
    if (s == "strided") return Layout::strided;
    return Layout::nchw;
}

class Tensor {
public:
    cudnnDataType_t dt = CUDNN_DATA_FLOAT;
    std::vector<int> dims, strides;
    std::vector<unsigned char> buf;  // the addressed span plus slack, all poisoned at first
    cudnnTensorDescriptor_t desc = nullptr;

    // strided: channels-last or channels-first (from `seed`) with a gap after every dim.
    // row_pad: that many more elements after each run of the innermost dim (NCHW: rows,
    // NHWC: channel vectors, with a larger stride).
    static std::unique_ptr<Tensor> make(cudnnDataType_t dt, const std::vector<int>& dims, Layout layout,
                                        uint64_t seed = 0, int row_pad = 0) {
        auto t = std::unique_ptr<Tensor>(new Tensor());
        t->dt = dt;
        t->dims = dims;
        const int nd = static_cast<int>(dims.size());
        std::vector<int> order;  // innermost first
        const bool last = layout == Layout::nhwc || (layout == Layout::strided && (seed & 1));
        if (last && nd >= 3) {
            order.push_back(1);
            for (int i = nd - 1; i >= 2; --i) order.push_back(i);
            order.push_back(0);
        } else {
            for (int i = nd - 1; i >= 0; --i) order.push_back(i);
        }
        t->strides.assign(nd, 0);
        int64_t s = 1;
        int gap = 0;
        for (int i : order) {
            t->strides[i] = static_cast<int>(s);
            if (layout == Layout::strided) gap = 1 + static_cast<int>((seed >> (2 * i + 1)) % 3);
            s = s * dims[i] + gap + (i == order.front() ? row_pad : 0);
        }
        int64_t span = 1;
        for (int i = 0; i < nd; ++i) span += static_cast<int64_t>(dims[i] - 1) * t->strides[i];
        t->buf.assign(static_cast<size_t>(span + 16) * dt_size(dt), 0xff);
        EXPECT_EQ(cudnnCreateTensorDescriptor(&t->desc), CUDNN_STATUS_SUCCESS);
        EXPECT_EQ(cudnnSetTensorNdDescriptor(t->desc, dt, nd, t->dims.data(), t->strides.data()),
                  CUDNN_STATUS_SUCCESS)
            << odnn_test::last_error();
        return t;
    }
    Tensor(const Tensor&) = delete;
    Tensor& operator=(const Tensor&) = delete;
    ~Tensor() {
        if (desc) cudnnDestroyTensorDescriptor(desc);
    }

    int nd() const { return static_cast<int>(dims.size()); }
    int64_t count() const {
        int64_t n = 1;
        for (int d : dims) n *= d;
        return n;
    }
    // Offset (elements) of the i-th element in row-major logical order.
    int64_t offset(int64_t i) const {
        int64_t off = 0;
        for (int d = nd() - 1; d >= 0; --d) {
            off += (i % dims[d]) * strides[d];
            i /= dims[d];
        }
        return off;
    }
    double get(int64_t i) const { return load_raw(&buf[static_cast<size_t>(offset(i)) * dt_size(dt)], dt); }
    void set(int64_t i, double v) { store_raw(&buf[static_cast<size_t>(offset(i)) * dt_size(dt)], dt, v); }
    void* data() { return buf.data(); }
    const void* data() const { return buf.data(); }
    size_t bytes() const { return buf.size(); }

    std::vector<double> values() const {
        std::vector<double> v(static_cast<size_t>(count()));
        for (int64_t i = 0; i < count(); ++i) v[static_cast<size_t>(i)] = get(i);
        return v;
    }
    void set_values(const std::vector<double>& v) {
        for (int64_t i = 0; i < count(); ++i) set(i, v[static_cast<size_t>(i)]);
    }
    void fill_uniform(std::mt19937_64& rng, double lo, double hi) {
        std::uniform_real_distribution<double> u(lo, hi);
        for (int64_t i = 0; i < count(); ++i) set(i, u(rng));
    }
    void poison() { std::fill(buf.begin(), buf.end(), 0xff); }
    // Elements of the view that are still NaN (never written).
    int64_t nan_count() const {
        int64_t n = 0;
        for (int64_t i = 0; i < count(); ++i) n += std::isnan(get(i)) ? 1 : 0;
        return n;
    }
    // Bytes outside the view that differ from `before` (writes outside the output).
    size_t changed_outside_view(const std::vector<unsigned char>& before) const {
        std::vector<bool> in_view(buf.size(), false);
        for (int64_t i = 0; i < count(); ++i)
            for (size_t b = 0; b < dt_size(dt); ++b) in_view[static_cast<size_t>(offset(i)) * dt_size(dt) + b] = true;
        size_t n = 0;
        for (size_t i = 0; i < buf.size(); ++i) n += (!in_view[i] && buf[i] != before[i]) ? 1 : 0;
        return n;
    }

private:
    Tensor() = default;
};

using TensorPtr = std::unique_ptr<Tensor>;

// A dense vector of FLOAT or DOUBLE values (scale, bias, means, ...) with its descriptor.
inline TensorPtr param_tensor(cudnnDataType_t dt, const std::vector<int>& dims) {
    return Tensor::make(dt, dims, Layout::nchw);
}

// ---- Where a handle's data pointers live ----

// The CPU backend takes the host buffers themselves; the GPU test supplies device
// copies. ptr() gives the tensor's buffer as the handle sees it (made from the host
// bytes on first use); pull() brings it back into the host tensor.
class Memory {
public:
    virtual ~Memory() = default;
    virtual void* ptr(Tensor& t) = 0;
    virtual void push(Tensor& t) = 0;
    virtual void pull(Tensor& t) = 0;
    virtual void* scratch(size_t bytes) = 0;  // zero-filled, lives as long as the Memory
};

class HostMemory final : public Memory {
public:
    void* ptr(Tensor& t) override { return t.data(); }
    void push(Tensor&) override {}
    void pull(Tensor&) override {}
    void* scratch(size_t bytes) override {
        if (bytes == 0) return nullptr;
        blocks_.emplace_back(bytes, 0);
        return blocks_.back().data();
    }

private:
    std::vector<std::vector<unsigned char>> blocks_;
};

// ---- Case files ----

struct Case {
    std::string file;
    int line = 0;
    std::string text;
    std::string op;
    std::map<std::string, std::string> kv;

    std::string where() const { return file + ":" + std::to_string(line) + ": " + text; }
    std::string get(const std::string& k, const std::string& def = "") const {
        auto it = kv.find(k);
        return it == kv.end() ? def : it->second;
    }
    int geti(const std::string& k, int def) const {
        auto it = kv.find(k);
        return it == kv.end() ? def : std::stoi(it->second);
    }
    double getd(const std::string& k, double def) const {
        auto it = kv.find(k);
        return it == kv.end() ? def : std::stod(it->second);
    }
    bool has(const std::string& k) const { return kv.count(k) != 0; }
    // Stable per-line seed.
    uint64_t seed() const {
        uint64_t h = 1469598103934665603ull;
        for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
        return h;
    }
    // N, C, then d (if given), h, w.
    std::vector<int> dims() const {
        std::vector<int> d = {geti("n", 1), geti("c", 1)};
        if (has("d")) d.push_back(geti("d", 1));
        d.push_back(geti("h", 1));
        d.push_back(geti("w", 1));
        return d;
    }
    std::string name() const {
        std::string s = "l" + std::to_string(line);
        for (const auto& [k, v] : kv) s += "_" + k + v;
        for (char& c : s)
            if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
        return s;
    }
};

inline void PrintTo(const Case& c, std::ostream* os) { *os << c.where(); }

// Every line of `file` (relative to the cases directory) whose op is `op`.
inline std::vector<Case> load_cases(const std::string& dir, const std::string& file, const std::string& op) {
    std::vector<Case> out;
    std::ifstream in(dir + "/" + file);
    std::string line;
    int no = 0;
    while (std::getline(in, line)) {
        ++no;
        const auto hash = line.find('#');
        if (hash != std::string::npos) line = line.substr(0, hash);
        std::istringstream ss(line);
        Case c;
        if (!(ss >> c.op) || c.op != op) continue;
        c.file = file;
        c.line = no;
        c.text = line;
        while (c.text.size() && std::isspace(static_cast<unsigned char>(c.text.back()))) c.text.pop_back();
        std::string tok;
        while (ss >> tok) {
            const auto eq = tok.find('=');
            if (eq == std::string::npos) continue;
            c.kv[tok.substr(0, eq)] = tok.substr(eq + 1);
        }
        out.push_back(c);
    }
    return out;
}

// ---- Comparison ----

// Largest |got - want| / (atol + rtol * |want|) over the elements, and where; NaN in
// got where want is finite counts as infinitely wrong.
struct Diff {
    double worst = 0.0;
    int64_t at = -1;
    double got = 0.0, want = 0.0;
};

inline Diff compare(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol) {
    Diff d;
    for (size_t i = 0; i < want.size(); ++i) {
        const double g = got[i], w = want[i];
        double e;
        if (std::isnan(w) || std::isnan(g))
            e = (std::isnan(w) && std::isnan(g)) ? 0.0 : INFINITY;
        else if (std::isinf(w) || std::isinf(g))
            e = g == w ? 0.0 : INFINITY;
        else
            e = std::fabs(g - w) / (atol + rtol * std::fabs(w));
        if (e > d.worst || d.at < 0) {
            if (e > d.worst) d.worst = e;
            d.at = static_cast<int64_t>(i);
            d.got = g;
            d.want = w;
        }
    }
    return d;
}

inline double max_abs(const std::vector<double>& v) {
    double m = 0.0;
    for (double x : v)
        if (std::isfinite(x)) m = std::fmax(m, std::fabs(x));
    return m;
}

#define NORMTEST_EXPECT_CLOSE(GOT, WANT, RTOL, ATOL, WHAT)                                                  \
    do {                                                                                                    \
        const ::normtest::Diff d_ = ::normtest::compare((GOT), (WANT), (RTOL), (ATOL));                    \
        EXPECT_LE(d_.worst, 1.0) << (WHAT) << ": element " << d_.at << " got " << d_.got << " want " << d_.want; \
    } while (0)

}  // namespace normtest
