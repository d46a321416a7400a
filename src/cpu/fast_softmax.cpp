// cudnnSoftmaxForward / Backward for FLOAT tensors that are densely packed and laid out
// alike, where the softmax's dims (C for CHANNEL, C, H, W... for INSTANCE) are one block
// of memory: NCHW and NHWC in both modes. Each call is then `outer` groups of `len`
// values `inner` apart (NCHW CHANNEL: inner = H * W; NHWC CHANNEL and INSTANCE: inner = 1),
// and a thread takes a group and a run of up to kChunk inner positions at a time, keeping
// their maxima and sums in arrays the inner loops vectorise over. Values are computed in
// double and rounded once on store, as the reference does; only the order of the sum of
// exponentials can differ from it (memory order rather than the logical order of the
// reduced dims: NHWC INSTANCE), which can change that double sum in its last bits.
// Other types, strided views and other layouts are left to the reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/activation_softmax.hpp"
#include "core/impl_registry.hpp"
#include "cpu/dense_layout.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

constexpr int64_t kChunk = 256;  // inner positions a thread handles together
constexpr int64_t kParallelMin = int64_t{1} << 14;
constexpr int64_t kKeepMax = int64_t{1} << 16;  // exponentials a thread keeps (512 KiB)

// The [outer][len][inner] view of a dense operand for the split's reduced dims, or
// false where those dims are not one contiguous block of memory.
struct Blocks {
    int64_t outer = 1, len = 1, inner = 1;
};

bool blocks_of(const core::Operand& o, const core::SoftmaxSplit& s, Blocks* b) {
    if (o.vect != 1 || !dense_strides(o.nb_dims, o.dims, o.strides)) return false;
    // The reduced dims of extent > 1 must tile [inner, inner * len) exactly.
    int64_t lo = -1, len = 1;
    for (int i = 0; i < s.nb_reduced; ++i) {
        const int d = s.reduced[i];
        if (o.dims[d] == 1) continue;
        len *= o.dims[d];
        if (lo < 0 || o.strides[d] < lo) lo = o.strides[d];
    }
    if (lo < 0) lo = 1;  // nothing reduced: groups of one
    for (int i = 0; i < s.nb_reduced; ++i) {
        const int d = s.reduced[i];
        if (o.dims[d] > 1 && (o.strides[d] < lo || o.strides[d] >= lo * len)) return false;
    }
    // ... and every kept dim lie wholly below or above that block.
    for (int i = 0; i < s.nb_kept; ++i) {
        const int d = s.kept[i];
        if (o.dims[d] == 1) continue;
        const bool below = o.strides[d] * o.dims[d] <= lo;
        const bool above = o.strides[d] >= lo * len;
        if (!below && !above) return false;
    }
    b->inner = lo;
    b->len = len;
    b->outer = o.count() / (len * lo);
    return true;
}

Status check_like(const core::Operand& o, const char* name, const core::Operand& ref, const char* ref_name) {
    ODNN_REQUIRE_SUPPORTED(o.dtype == CUDNN_DATA_FLOAT, "%s is not FLOAT", name);
    ODNN_REQUIRE_SUPPORTED(&o == &ref || same_strides(o.nb_dims, o.dims, o.strides, ref.nb_dims, ref.dims, ref.strides),
                           "%s and %s are laid out differently", name, ref_name);
    return Status::ok();
}

// Calls body(base, i0, n) for every group and run of inner positions, in parallel: base is
// the group's first element, i0 the first inner position, n <= kChunk of them.
template <class Body>
void for_tiles(const Blocks& b, Body body) {
    const int64_t runs = (b.inner + kChunk - 1) / kChunk, tiles = b.outer * runs;
#pragma omp parallel for schedule(static) if (b.outer * b.len * b.inner > kParallelMin)
    for (int64_t t = 0; t < tiles; ++t) {
        const int64_t o = t / runs, i0 = (t % runs) * kChunk;
        body(o * b.len * b.inner, i0, b.inner - i0 < kChunk ? b.inner - i0 : kChunk);
    }
}

float blended(double v, double alpha, double beta, const float* out) {
    return static_cast<float>(beta == 0.0 ? alpha * v : alpha * v + beta * static_cast<double>(*out));
}

