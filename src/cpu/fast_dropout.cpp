// cudnnDropoutForward / Backward on the CPU for FLOAT, DOUBLE, HALF and BFLOAT16 (x and y
// of one type, any strides): the reference's mask and arithmetic (core/dropout_problem.hpp:
// element i of x's row-major logical order takes word i % 4 of Philox block start + i / 4;
// y = x * scale rounded once), so y, the reserve space and the states' offset are the
// reference's bit for bit. The elements are cut into chunks of whole 32-bit mask words,
// split over threads; a forward chunk draws its Philox blocks eight at a time
// (core::dropout_blocks) into its mask words, then both directions scale the kept
// elements: by rows of the dims x and y step through alike (NCHW packed: one row, whole
// mask words in a loop that vectorises), or, for x and y dense alike but not in logical
// order (NHWC), in memory order with every mask word drawn first. A dropped element is
// cleared by masking its bits (kept), not by a branch. The product x * scale is
// taken in value_t<T> (float for FLOAT / HALF / BFLOAT16): the float product rounded to
// nearest is the double product rounded to float, the reference's first rounding.
// Operands that overlap without being the same view are left to the reference.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/dropout_problem.hpp"
#include "core/impl_registry.hpp"
#include "cpu/dense_layout.hpp"
#include "cpu/storage.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

constexpr int64_t kChunkWords = 256;  // mask words a chunk: 8192 elements
constexpr int64_t kChunk = kChunkWords * 32;
constexpr int64_t kParallelMin = int64_t{1} << 15;
constexpr int64_t kRun = 512;  // 16-bit elements converted at a time

// x and y as rows: the outer dims (coordinates row-major) and one inner run of w
// elements at strides wx / wy, after merging the innermost dims that both views step
// through as one run.
struct Rows {
    int nd = 0;  // outer dims
    int64_t dims[core::kDimMax] = {}, sx[core::kDimMax] = {}, sy[core::kDimMax] = {};
    int64_t w = 1, wx = 1, wy = 1;

    void offsets(int64_t r, int64_t* ox, int64_t* oy) const {
        int64_t a = 0, b = 0;
        for (int d = nd - 1; d >= 0; --d) {
            const int64_t q = r / dims[d], c = r - q * dims[d];
            a += c * sx[d];
            b += c * sy[d];
            r = q;
        }
        *ox = a;
        *oy = b;
    }
};

Rows rows_of(const core::TensorDesc& x, const core::TensorDesc& y) {
    Rows v;
    int d = x.nb_dims - 1;
    bool started = false;
    for (; d >= 0; --d) {
        if (x.dims[d] == 1) continue;
        if (!started) {
            v.w = x.dims[d];
            v.wx = x.strides[d];
            v.wy = y.strides[d];
            started = true;
        } else if (x.strides[d] == v.wx * v.w && y.strides[d] == v.wy * v.w) {
            v.w *= x.dims[d];
        } else {
            break;
        }
    }
    for (int k = 0; k <= d; ++k) {
        if (x.dims[k] == 1) continue;
        v.dims[v.nd] = x.dims[k];
        v.sx[v.nd] = x.strides[k];
        v.sy[v.nd] = y.strides[k];
        ++v.nd;
    }
    return v;
}

// The keep bits of mask word wd (elements 32 wd ..), blocks start + 8 wd ...
uint32_t draw_word(uint64_t seed, uint64_t start, int64_t wd, uint32_t threshold) {
    uint32_t c[4][8];
    core::dropout_blocks<8>(seed, start + 8 * static_cast<uint64_t>(wd), c);
    uint32_t bits = 0;
    for (int l = 0; l < 8; ++l)
        for (int k = 0; k < 4; ++k) bits |= static_cast<uint32_t>(c[k][l] >= threshold) << (4 * l + k);
    return bits;
}

constexpr uint32_t kBit[32] = {1u << 0,  1u << 1,  1u << 2,  1u << 3,  1u << 4,  1u << 5,  1u << 6,  1u << 7,
                               1u << 8,  1u << 9,  1u << 10, 1u << 11, 1u << 12, 1u << 13, 1u << 14, 1u << 15,
                               1u << 16, 1u << 17, 1u << 18, 1u << 19, 1u << 20, 1u << 21, 1u << 22, 1u << 23,
                               1u << 24, 1u << 25, 1u << 26, 1u << 27, 1u << 28, 1u << 29, 1u << 30, 1u << 31};

// v where keep is 1, +0 where it is 0, without a branch (the bits are random: a branch
// mispredicts every other element) and without a multiply (NaN * 0 is NaN).
template <class V>
inline V kept(V v, uint32_t keep) {
    using U = std::conditional_t<sizeof(V) == 4, uint32_t, uint64_t>;
    U u;
    std::memcpy(&u, &v, sizeof(u));
    u &= U(0) - U(keep);
    std::memcpy(&v, &u, sizeof(u));
    return v;
}

// y[i] = mask bit i ? x[i] * scale : 0 for the logical elements [a, b).
template <class T>
void apply(const T* x, T* y, const Rows& rows, int64_t a, int64_t b, const uint32_t* mask, value_t<T> scale) {
    using V = value_t<T>;
    auto keep = [mask](int64_t i) { return (mask[i >> 5] >> (i & 31)) & 1u; };
    int64_t i = a;
    while (i < b) {
        const int64_t r = i / rows.w, col = i - r * rows.w, len = std::min(rows.w - col, b - i);
        int64_t ox = 0, oy = 0;
        rows.offsets(r, &ox, &oy);
        const T* xr = x + ox + col * rows.wx;
        T* yr = y + oy + col * rows.wy;
        if (rows.wx == 1 && rows.wy == 1) {
            for (int64_t k0 = 0; k0 < len; k0 += kRun) {
                const int64_t m = std::min(kRun, len - k0);
                RunBuffer<T, kRun> xb, yb;
                const V* xv = load_run(xr + k0, m, xb);
                V* yv = output_run(yr + k0, m, false, yb);
                const int64_t base = i + k0;
                int64_t k = 0;
                for (; k < m && ((base + k) & 31) != 0; ++k) yv[k] = kept(xv[k] * scale, keep(base + k));
                // Whole mask words: each bit tested against a constant (vectorises).
                for (; k + 32 <= m; k += 32) {
                    const uint32_t w = mask[(base + k) >> 5];
                    for (int j = 0; j < 32; ++j) {
                        const V v = xv[k + j] * scale;
                        yv[k + j] = (w & kBit[j]) != 0 ? v : V(0);
                    }
                }
                for (; k < m; ++k) yv[k] = kept(xv[k] * scale, keep(base + k));
                store_run(yv, yr + k0, m);
            }
        } else {
            for (int64_t k = 0; k < len; ++k)
                yr[k * rows.wy] = store<T>(static_cast<double>(kept(load(xr[k * rows.wx]) * scale, keep(i + k))));
        }
        i += len;
    }
}

// x and y densely packed with the same strides but not in logical order (NHWC): memory
// order walked dim by dim (decreasing stride), each dim with its logical row-major stride,
// so a memory run of the innermost dim reads its mask bits L apart.
struct MemWalk {
    int nd = 0;
    int64_t ext[core::kDimMax] = {}, lg[core::kDimMax] = {};
};

bool mem_walk_of(const core::TensorDesc& x, const core::TensorDesc& y, MemWalk* w) {
    if (!dense_strides(x.nb_dims, x.dims, x.strides) ||
        !same_strides(x.nb_dims, x.dims, x.strides, y.nb_dims, y.dims, y.strides))
        return false;
    int64_t lg[core::kDimMax], s = 1;
    for (int d = x.nb_dims - 1; d >= 0; --d) {
        lg[d] = s;
        s *= x.dims[d];
    }
    int order[core::kDimMax], k = 0;
    for (int d = 0; d < x.nb_dims; ++d)
        if (x.dims[d] > 1) order[k++] = d;
    for (int a = 1; a < k; ++a)  // by decreasing stride (a handful of dims)
        for (int b = a; b > 0 && x.strides[order[b]] > x.strides[order[b - 1]]; --b) std::swap(order[b], order[b - 1]);
    w->nd = k;
    for (int j = 0; j < k; ++j) {
        w->ext[j] = x.dims[order[j]];
        w->lg[j] = lg[order[j]];
    }
    if (k == 0) {  // one element
        w->nd = 1;
        w->ext[0] = w->lg[0] = 1;
    }
    return true;
}

// y = mask ? x * scale : 0 at the memory offsets [o0, o1) of a MemWalk.
template <class T>
void apply_mem(const T* x, T* y, const MemWalk& w, int64_t o0, int64_t o1, const uint32_t* mask, value_t<T> scale) {
    using V = value_t<T>;
    int64_t coord[core::kDimMax], i = 0, r = o0;
    for (int d = w.nd - 1; d >= 0; --d) {
        coord[d] = r % w.ext[d];
        r /= w.ext[d];
        i += coord[d] * w.lg[d];
    }
    const int in = w.nd - 1;
    const int64_t step = w.lg[in];
    for (int64_t o = o0; o < o1;) {
        const int64_t len = std::min(w.ext[in] - coord[in], o1 - o);
        for (int64_t k0 = 0; k0 < len; k0 += kRun) {
            const int64_t m = std::min(kRun, len - k0);
            RunBuffer<T, kRun> xb, yb;
            const V* xv = load_run(x + o + k0, m, xb);
            V* yv = output_run(y + o + k0, m, false, yb);
            int64_t li = i + k0 * step;
            for (int64_t k = 0; k < m; ++k, li += step) yv[k] = kept(xv[k] * scale, (mask[li >> 5] >> (li & 31)) & 1u);
            store_run(yv, y + o + k0, m);
        }
        o += len;
        i += len * step;
        coord[in] += len;
        for (int d = in; d > 0 && coord[d] == w.ext[d]; --d) {  // carry
            i += w.lg[d - 1] - coord[d] * w.lg[d];
            coord[d] = 0;
            ++coord[d - 1];
        }
    }
}