class FastSoftmaxFwd final : public core::Impl<core::SoftmaxFwdProblem> {
public:
    const char* name() const override { return "fast_softmax_fwd"; }
    Status check(const core::SoftmaxFwdProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_like(p.x, "x", p.x, "x"));
        ODNN_RETURN_IF_ERROR(check_like(p.y, "y", p.x, "x"));
        Blocks b;
        ODNN_REQUIRE_SUPPORTED(blocks_of(p.x, p.split, &b), "x is not dense with the softmax dims in one block");
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::SoftmaxFwdProblem& p) const override {
        Blocks b;
        blocks_of(p.x, p.split, &b);
        const float* x = static_cast<const float*>(p.x_data);
        float* y = static_cast<float*>(p.y_data);
        const bool log_mode = p.algo == CUDNN_SOFTMAX_LOG;
        const double alpha = p.scale.alpha, beta = p.scale.beta;
        const int64_t len = b.len, inner = b.inner;
        // Softmax keeps the tile's exponentials for the last pass where they fit in a
        // thread's buffer (the reference computes each twice: the same values).
        const bool keep = !log_mode && len * std::min(inner, kChunk) <= kKeepMax;
        for_tiles(b, [&](int64_t base, int64_t i0, int64_t n) {
            thread_local std::vector<double> kept;
            if (keep && kept.size() < static_cast<size_t>(len * n)) kept.resize(static_cast<size_t>(len * n));
            double m[kChunk], sum[kChunk];
            for (int64_t i = 0; i < n; ++i) {
                m[i] = -INFINITY;
                sum[i] = 0.0;
            }
            const float* xg = x + base + i0;
            float* yg = y + base + i0;
            for (int64_t k = 0; k < len; ++k) {
                const float* xr = xg + k * inner;
                for (int64_t i = 0; i < n; ++i) {
                    const double v = xr[i];
                    m[i] = v > m[i] ? v : m[i];
                }
            }
            for (int64_t k = 0; k < len; ++k) {
                const float* xr = xg + k * inner;
                if (keep) {
                    double* e = kept.data() + k * n;
                    for (int64_t i = 0; i < n; ++i) {
                        e[i] = std::exp(static_cast<double>(xr[i]) - m[i]);
                        sum[i] += e[i];
                    }
                } else {
                    for (int64_t i = 0; i < n; ++i) sum[i] += std::exp(static_cast<double>(xr[i]) - m[i]);
                }
            }
            if (log_mode)
                for (int64_t i = 0; i < n; ++i) sum[i] = std::log(sum[i]);  // (log of the sum)
            for (int64_t k = 0; k < len; ++k) {
                const float* xr = xg + k * inner;
                float* yr = yg + k * inner;
                const double* e = keep ? kept.data() + k * n : nullptr;
                for (int64_t i = 0; i < n; ++i) {
                    const double v = static_cast<double>(xr[i]) - m[i];
                    const double r = log_mode ? v - sum[i] : (e ? e[i] : std::exp(v)) / sum[i];
                    yr[i] = blended(r, alpha, beta, yr + i);
                }
            }
        });
        return Status::ok();
    }
};

class FastSoftmaxBwd final : public core::Impl<core::SoftmaxBwdProblem> {
public:
    const char* name() const override { return "fast_softmax_bwd"; }
    Status check(const core::SoftmaxBwdProblem& p) const override {
        ODNN_RETURN_IF_ERROR(check_like(p.dx, "dx", p.dx, "dx"));
        ODNN_RETURN_IF_ERROR(check_like(p.y, "y", p.dx, "dx"));
        ODNN_RETURN_IF_ERROR(check_like(p.dy, "dy", p.dx, "dx"));
        Blocks b;
        ODNN_REQUIRE_SUPPORTED(blocks_of(p.dx, p.split, &b), "dx is not dense with the softmax dims in one block");
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::SoftmaxBwdProblem& p) const override {
        Blocks b;
        blocks_of(p.dx, p.split, &b);
        const float* y = static_cast<const float*>(p.y_data);
        const float* dy = static_cast<const float*>(p.dy_data);
        float* dx = static_cast<float*>(p.dx_data);
        const bool log_mode = p.algo == CUDNN_SOFTMAX_LOG;
        const double alpha = p.scale.alpha, beta = p.scale.beta;
        const int64_t len = b.len, inner = b.inner;
        for_tiles(b, [&](int64_t base, int64_t i0, int64_t n) {
            double sum[kChunk];
            for (int64_t i = 0; i < n; ++i) sum[i] = 0.0;
            const int64_t at = base + i0;
            for (int64_t k = 0; k < len; ++k) {
                const float* yr = y + at + k * inner;
                const float* dyr = dy + at + k * inner;
                if (log_mode)
                    for (int64_t i = 0; i < n; ++i) sum[i] += static_cast<double>(dyr[i]);
                else
                    for (int64_t i = 0; i < n; ++i) sum[i] += static_cast<double>(dyr[i]) * static_cast<double>(yr[i]);
            }
            for (int64_t k = 0; k < len; ++k) {
                const float* yr = y + at + k * inner;
                const float* dyr = dy + at + k * inner;
                float* dxr = dx + at + k * inner;
                for (int64_t i = 0; i < n; ++i) {
                    const double yv = yr[i], g = dyr[i];
                    // softmax: dx = y (dy - sum(dy y)); log-softmax: dx = dy - exp(y) sum(dy).
                    const double v = log_mode ? g - std::exp(yv) * sum[i] : yv * (g - sum[i]);
                    dxr[i] = blended(v, alpha, beta, dxr + i);
                }
            }
        });
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::SoftmaxFwdProblem, FastSoftmaxFwd, core::kPriorityFast);
ODNN_REGISTER_IMPL(cpu, core::SoftmaxBwdProblem, FastSoftmaxBwd, core::kPriorityFast);

}  // namespace odnn::cpu