template <class T>
void run(const core::DropoutProblem& p) {
    const T* x = static_cast<const T*>(p.x_data);
    T* y = static_cast<T*>(p.y_data);
    const int64_t n = p.x.num_elements();
    const Rows rows = rows_of(p.x, p.y);
    const auto scale = static_cast<value_t<T>>(p.scale);
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    core::DropoutStates* st = static_cast<core::DropoutStates*>(p.states);
    const uint64_t seed = st ? st->seed : 0;
    const uint64_t start = st ? core::dropout_first_block(st->offset) : 0;
    // The mask words of the logical elements [a, b) (forward).
    auto draw = [&](int64_t a, int64_t b) {
        for (int64_t wd = a / 32; wd < (b + 31) / 32; ++wd) {
            uint32_t bits = p.keep_all ? ~0u : p.drop_all ? 0u : draw_word(seed, start, wd, p.threshold);
            const int64_t left = n - 32 * wd;  // elements of this word inside x
            if (left < 32) bits &= (1u << left) - 1u;
            p.reserve[wd] = bits;
        }
    };
    MemWalk mw;
    if (!(rows.wx == 1 && rows.wy == 1) && mem_walk_of(p.x, p.y, &mw)) {
        // Memory order: every mask word first, then the runs.
        if (!p.backward) {
#pragma omp parallel for schedule(static) if (n > kParallelMin)
            for (int64_t c = 0; c < chunks; ++c) draw(c * kChunk, std::min(n, (c + 1) * kChunk));
        }
#pragma omp parallel for schedule(static) if (n > kParallelMin)
        for (int64_t c = 0; c < chunks; ++c) apply_mem(x, y, mw, c * kChunk, std::min(n, (c + 1) * kChunk), p.reserve, scale);
    } else {
#pragma omp parallel for schedule(static) if (n > kParallelMin)
        for (int64_t c = 0; c < chunks; ++c) {
            const int64_t a = c * kChunk, b = std::min(n, a + kChunk);
            if (!p.backward) draw(a, b);
            apply(x, y, rows, a, b, p.reserve, scale);
        }
    }
    if (!p.backward && st && !p.keep_all) st->offset = 4 * (start + static_cast<uint64_t>((n + 3) / 4));
}

// Whether the bytes of x and y overlap.
bool overlap(const core::DropoutProblem& p) {
    const int64_t e = core::dtype_bits(p.x.dtype) / 8;
    return spans_overlap(p.x_data, p.x.span_elements() * e, p.y_data, p.y.span_elements() * e);
}

bool same_view(const core::DropoutProblem& p) {
    if (p.x_data != p.y_data) return false;
    for (int d = 0; d < p.x.nb_dims; ++d)
        if (p.x.dims[d] > 1 && p.x.strides[d] != p.y.strides[d]) return false;
    return true;
}

class FastDropout final : public core::Impl<core::DropoutProblem> {
public:
    const char* name() const override { return "fast_dropout"; }
    Status check(const core::DropoutProblem& p) const override {
        const char* xn = p.backward ? "dy" : "x";
        const char* yn = p.backward ? "dx" : "y";
        ODNN_RETURN_IF_ERROR(check_storage(p.y.dtype, yn, p.x.dtype, xn));
        ODNN_REQUIRE_SUPPORTED(p.x.vect_count == 1, "%s is vectorized (%d channels a vector)", xn, p.x.vect_count);
        ODNN_REQUIRE_SUPPORTED(p.y.vect_count == 1, "%s is vectorized (%d channels a vector)", yn, p.y.vect_count);
        ODNN_REQUIRE_SUPPORTED(same_view(p) || !overlap(p), "%s overlaps %s without being the same view", yn, xn);
        return Status::ok();
    }
    Status execute(const core::Handle&, const core::DropoutProblem& p) const override {
        with_storage(p.x.dtype, [&](auto tag) { run<decltype(tag)>(p); });
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::DropoutProblem, FastDropout, core::kPriorityFast);

}  // namespace odnn::cpu
