// Convolutions as GEMMs over OpenBLAS (sgemm / dgemm), im2col / col2im around them. Two
// orientations, picked from the layout of the data:
//
//   channel-major (NCHW-like images)     pixel-major (NHWC-like images)
//   fwd   Y[k, p]  = W[k, r] col[r, p]    Y[p, k]  = col[p, r] W[k, r]^T
//   dgrad col[r, p] = W[k, r]^T dY[k, p]  col[p, r] = dY[p, k] W[k, r]   (then a gather)
//   wgrad dW[k, r] += dY[k, p] col[r, p]^T  dW[k, r] += dY[p, k]^T col[p, r]
//
// r runs over (c, t, r, s) channel-major and (t, r, s, c) pixel-major, so NCHW filters
// are used in place by the first and NHWC filters by the second. Where a tensor already
// is the GEMM operand (1x1 unit-stride convolutions, fp32 data in the matching layout)
// it is used in place, and the GEMM writes the output in place with alpha / beta when
// the output layout allows. Half and bfloat16 data are converted to fp32 on the way in
// and rounded once on the way out.
//
// Threads (see conv_common.hpp): every call is cut into independent tasks, each of which
// builds its own operands in its thread's workspace slot, small enough to stay in that
// core's cache, and calls BLAS single-threaded:
//   fwd        tasks = pixel tiles x groups (x blocks of output channels when tiles are
//              too few for the threads); im2col of the tile, one GEMM, the output block.
//   bwd data   channel-major: image (groups of small images) x group x block of input
//              channels; the GEMM gives the block's columns, col2im gathers them into dx.
//              Pixel-major: image x band of input rows x group; the GEMM covers the output
//              rows the band reads (a halo of filter rows), col2im gathers the band.
//   bwd filter partial sums over fixed ranges of pixel tiles, added in a fixed order
//              (when the filter is small against the pixels), else blocks of the filter
//              (output channels x columns) each summed over every pixel tile.
// Every output element is written by one task, in an order fixed by the problem and the
// slot count: results are deterministic. Every workspace buffer is sized by plan(), a
// pure function of the problem and the slot count: workspace_size() is exactly what
// execute() uses.
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "core/conv_problem.hpp"
#include "core/dtype.hpp"
#include "core/elem_access.hpp"
#include "cpu/conv_common.hpp"

namespace odnn::cpu {

using core::ConvKind;
using core::ConvProblem;
using core::ConvTensor;
using core::Status;

namespace {

constexpr int64_t kColBytes = int64_t{1} << 20;       // per-slot column tile
constexpr int64_t kSharedBytes = int64_t{16} << 20;   // gathered dy of one round (bwd data)
constexpr int64_t kPartialBytes = int64_t{64} << 20;  // bwd filter partial sums, all of them
constexpr int64_t kWide = 256;    // GEMMs narrower than this lose efficiency
constexpr int64_t kNarrow = 64;   // narrowest tile when splitting work for threads
constexpr int64_t kMinRows = 32;  // smallest block of output channels per task
constexpr int64_t kSpread = 4;    // tasks per thread wanted where they stay efficient (balance)

// Tasks per thread to aim for: one thread needs no balancing.
int64_t spread(int slots) { return slots > 1 ? kSpread : 1; }

inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                beta, c, static_cast<int>(ldc));
}

inline void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                 const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                beta, c, static_cast<int>(ldc));
}

bool channels_last(const ConvTensor& t) { return t.dims[1] > 1 && t.strides[1] == 1; }

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
// floor(a / b) for b > 0 and any a.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Block size for n items cut in blocks of `size`: smaller, down to `min_size`, until there
// are `want` blocks.
int64_t block_for(int64_t n, int64_t size, int64_t want, int64_t min_size) {
    size = std::max<int64_t>(1, std::min(n, size));
    const int64_t have = ceil_div(n, size);
    if (have >= want) return size;
    const int64_t blocks = std::max(have, std::min(want, std::max<int64_t>(1, n / min_size)));
    return ceil_div(n, blocks);
}

// What execute() does for a problem, and the workspace it needs.
struct Plan {
    bool dbl = false;         // compute type double (else float)
    bool pm = false;          // pixel-major orientation
    bool unit = false;        // 1x1 filter, unit stride, no padding
    bool w_native = false;    // the filter is the GEMM operand (wgrad: accumulator) in place
    bool x_operand = false;   // x (fwd / wgrad) is the GEMM operand in place
    bool dy_operand = false;  // dy (dgrad / wgrad) is the GEMM operand in place
    bool out_direct = false;  // the GEMM writes the output tensor in place
    int slots = 1;
    // Pixel tiles (fwd, wgrad, pixel-major unit dgrad): `tile` pixels, inside one image
    // for channel-major data unless `cross` (then `imgs` whole images per tile).
    int64_t tile = 0;
    bool cross = false;
    int64_t imgs = 1;         // also: channel-major dgrad, images per GEMM
    int64_t kb = 0;           // output channels per task (fwd, wgrad blocks)
    int64_t rb = 0;           // wgrad blocks: filter columns per task
    bool partials = false;    // wgrad: partial sums over fixed ranges of tiles
    int64_t parts = 0;        // their number, fixed by the problem and the slot count
    int64_t cc = 0;           // dgrad: input channels per task
    int64_t band = 0;         // pixel-major dgrad: input rows per task (all rows: whole images)
    int64_t round = 0;        // channel-major dgrad with gathered dy: image groups per round
    int64_t w_elems = 0, shared_elems = 0, slot_elems = 0, partial_elems = 0;  // partial: each of `parts`
    int64_t col_elems = 0, io_elems = 0;  // parts of a slot (the rest: col2im accumulators)

    size_t bytes() const {
        const int64_t sz = dbl ? 8 : 4;
        return static_cast<size_t>(round_up(w_elems * sz, 64) + round_up(shared_elems * sz, 64) +
                                   parts * round_up(partial_elems * sz, 64) + slots * round_up(slot_elems * sz, 64));
    }
};

cudnnDataType_t compute_dtype(const Plan& pl) { return pl.dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }

bool pm_dense(const ConvTensor& t, int64_t ch) { return t.strides[1] == 1 && t.pixels_uniform() && t.strides[4] >= ch; }
bool cm_dense(const ConvTensor& t, int64_t op) { return t.spatial_packed() && t.strides[1] >= op; }

// Pixel tiles of fwd and wgrad, at least `want` of them where tiles can stay kNarrow
// wide; sets tile / cross / imgs. `col_per_px` column values per pixel bound the width.
void plan_tiles(const ConvProblem& p, Plan* pl, int64_t col_per_px, bool in_place_cm, int64_t want) {
    const int64_t op = p.out_pixels(), np = p.n * op;
    const int64_t col_cap = std::max<int64_t>(1, kColBytes / (pl->dbl ? 8 : 4));
    const int64_t width = col_per_px > 0 ? std::max(kWide, col_cap / col_per_px) : std::max(kWide, op);
    // At least `want` tiles (down to kNarrow pixels), kSpread times more while they stay kWide.
    if (pl->pm) {
        pl->tile = block_for(np, block_for(np, width, want, kNarrow), spread(pl->slots) * want, kWide);
        return;
    }
    // Small images not usable in place are batched (whole images per tile).
    if (op < kWide / 2 && !in_place_cm) {
        const int64_t imgs = block_for(p.n, std::max<int64_t>(1, width / op), want, 1);
        pl->imgs = block_for(p.n, imgs, spread(pl->slots) * want, ceil_div(kWide, op));
        pl->cross = pl->imgs > 1;  // one image per tile: operands in place where they allow
        pl->tile = pl->imgs * op;
        return;
    }
    const int64_t tile = block_for(op, width, ceil_div(want, p.n), kNarrow);
    pl->tile = block_for(op, tile, ceil_div(spread(pl->slots) * want, p.n), kWide);
}

int64_t tile_count(const ConvProblem& p, const Plan& pl) {
    const int64_t op = p.out_pixels();
    if (pl.pm) return ceil_div(p.n * op, pl.tile);
    if (pl.cross) return ceil_div(p.n, pl.imgs);
    return p.n * ceil_div(op, pl.tile);
}

struct Tile {
    int64_t q0, len;  // global output pixels [q0, q0 + len)
};
Tile tile_at(const ConvProblem& p, const Plan& pl, int64_t t) {
    const int64_t op = p.out_pixels(), np = p.n * op;
    if (pl.pm) return {t * pl.tile, std::min(pl.tile, np - t * pl.tile)};
    if (pl.cross) return {t * pl.imgs * op, std::min(pl.imgs, p.n - t * pl.imgs) * op};
    const int64_t per = ceil_div(op, pl.tile), n = t / per, p0 = t % per * pl.tile;
    return {n * op + p0, std::min(pl.tile, op - p0)};
}

Plan plan(const ConvProblem& p) {
    Plan pl;
    pl.dbl = p.x.dtype == CUDNN_DATA_DOUBLE;
    pl.slots = conv_slots();
    const cudnnDataType_t tdt = compute_dtype(pl);
    const int64_t sz = pl.dbl ? 8 : 4;
    const int64_t taps = p.filt_pixels(), cg = p.cg(), kg = p.kg(), kr = cg * taps;
    const int64_t op = p.out_pixels(), ip = p.in_pixels(), np = p.n * op;
    pl.unit = taps == 1;
    for (int i = 0; i < 3; ++i) pl.unit = pl.unit && p.stride[i] == 1 && p.pad[i] == 0;
    const bool x_t = p.x.dtype == tdt, y_t = p.y.dtype == tdt, w_t = p.w.dtype == tdt;
    const int64_t col_cap = std::max<int64_t>(1, kColBytes / sz);
    const int64_t want = pl.slots;

    switch (p.kind) {
        case ConvKind::fwd: {
            pl.pm = channels_last(p.x);
            pl.w_native = w_t && (taps == 1 || pl.pm == p.w_nhwc);
            pl.w_elems = pl.w_native ? 0 : p.k * kr;
            bool in_place;
            if (pl.pm) {
                in_place = pl.unit && x_t && pm_dense(p.x, p.c);
                pl.x_operand = in_place;
                pl.out_direct = y_t && pm_dense(p.y, p.k);
            } else {
                in_place = pl.unit && x_t && cm_dense(p.x, op);
            }
            plan_tiles(p, &pl, in_place ? 0 : kr, in_place, ceil_div(want, p.groups));
            if (!pl.pm) {
                pl.x_operand = in_place && !pl.cross;
                pl.out_direct = !pl.cross && y_t && cm_dense(p.y, op);
            }
            // Blocks of output channels where the tiles are too few for the threads (their
            // im2col is repeated per block: only while the blocks stay tall), and, for
            // balance, kSpread tasks per thread.
            const int64_t tasks = tile_count(p, pl) * p.groups;
            pl.kb = block_for(kg, kg, ceil_div(want, tasks), kMinRows);
            pl.kb = block_for(kg, pl.kb, ceil_div(spread(pl.slots) * want, tasks), 128);
            pl.col_elems = pl.x_operand ? 0 : pl.tile * kr;
            pl.io_elems = pl.out_direct ? 0 : pl.tile * pl.kb;
            pl.slot_elems = pl.col_elems + pl.io_elems;
            break;
        }
        case ConvKind::bwd_filter: {
            pl.pm = channels_last(p.x);
            pl.w_native = w_t && (taps == 1 || pl.pm == p.w_nhwc);
            bool in_place;
            if (pl.pm) {
                in_place = pl.unit && x_t && pm_dense(p.x, p.c);
                pl.x_operand = in_place;
                pl.dy_operand = y_t && pm_dense(p.y, p.k);
            } else {
                in_place = pl.unit && x_t && cm_dense(p.x, op);
            }
            // Partial sums when each sums over enough pixels that writing and adding its
            // partial filter costs little against its GEMMs; else blocks of the filter.
            // kSpread partials per thread where memory allows: threads take them as they
            // come free, so a slow thread delays the call by one small share.
            pl.parts = pl.slots == 1 ? 1 : 0;
            for (int64_t parts : {kSpread * pl.slots, int64_t{pl.slots}})
                if (!pl.parts && parts * p.k * kr * sz <= kPartialBytes && np >= 256 * parts) pl.parts = parts;
            pl.partials = pl.parts > 0;
            if (pl.partials) {
                // A few tiles per partial: the fixed shares then even out.
                plan_tiles(p, &pl, in_place ? 0 : kr, in_place, 2 * pl.parts);
                pl.kb = kg;
                pl.rb = kr;
            } else {
                // Blocks of the filter, enough for the threads, as square as they can be (a
                // GEMM's work per operand value packed grows with its smaller side); splitting
                // output channels repeats the im2col of a block's columns, a small penalty.
                const int64_t want_b = ceil_div(want, p.groups);
                int64_t best_kp = 1, best_rp = 1;
                double best = -1;
                bool best_enough = false;
                for (int64_t kp = 1; kp <= std::max<int64_t>(1, kg / 16); kp *= 2) {
                    const int64_t rp = std::min(ceil_div(want_b, kp), std::max<int64_t>(1, kr / 16));
                    const double m = static_cast<double>(ceil_div(kg, kp)), n = static_cast<double>(ceil_div(kr, rp));
                    const double score = 2 * m * n / (m + n) / (in_place ? 1.0 : 1.0 + 0.05 * static_cast<double>(kp - 1));
                    const bool enough = kp * rp >= want_b;
                    if ((enough && !best_enough) || (enough == best_enough && score > best)) {
                        best = score;
                        best_kp = kp;
                        best_rp = rp;
                        best_enough = enough;
                    }
                }
                pl.kb = ceil_div(kg, best_kp);
                pl.rb = ceil_div(kr, best_rp);
                plan_tiles(p, &pl, in_place ? 0 : pl.rb, in_place, 1);
            }
            if (!pl.pm) {
                pl.x_operand = in_place && !pl.cross;
                pl.dy_operand = !pl.cross && y_t && cm_dense(p.y, op);
            }
            pl.col_elems = pl.x_operand ? 0 : pl.tile * pl.rb;
            pl.io_elems = pl.dy_operand ? 0 : pl.tile * (pl.partials ? p.k : pl.kb);
            pl.slot_elems = pl.col_elems + pl.io_elems;
            pl.partial_elems = pl.partials ? p.k * kr : 0;
            pl.parts = pl.partials ? pl.parts : 0;
            // Blocks sum into dw in place when it is the accumulator, else into this buffer.
            pl.w_elems = pl.partials || pl.w_native ? 0 : p.k * kr;
            break;
        }
        case ConvKind::bwd_data: {
            pl.pm = channels_last(p.y);
            pl.w_native = w_t && (taps == 1 || pl.pm == p.w_nhwc);
            pl.w_elems = pl.w_native ? 0 : p.k * kr;
            if (pl.pm) {
                pl.dy_operand = y_t && pm_dense(p.y, p.k);
                if (pl.unit) {
                    pl.out_direct = x_t && pm_dense(p.x, p.c);
                    pl.tile = block_for(np, std::max(kWide, col_cap / std::max<int64_t>(1, p.k)),
                                        ceil_div(want, p.groups), kNarrow);
                    pl.cc = block_for(cg, cg, ceil_div(want, ceil_div(np, pl.tile) * p.groups), kMinRows);
                    pl.col_elems = pl.out_direct ? 0 : pl.tile * pl.cc;
                    pl.io_elems = pl.dy_operand ? 0 : pl.tile * p.k;
                    pl.slot_elems = pl.col_elems + pl.io_elems;
                } else if (op * kr * sz <= kSharedBytes) {
                    // Two phases over groups of whole images: the GEMM's columns for all of
                    // them (split over pixel tiles and filter columns: the filter is packed
                    // once per group), then col2im by image and band of input rows. Images
                    // whose columns exceed the shared buffer go by bands (below).
                    pl.imgs = std::max<int64_t>(1, std::min(p.n, kSharedBytes / sz / (op * kr)));
                    pl.rb = block_for(kr, kr, want, kNarrow);
                    pl.tile = block_for(pl.imgs * op, pl.imgs * op, ceil_div(want, ceil_div(kr, pl.rb)), kNarrow);
                    pl.band = block_for(p.in[1], p.in[1], ceil_div(want, pl.imgs), 1);
                    pl.shared_elems = pl.imgs * op * kr + (pl.dy_operand ? 0 : pl.imgs * op * p.k);
                    pl.slot_elems = p.in[2] * cg;
                } else {
                    // Bands of input rows (2-D problems; whole images otherwise).
                    const bool two_d = p.in[0] == 1 && p.out[0] == 1 && p.filt[0] == 1;
                    const int64_t halo = ((p.filt[1] - 1) * p.dil[1] + p.stride[1] - 1) / p.stride[1] + 1;
                    int64_t out_rows = p.out[1] * p.out[0];
                    if (two_d) {
                        const int64_t cap_rows = std::max<int64_t>(1, col_cap / (p.out[2] * kr));
                        pl.band = std::min(p.in[1], std::max<int64_t>(1, (cap_rows - halo + 1) * p.stride[1]));
                        pl.band = block_for(p.in[1], pl.band, ceil_div(want, p.n * p.groups), 1);
                        out_rows = std::min(p.out[1], (pl.band + p.stride[1] - 1) / p.stride[1] + halo);
                    } else {
                        pl.band = p.in[1];
                    }
                    pl.col_elems = out_rows * p.out[2] * kr;
                    pl.io_elems = pl.dy_operand ? 0 : out_rows * p.out[2] * p.k;
                    pl.slot_elems = pl.col_elems + pl.io_elems + p.in[2] * cg;
                }
            } else {
                // Small images are batched (dy gathered); input channels are blocked to bound
                // the columns and to give every thread work.
                pl.imgs = op < kWide / 2 ? std::min(p.n, std::max<int64_t>(1, kWide / op)) : 1;
                pl.imgs = block_for(p.n, pl.imgs, ceil_div(want, p.groups), 1);
                const int64_t len = pl.imgs * op;
                pl.dy_operand = pl.imgs == 1 && y_t && cm_dense(p.y, op);
                if (pl.unit) pl.out_direct = pl.imgs == 1 && x_t && cm_dense(p.x, ip);
                pl.cc = pl.unit ? cg : std::min(cg, std::max<int64_t>(1, col_cap / (taps * len)));
                const int64_t groups_n = ceil_div(p.n, pl.imgs) * p.groups;
                pl.cc = block_for(cg, pl.cc, ceil_div(want, groups_n), pl.unit ? kMinRows : 1);
                pl.cc = block_for(cg, pl.cc, ceil_div(spread(pl.slots) * want, groups_n), ceil_div(kWide / 4, taps));
                // 1x1 needs no col2im: pixels split too, for the threads and for balance.
                pl.tile = len;
                if (pl.unit)
                    pl.tile = block_for(len, len, ceil_div(spread(pl.slots) * want, groups_n * ceil_div(cg, pl.cc)), kWide);
                pl.col_elems = pl.unit && pl.out_direct ? 0 : pl.cc * taps * pl.tile;
                pl.slot_elems = pl.col_elems + p.in[2];
                if (!pl.dy_operand) {
                    const int64_t per_group = p.k * len;
                    pl.round = std::max<int64_t>(1, std::min(ceil_div(p.n, pl.imgs), kSharedBytes / sz / per_group));
                    pl.shared_elems = pl.round * per_group;
                }
            }
            break;
        }
    }
    return pl;
}

struct Pix {
    int64_t n, d, h, w;
};
inline Pix pixel_of(const ConvTensor& t, int64_t q) {
    const int64_t hw = t.dims[3] * t.dims[4], dhw = t.dims[2] * hw;
    Pix r;
    r.n = q / dhw;
    const int64_t pix = q % dhw;
    r.d = pix / hw;
    r.h = pix / t.dims[4] % t.dims[3];
    r.w = pix % t.dims[4];
    return r;
}

// A (rows x len) channel-major block (row stride ld) into channels [c0, c0 + rows) and
// global pixels [q0, q0 + len) of tensor t.
template <class T>
void write_cm(const ConvProblem& p, void* base, const ConvTensor& t, int64_t c0, int64_t rows, int64_t q0,
              int64_t len, const T* blk, int64_t ld) {
    if (p.epi.enabled) {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < len; ++j) {
                const Pix x = pixel_of(t, q0 + j);
                blend_store(p, base, t, static_cast<double>(blk[r * ld + j]), x.n, c0 + r, x.d, x.h, x.w);
            }
        return;
    }
    with_storage(t.dtype, [&](auto tag) {
        using S = decltype(tag);
        S* out = static_cast<S*>(base);
        const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
        for (int64_t r = 0; r < rows; ++r) {
            int64_t j = 0;
            while (j < len) {
                const Pix x = pixel_of(t, q0 + j);
                const int64_t seg = std::min(t.dims[4] - x.w, len - j);
                store_run(out + t.offset(x.n, c0 + r, x.d, x.h, x.w), t.strides[4], blk + r * ld + j, seg, alpha,
                          beta);
                j += seg;
            }
        }
    });
}

// A (len x cols) pixel-major block into global pixels [q0, q0 + len), channels [c0, c0 + cols).
template <class T>
void write_pm(const ConvProblem& p, void* base, const ConvTensor& t, int64_t c0, int64_t cols, int64_t q0,
              int64_t len, const T* blk, int64_t ld) {
    if (p.epi.enabled) {
        for (int64_t j = 0; j < len; ++j) {
            const Pix x = pixel_of(t, q0 + j);
            for (int64_t c = 0; c < cols; ++c)
                blend_store(p, base, t, static_cast<double>(blk[j * ld + c]), x.n, c0 + c, x.d, x.h, x.w);
        }
        return;
    }
    with_storage(t.dtype, [&](auto tag) {
        using S = decltype(tag);
        S* out = static_cast<S*>(base);
        const T alpha = static_cast<T>(p.alpha), beta = static_cast<T>(p.beta);
        for (int64_t j = 0; j < len; ++j) {
            const Pix x = pixel_of(t, q0 + j);
            store_run(out + t.offset(x.n, c0, x.d, x.h, x.w), t.strides[1], blk + j * ld, cols, alpha, beta);
        }
    });
}

// After the GEMM wrote alpha * acc + beta' * y in place: the rest of the fused epilogue.
template <class T>
void epilogue_in_place(const ConvProblem& p, T* y, bool z_aliased, int64_t c0, int64_t rows, int64_t q0,
                       int64_t len, bool pm) {
    const ConvTensor& t = p.y;
    const int64_t total = rows * len;
    for (int64_t i = 0; i < total; ++i) {
        const int64_t r = pm ? i % rows : i / len, j = pm ? i / rows : i % len;
        const Pix x = pixel_of(t, q0 + j);
        const int64_t off = t.offset(x.n, c0 + r, x.d, x.h, x.w);
        double v = static_cast<double>(y[off]);
        const core::ConvEpilogue& e = p.epi;
        if (!z_aliased && e.alpha2 != 0.0)
            v += e.alpha2 * core::load_elem(e.z, e.z_t.offset(x.n, c0 + r, x.d, x.h, x.w), e.z_t.dtype);
        v += core::load_elem(e.bias, e.bias_t.offset(0, c0 + r, 0, 0, 0), e.bias_t.dtype);
        if (e.relu && !(v > 0.0) && !(e.propagate_nan && std::isnan(v))) v = 0.0;
        y[off] = static_cast<T>(v);
    }
}

// ---------------------------------------------------------------------------
// Gathering operands.

// Spatial tap of filter position f along dim `dim` (CUDNN_CONVOLUTION flips the filter).
inline int64_t tap(const ConvProblem& p, int dim, int64_t f) { return p.flip ? p.filt[dim] - 1 - f : f; }

// col[row - r0, j] for rows [r0, r1) of (c, t, r, s) in group g, j over global output pixels
// [q0, q0 + len).
template <class S, class T>
void im2col_cm(const ConvProblem& p, const S* x, int64_t g, int64_t q0, int64_t len, int64_t r0, int64_t r1,
               T* col) {
    const int64_t taps = p.filt_pixels();
    const int64_t ohw = p.out[1] * p.out[2], op = p.out[0] * ohw;
    const ConvTensor& xt = p.x;
    for (int64_t row = r0; row < r1; ++row) {
        const int64_t cl = row / taps, f = row % taps;
        const int64_t t = tap(p, 0, f / (p.filt[1] * p.filt[2])), r = tap(p, 1, f / p.filt[2] % p.filt[1]),
                      s = tap(p, 2, f % p.filt[2]);
        const S* src_c = x + (g * p.cg() + cl) * xt.strides[1];
        T* dst = col + (row - r0) * len;
        const int64_t ws = xt.strides[4] * p.stride[2];
        // ow with iw = ow * stride - pad + s * dil inside [0, in_w): [lo_all, hi_all)
        const int64_t off = s * p.dil[2] - p.pad[2];
        const int64_t lo_all = off >= 0 ? 0 : (-off + p.stride[2] - 1) / p.stride[2];
        const int64_t hi_all = p.in[2] - 1 - off < 0 ? 0 : (p.in[2] - 1 - off) / p.stride[2] + 1;
        int64_t j = 0;
        while (j < len) {
            const int64_t q = q0 + j, n = q / op, pix = q % op;
            const int64_t od = pix / ohw, oh = pix / p.out[2] % p.out[1], ow0 = pix % p.out[2];
            const int64_t seg = std::min(p.out[2] - ow0, len - j);
            const int64_t id = od * p.stride[0] - p.pad[0] + t * p.dil[0];
            const int64_t ih = oh * p.stride[1] - p.pad[1] + r * p.dil[1];
            T* d = dst + j;
            if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1]) {
                std::fill(d, d + seg, T(0));
            } else {
                const int64_t lo = std::min(std::max(lo_all, ow0), ow0 + seg);
                const int64_t hi = std::max(std::min(hi_all, ow0 + seg), lo);
                const S* src = src_c + n * xt.strides[0] + id * xt.strides[2] + ih * xt.strides[3] +
                               (lo * p.stride[2] + off) * xt.strides[4];
                std::fill(d, d + (lo - ow0), T(0));
                T* dm = d + (lo - ow0);
                const int64_t m = hi - lo;
                if (ws == 1) {
                    for (int64_t i = 0; i < m; ++i) dm[i] = static_cast<T>(to_float(src[i]));
                } else {
                    for (int64_t i = 0; i < m; ++i) dm[i] = static_cast<T>(to_float(src[i * ws]));
                }
                std::fill(dm + m, d + seg, T(0));
            }
            j += seg;
        }
    }
}

// col[j, col - j0] for columns [j0, j1) of (t, r, s, c), global output pixels [q0, q0 + len),
// group g.
template <class S, class T>
void im2col_pm(const ConvProblem& p, const S* x, int64_t g, int64_t q0, int64_t len, int64_t j0, int64_t j1,
               T* col) {
    const int64_t cg = p.cg(), w = j1 - j0;
    const int64_t ohw = p.out[1] * p.out[2], op = p.out[0] * ohw;
    const ConvTensor& xt = p.x;
    const int64_t sc = xt.strides[1];
    const int64_t f0 = j0 / cg, f1 = (j1 - 1) / cg + 1;
    for (int64_t j = 0; j < len; ++j) {
        const int64_t q = q0 + j, n = q / op, pix = q % op;
        const int64_t od = pix / ohw, oh = pix / p.out[2] % p.out[1], ow = pix % p.out[2];
        T* dst = col + j * w;
        for (int64_t f = f0; f < f1; ++f) {
            const int64_t ft = f / (p.filt[1] * p.filt[2]), fr = f / p.filt[2] % p.filt[1], fs = f % p.filt[2];
            const int64_t c_lo = std::max<int64_t>(0, j0 - f * cg), c_hi = std::min(cg, j1 - f * cg);
            T* d = dst + f * cg + c_lo - j0;
            const int64_t id = od * p.stride[0] - p.pad[0] + tap(p, 0, ft) * p.dil[0];
            const int64_t ih = oh * p.stride[1] - p.pad[1] + tap(p, 1, fr) * p.dil[1];
            const int64_t iw = ow * p.stride[2] - p.pad[2] + tap(p, 2, fs) * p.dil[2];
            if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1] || iw < 0 || iw >= p.in[2]) {
                std::fill(d, d + (c_hi - c_lo), T(0));
                continue;
            }
            const S* src = x + n * xt.strides[0] + (g * cg + c_lo) * sc + id * xt.strides[2] + ih * xt.strides[3] +
                           iw * xt.strides[4];
            const int64_t m = c_hi - c_lo;
            if (sc == 1) {
                for (int64_t c = 0; c < m; ++c) d[c] = static_cast<T>(to_float(src[c]));
            } else {
                for (int64_t c = 0; c < m; ++c) d[c] = static_cast<T>(to_float(src[c * sc]));
            }
        }
    }
}

// Channels [c0, c0 + ch) of tensor t (N, C, pixels) into a dense block: channel-major
// io[c, j] (ld len) or pixel-major io[j, c] (ld ch), for global pixels [q0, q0 + len).
template <class S, class T>
void gather_dense(const ConvTensor& t, const S* src, int64_t q0, int64_t len, int64_t c0, int64_t ch, bool pm,
                  T* io) {
    if (pm) {
        for (int64_t j = 0; j < len; ++j) {
            const Pix x = pixel_of(t, q0 + j);
            const S* s = src + t.offset(x.n, c0, x.d, x.h, x.w);
            for (int64_t c = 0; c < ch; ++c) io[j * ch + c] = static_cast<T>(to_float(s[c * t.strides[1]]));
        }
        return;
    }
    for (int64_t c = 0; c < ch; ++c) {
        int64_t j = 0;
        while (j < len) {
            const Pix x = pixel_of(t, q0 + j);
            const int64_t seg = std::min(t.dims[4] - x.w, len - j);
            const S* s = src + t.offset(x.n, c0 + c, x.d, x.h, x.w);
            T* d = io + c * len + j;
            for (int64_t i = 0; i < seg; ++i) d[i] = static_cast<T>(to_float(s[i * t.strides[4]]));
            j += seg;
        }
    }
}

// The filter as (K x kr) in the orientation's order: channel-major (c, t, r, s) or
// pixel-major (t, r, s, c).
template <class S, class T>
void pack_filter(const ConvProblem& p, const S* w, bool pm, T* out) {
    const int64_t taps = p.filt_pixels(), cg = p.cg(), kr = cg * taps;
    parallel_tasks(p.k, [&](int64_t k, int) {
        for (int64_t c = 0; c < cg; ++c)
            for (int64_t f = 0; f < taps; ++f) {
                const int64_t ft = f / (p.filt[1] * p.filt[2]), fr = f / p.filt[2] % p.filt[1], fs = f % p.filt[2];
                const T v = static_cast<T>(to_float(w[p.w.offset(k, c, ft, fr, fs)]));
                out[k * kr + (pm ? f * cg + c : c * taps + f)] = v;
            }
    });
}

// dw from the (K x kr) accumulator in the orientation's order.
template <class T>
void write_filter(const ConvProblem& p, const T* acc, bool pm) {
    const int64_t taps = p.filt_pixels(), cg = p.cg(), kr = cg * taps;
    parallel_tasks(p.k, [&](int64_t k, int) {
        for (int64_t c = 0; c < cg; ++c)
            for (int64_t f = 0; f < taps; ++f) {
                const int64_t ft = f / (p.filt[1] * p.filt[2]), fr = f / p.filt[2] % p.filt[1], fs = f % p.filt[2];
                const double v = static_cast<double>(acc[k * kr + (pm ? f * cg + c : c * taps + f)]);
                blend_store(p, p.w_data, p.w, v, k, c, ft, fr, fs);
            }
    });
}

// dx from dgrad columns: dx[c, i] = sum over taps of col at the output pixel that tap
// reaches from i. Channel-major col rows (cl, t, r, s) over the output pixels of images
// [n0, n0 + imgs); channels [c0, c0 + cc). `acc` holds in_w values.
template <class S, class T>
void col2im_cm(const ConvProblem& p, const T* col, int64_t ld, int64_t n0, int64_t imgs, int64_t c0, int64_t cc,
               T* acc) {
    const int64_t taps = p.filt_pixels(), op = p.out_pixels(), ohw = p.out[1] * p.out[2];
    const int64_t rows = imgs * cc * p.in[0] * p.in[1];
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t nl = row / (cc * p.in[0] * p.in[1]), cl = row / (p.in[0] * p.in[1]) % cc;
        const int64_t id = row / p.in[1] % p.in[0], ih = row % p.in[1];
        std::fill(acc, acc + p.in[2], T(0));
        for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
            const int64_t nd = id + p.pad[0] - tap(p, 0, ft) * p.dil[0];
            if (nd < 0 || nd % p.stride[0] != 0 || nd / p.stride[0] >= p.out[0]) continue;
            const int64_t od = nd / p.stride[0];
            for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                const int64_t nh = ih + p.pad[1] - tap(p, 1, fr) * p.dil[1];
                if (nh < 0 || nh % p.stride[1] != 0 || nh / p.stride[1] >= p.out[1]) continue;
                const int64_t oh = nh / p.stride[1];
                for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                    const int64_t f = (ft * p.filt[1] + fr) * p.filt[2] + fs;
                    const T* src = col + (cl * taps + f) * ld + nl * op + od * ohw + oh * p.out[2];
                    const int64_t off = tap(p, 2, fs) * p.dil[2] - p.pad[2];  // iw = ow * stride + off
                    const int64_t lo = off >= 0 ? 0 : (-off + p.stride[2] - 1) / p.stride[2];
                    const int64_t hi =
                        std::min(p.out[2], p.in[2] - 1 - off < 0 ? 0 : (p.in[2] - 1 - off) / p.stride[2] + 1);
                    if (p.stride[2] == 1) {
                        for (int64_t ow = lo; ow < hi; ++ow) acc[ow + off] += src[ow];
                    } else {
                        for (int64_t ow = lo; ow < hi; ++ow) acc[ow * p.stride[2] + off] += src[ow];
                    }
                }
            }
        }
        S* o = static_cast<S*>(p.x_data) + p.x.offset(n0 + nl, c0 + cl, id, ih, 0);
        store_run(o, p.x.strides[4], acc, p.in[2], static_cast<T>(p.alpha), static_cast<T>(p.beta));
    }
}

// Pixel-major: dx rows (n, id, ih in [ih0, ih1)) of group g from col, whose rows are the
// output pixels of image n from pixel q_base on, columns (t, r, s, c). `acc` holds
// in_w * cg values.
template <class S, class T>
void col2im_pm(const ConvProblem& p, const T* col, int64_t g, int64_t n, int64_t ih0, int64_t ih1, int64_t q_base,
               T* acc) {
    const int64_t cg = p.cg(), kr = cg * p.filt_pixels();
    const int64_t ohw = p.out[1] * p.out[2];
    const int64_t bh = ih1 - ih0, rows = p.in[0] * bh;
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t id = row / bh, ih = ih0 + row % bh;
        std::fill(acc, acc + p.in[2] * cg, T(0));
        for (int64_t ft = 0; ft < p.filt[0]; ++ft) {
            const int64_t nd = id + p.pad[0] - tap(p, 0, ft) * p.dil[0];
            if (nd < 0 || nd % p.stride[0] != 0 || nd / p.stride[0] >= p.out[0]) continue;
            const int64_t od = nd / p.stride[0];
            for (int64_t fr = 0; fr < p.filt[1]; ++fr) {
                const int64_t nh = ih + p.pad[1] - tap(p, 1, fr) * p.dil[1];
                if (nh < 0 || nh % p.stride[1] != 0 || nh / p.stride[1] >= p.out[1]) continue;
                const int64_t oh = nh / p.stride[1];
                for (int64_t fs = 0; fs < p.filt[2]; ++fs) {
                    const int64_t f = (ft * p.filt[1] + fr) * p.filt[2] + fs;
                    const int64_t off = tap(p, 2, fs) * p.dil[2] - p.pad[2];
                    const int64_t lo = off >= 0 ? 0 : (-off + p.stride[2] - 1) / p.stride[2];
                    const int64_t hi =
                        std::min(p.out[2], p.in[2] - 1 - off < 0 ? 0 : (p.in[2] - 1 - off) / p.stride[2] + 1);
                    for (int64_t ow = lo; ow < hi; ++ow) {
                        const T* src = col + (od * ohw + oh * p.out[2] + ow - q_base) * kr + f * cg;
                        T* a = acc + (ow * p.stride[2] + off) * cg;
                        for (int64_t c = 0; c < cg; ++c) a[c] += src[c];
                    }
                }
            }
        }
        for (int64_t iw = 0; iw < p.in[2]; ++iw) {
            S* o = static_cast<S*>(p.x_data) + p.x.offset(n, g * cg, id, ih, iw);
            store_run(o, p.x.strides[1], acc + iw * cg, cg, static_cast<T>(p.alpha), static_cast<T>(p.beta));
        }
    }
}

// ---------------------------------------------------------------------------
// The three directions, for compute type T (float or double).

template <class T>
struct Work {
    T* w = nullptr;       // packed filter / filter accumulator
    T* shared = nullptr;  // gathered dy (channel-major dgrad)
    unsigned char* partials = nullptr;
    unsigned char* slots = nullptr;
    int64_t slot_bytes = 0, partial_bytes = 0;
    int64_t col_elems = 0, io_elems = 0;

    T* col(int s) const { return reinterpret_cast<T*>(slots + s * slot_bytes); }
    T* io(int s) const { return col(s) + col_elems; }
    T* scratch(int s) const { return col(s) + col_elems + io_elems; }
    T* partial(int64_t i) const { return reinterpret_cast<T*>(partials + i * partial_bytes); }
};

template <class T>
Work<T> carve(const Plan& pl, void* ws) {
    Work<T> b;
    unsigned char* at = static_cast<unsigned char*>(ws);
    const int64_t sz = static_cast<int64_t>(sizeof(T));
    b.w = pl.w_elems ? reinterpret_cast<T*>(at) : nullptr;
    at += round_up(pl.w_elems * sz, 64);
    b.shared = pl.shared_elems ? reinterpret_cast<T*>(at) : nullptr;
    at += round_up(pl.shared_elems * sz, 64);
    b.partials = at;
    b.partial_bytes = round_up(pl.partial_elems * sz, 64);
    at += pl.parts * b.partial_bytes;
    b.slots = at;
    b.slot_bytes = round_up(pl.slot_elems * sz, 64);
    b.col_elems = pl.col_elems;
    b.io_elems = pl.io_elems;
    return b;
}

// The filter operand: in place, or packed into the workspace.
template <class T>
const T* filter_operand(const ConvProblem& p, const Plan& pl, const Work<T>& b) {
    if (pl.w_native) return static_cast<const T*>(p.w_data);
    with_storage(p.w.dtype, [&](auto s) { pack_filter(p, static_cast<const decltype(s)*>(p.w_data), pl.pm, b.w); });
    return b.w;
}

template <class T>
void run_fwd(const ConvProblem& p, const Plan& pl, const Work<T>& b) {
    const int64_t cg = p.cg(), kg = p.kg(), kr = cg * p.filt_pixels();
    const int64_t op = p.out_pixels();
    const T* w = filter_operand(p, pl, b);
    const bool z_aliased = p.epi.enabled && p.epi.z == p.y_data && p.epi.z_t.dtype == p.y.dtype &&
                           std::equal(p.epi.z_t.strides, p.epi.z_t.strides + 5, p.y.strides);
    // With the output written in place, the GEMM's beta carries beta (or alpha2 for an aliased z).
    const T gemm_alpha = static_cast<T>(pl.out_direct ? p.alpha : 1.0);
    const T gemm_beta = static_cast<T>(!pl.out_direct ? 0.0 : p.epi.enabled ? (z_aliased ? p.epi.alpha2 : 0.0) : p.beta);
    T* y = static_cast<T*>(p.y_data);
    const int64_t kblocks = ceil_div(kg, pl.kb);
    parallel_tasks(tile_count(p, pl) * p.groups * kblocks, [&](int64_t task, int slot) {
        const int64_t kbi = task % kblocks, g = task / kblocks % p.groups, ti = task / (kblocks * p.groups);
        const Tile tl = tile_at(p, pl, ti);
        const int64_t q0 = tl.q0, len = tl.len;
        const int64_t k0 = g * kg + kbi * pl.kb, kn = std::min(pl.kb, kg - kbi * pl.kb);
        const T* wk = w + k0 * kr;
        T* col = b.col(slot);
        T* io = b.io(slot);
        if (pl.pm) {
            const T* a;
            int64_t lda;
            if (pl.x_operand) {
                a = static_cast<const T*>(p.x_data) + q0 * p.x.strides[4] + g * cg;
                lda = p.x.strides[4];
            } else {
                with_storage(p.x.dtype, [&](auto s) {
                    im2col_pm(p, static_cast<const decltype(s)*>(p.x_data), g, q0, len, 0, kr, col);
                });
                a = col;
                lda = kr;
            }
            T* c = pl.out_direct ? y + q0 * p.y.strides[4] + k0 : io;
            const int64_t ldc = pl.out_direct ? p.y.strides[4] : kn;
            gemm(false, true, len, kn, kr, gemm_alpha, a, lda, wk, kr, gemm_beta, c, ldc);
            if (!pl.out_direct) write_pm(p, p.y_data, p.y, k0, kn, q0, len, io, kn);
            else if (p.epi.enabled) epilogue_in_place(p, y, z_aliased, k0, kn, q0, len, true);
        } else {
            const int64_t n = q0 / op, p0 = q0 % op;
            const T* bm;
            int64_t ldb;
            if (pl.x_operand) {
                bm = static_cast<const T*>(p.x_data) + n * p.x.strides[0] + g * cg * p.x.strides[1] + p0;
                ldb = p.x.strides[1];
            } else {
                with_storage(p.x.dtype, [&](auto s) {
                    im2col_cm(p, static_cast<const decltype(s)*>(p.x_data), g, q0, len, 0, kr, col);
                });
                bm = col;
                ldb = len;
            }
            T* c = pl.out_direct ? y + n * p.y.strides[0] + k0 * p.y.strides[1] + p0 : io;
            const int64_t ldc = pl.out_direct ? p.y.strides[1] : len;
            gemm(false, false, kn, len, kr, gemm_alpha, wk, kr, bm, ldb, gemm_beta, c, ldc);
            if (!pl.out_direct) write_cm(p, p.y_data, p.y, k0, kn, q0, len, io, len);
            else if (p.epi.enabled) epilogue_in_place(p, y, z_aliased, k0, kn, q0, len, false);
        }
    });
}

// Pixel-major dgrad in two phases per group of `imgs` images: GEMM tasks (pixel tile x
// filter columns) fill the group's columns, col2im tasks (image x band of input rows) read them.
template <class T>
void run_bwd_data_pm_chunks(const ConvProblem& p, const Plan& pl, const Work<T>& b, const T* w) {
    const int64_t cg = p.cg(), kg = p.kg(), kr = cg * p.filt_pixels();
    const int64_t op = p.out_pixels();
    T* col = b.shared;
    T* dyg = b.shared + pl.imgs * op * kr;  // gathered dy (when not usable in place)
    for (int64_t n0 = 0; n0 < p.n; n0 += pl.imgs) {
        const int64_t imgs = std::min(pl.imgs, p.n - n0), rows = imgs * op, q0 = n0 * op;
        const int64_t rtiles = ceil_div(rows, pl.tile), cblocks = ceil_div(kr, pl.rb);
        if (!pl.dy_operand) {
            parallel_tasks(rtiles, [&](int64_t t, int) {
                const int64_t r0 = t * pl.tile, rn = std::min(pl.tile, rows - r0);
                with_storage(p.y.dtype, [&](auto s) {
                    gather_dense(p.y, static_cast<const decltype(s)*>(p.y_data), q0 + r0, rn, 0, p.k, true,
                                 dyg + r0 * p.k);
                });
            });
        }
        for (int64_t g = 0; g < p.groups; ++g) {
            parallel_tasks(rtiles * cblocks, [&](int64_t task, int) {
                const int64_t cb = task % cblocks, t = task / cblocks;
                const int64_t r0 = t * pl.tile, rn = std::min(pl.tile, rows - r0);
                const int64_t c0 = cb * pl.rb, cn = std::min(pl.rb, kr - c0);
                const T* dy = pl.dy_operand ? static_cast<const T*>(p.y_data) + (q0 + r0) * p.y.strides[4] + g * kg
                                            : dyg + r0 * p.k + g * kg;
                const int64_t lddy = pl.dy_operand ? p.y.strides[4] : p.k;
                gemm(false, false, rn, cn, kg, T(1), dy, lddy, w + g * kg * kr + c0, kr, T(0), col + r0 * kr + c0, kr);
            });
            const int64_t bands = ceil_div(p.in[1], pl.band);
            parallel_tasks(imgs * bands, [&](int64_t task, int slot) {
                const int64_t bi = task % bands, nl = task / bands;
                const int64_t ih0 = bi * pl.band, ih1 = std::min(p.in[1], ih0 + pl.band);
                with_storage(p.x.dtype, [&](auto tag) {
                    col2im_pm<decltype(tag), T>(p, col + nl * op * kr, g, n0 + nl, ih0, ih1, 0, b.scratch(slot));
                });
            });
        }
    }
}

template <class T>
void run_bwd_data_pm(const ConvProblem& p, const Plan& pl, const Work<T>& b, const T* w) {
    const int64_t cg = p.cg(), kg = p.kg(), kr = cg * p.filt_pixels();
    const int64_t op = p.out_pixels(), np = p.n * op;
    const T* dy_base = static_cast<const T*>(p.y_data);
    // dy's output pixels [q0, q0 + len), group g's channels, as a GEMM operand: in place,
    // or gathered dense into the slot's buffer. *ld: its leading dimension.
    auto dy_rows = [&](int64_t q0, int64_t len, int64_t g, int slot, int64_t* ld) -> const T* {
        if (pl.dy_operand) {
            *ld = p.y.strides[4];
            return dy_base + q0 * p.y.strides[4] + g * kg;
        }
        with_storage(p.y.dtype, [&](auto s) {
            gather_dense(p.y, static_cast<const decltype(s)*>(p.y_data), q0, len, g * kg, kg, true, b.io(slot));
        });
        *ld = kg;
        return b.io(slot);
    };
    if (pl.unit) {
        // 1x1, unit stride: input pixel q is output pixel q.
        const int64_t cblocks = ceil_div(cg, pl.cc), tiles = ceil_div(np, pl.tile);
        parallel_tasks(tiles * p.groups * cblocks, [&](int64_t task, int slot) {
            const int64_t cb = task % cblocks, g = task / cblocks % p.groups, ti = task / (cblocks * p.groups);
            const int64_t q0 = ti * pl.tile, len = std::min(pl.tile, np - q0);
            const int64_t c0 = g * cg + cb * pl.cc, cn = std::min(pl.cc, cg - cb * pl.cc);
            int64_t lddy;
            const T* dy = dy_rows(q0, len, g, slot, &lddy);
            const T* wc = w + g * kg * kr + (c0 - g * cg);
            if (pl.out_direct) {
                T* dx = static_cast<T*>(p.x_data) + q0 * p.x.strides[4] + c0;
                gemm(false, false, len, cn, kg, static_cast<T>(p.alpha), dy, lddy, wc, kr, static_cast<T>(p.beta), dx,
                     p.x.strides[4]);
            } else {
                gemm(false, false, len, cn, kg, T(1), dy, lddy, wc, kr, T(0), b.col(slot), cn);
                write_pm(p, p.x_data, p.x, c0, cn, q0, len, b.col(slot), cn);
            }
        });
        return;
    }
    if (pl.shared_elems > 0) {
        run_bwd_data_pm_chunks(p, pl, b, w);
        return;
    }
    const int64_t bands = ceil_div(p.in[1], pl.band);
    const bool two_d = pl.band < p.in[1] || (p.in[0] == 1 && p.out[0] == 1 && p.filt[0] == 1);
    parallel_tasks(p.n * bands * p.groups, [&](int64_t task, int slot) {
        const int64_t g = task % p.groups, bi = task / p.groups % bands, n = task / (p.groups * bands);
        const int64_t ih0 = bi * pl.band, ih1 = std::min(p.in[1], ih0 + pl.band);
        // Output rows the band reads (all of the image without banding).
        int64_t lo = 0, hi = op;
        if (two_d) {
            const int64_t oh_lo = std::max<int64_t>(
                0, floor_div(ih0 + p.pad[1] - (p.filt[1] - 1) * p.dil[1] + p.stride[1] - 1, p.stride[1]));
            const int64_t oh_hi = std::min(p.out[1], floor_div(ih1 - 1 + p.pad[1], p.stride[1]) + 1);
            lo = oh_lo * p.out[2];
            hi = std::max(lo, oh_hi * p.out[2]);
        }
        const int64_t q0 = n * op + lo, len = hi - lo;
        T* col = b.col(slot);
        if (len > 0) {
            int64_t lddy;
            const T* dy = dy_rows(q0, len, g, slot, &lddy);
            gemm(false, false, len, kr, kg, T(1), dy, lddy, w + g * kg * kr, kr, T(0), col, kr);
        }
        with_storage(p.x.dtype,
                     [&](auto tag) { col2im_pm<decltype(tag), T>(p, col, g, n, ih0, ih1, lo, b.scratch(slot)); });
    });
}

template <class T>
void run_bwd_data_cm(const ConvProblem& p, const Plan& pl, const Work<T>& b, const T* w) {
    const int64_t cg = p.cg(), kg = p.kg(), taps = p.filt_pixels(), kr = cg * taps;
    const int64_t op = p.out_pixels(), ip = p.in_pixels();
    const int64_t groups_n = ceil_div(p.n, pl.imgs), cblocks = ceil_div(cg, pl.cc);
    const int64_t pblocks = pl.unit ? ceil_div(pl.imgs * op, pl.tile) : 1;  // pixel blocks (1x1 only)
    const int64_t round = pl.dy_operand ? groups_n : pl.round;
    const int64_t full = pl.imgs * op;
    for (int64_t r0 = 0; r0 < groups_n; r0 += round) {
        const int64_t rn = std::min(round, groups_n - r0);
        if (!pl.dy_operand) {
            // dy of the round's image groups, channel-major per group ([K, len], ld len).
            const int64_t kchunks = ceil_div(p.k, kMinRows);
            parallel_tasks(rn * kchunks, [&](int64_t task, int) {
                const int64_t gi = r0 + task / kchunks, k0 = task % kchunks * kMinRows;
                const int64_t n0 = gi * pl.imgs, len = std::min(pl.imgs, p.n - n0) * op;
                with_storage(p.y.dtype, [&](auto s) {
                    gather_dense(p.y, static_cast<const decltype(s)*>(p.y_data), n0 * op, len, k0,
                                 std::min(kMinRows, p.k - k0), false, b.shared + (gi - r0) * p.k * full + k0 * len);
                });
            });
        }
        parallel_tasks(rn * p.groups * cblocks * pblocks, [&](int64_t task, int slot) {
            const int64_t pb = task % pblocks, cb = task / pblocks % cblocks, g = task / (pblocks * cblocks) % p.groups;
            const int64_t gi = r0 + task / (pblocks * cblocks * p.groups);
            const int64_t n0 = gi * pl.imgs, imgs = std::min(pl.imgs, p.n - n0), len = imgs * op;
            const int64_t c0 = cb * pl.cc, cn = std::min(pl.cc, cg - c0);
            const T* dyg;
            int64_t lddy;
            if (pl.dy_operand) {
                dyg = static_cast<const T*>(p.y_data) + n0 * p.y.strides[0] + g * kg * p.y.strides[1];
                lddy = p.y.strides[1];
            } else {
                dyg = b.shared + (gi - r0) * p.k * full + g * kg * len;
                lddy = len;
            }
            const T* wc = w + g * kg * kr + c0 * taps;
            if (pl.unit) {
                // Pixels [p0, p0 + pn) of the group (input pixel = output pixel).
                const int64_t p0 = pb * pl.tile, pn = std::min(pl.tile, len - p0);
                if (pn <= 0) return;
                if (pl.out_direct) {
                    T* dx = static_cast<T*>(p.x_data) + n0 * p.x.strides[0] + (g * cg + c0) * p.x.strides[1] + p0;
                    gemm(true, false, cn, pn, kg, static_cast<T>(p.alpha), wc, kr, dyg + p0, lddy,
                         static_cast<T>(p.beta), dx, p.x.strides[1]);
                } else {
                    gemm(true, false, cn, pn, kg, T(1), wc, kr, dyg + p0, lddy, T(0), b.col(slot), pn);
                    write_cm(p, p.x_data, p.x, g * cg + c0, cn, n0 * ip + p0, pn, b.col(slot), pn);
                }
                return;
            }
            T* col = b.col(slot);
            gemm(true, false, cn * taps, len, kg, T(1), wc, kr, dyg, lddy, T(0), col, len);
            {
                with_storage(p.x.dtype, [&](auto tag) {
                    col2im_cm<decltype(tag), T>(p, col, len, n0, imgs, g * cg + c0, cn, b.scratch(slot));
                });
            }
        });
    }
}

template <class T>
void run_bwd_data(const ConvProblem& p, const Plan& pl, const Work<T>& b) {
    const T* w = filter_operand(p, pl, b);
    if (pl.pm) run_bwd_data_pm(p, pl, b, w);
    else run_bwd_data_cm(p, pl, b, w);
}

// One GEMM of wgrad: dw block (kn x rn, ld kr) (+)= dy[k0.., tile] x col[r0.., tile]^T.
template <class T>
void wgrad_tile(const ConvProblem& p, const Plan& pl, const Tile& tl, int64_t g, int64_t k0, int64_t kn, int64_t r0,
                int64_t rn, T alpha, T beta, T* acc, T* col, T* io, bool dy_ready) {
    const int64_t cg = p.cg(), op = p.out_pixels();
    const int64_t q0 = tl.q0, len = tl.len;
    const T* dy;
    int64_t lddy;
    if (pl.pm) {
        if (pl.dy_operand) {
            dy = static_cast<const T*>(p.y_data) + q0 * p.y.strides[4] + k0;
            lddy = p.y.strides[4];
        } else {
            // io holds channels [io_k0, io_k0 + io_kn) pixel-major (all K when partials).
            const int64_t io_k0 = pl.partials ? 0 : k0, io_kn = pl.partials ? p.k : kn;
            if (!dy_ready)
                with_storage(p.y.dtype, [&](auto s) {
                    gather_dense(p.y, static_cast<const decltype(s)*>(p.y_data), q0, len, io_k0, io_kn, true, io);
                });
            dy = io + (k0 - io_k0);
            lddy = io_kn;
        }
        const T* c;
        int64_t ldc;
        if (pl.x_operand) {
            c = static_cast<const T*>(p.x_data) + q0 * p.x.strides[4] + g * cg + r0;
            ldc = p.x.strides[4];
        } else {
            with_storage(p.x.dtype, [&](auto s) {
                im2col_pm(p, static_cast<const decltype(s)*>(p.x_data), g, q0, len, r0, r0 + rn, col);
            });
            c = col;
            ldc = rn;
        }
        gemm(true, false, kn, rn, len, alpha, dy, lddy, c, ldc, beta, acc, cg * p.filt_pixels());
        return;
    }
    const int64_t n = q0 / op, p0 = q0 % op;
    if (pl.dy_operand) {
        dy = static_cast<const T*>(p.y_data) + n * p.y.strides[0] + k0 * p.y.strides[1] + p0;
        lddy = p.y.strides[1];
    } else {
        const int64_t io_k0 = pl.partials ? 0 : k0;
        if (!dy_ready)
            with_storage(p.y.dtype, [&](auto s) {
                gather_dense(p.y, static_cast<const decltype(s)*>(p.y_data), q0, len, io_k0,
                             pl.partials ? p.k : kn, false, io);
            });
        dy = io + (k0 - io_k0) * len;
        lddy = len;
    }
    const T* c;
    int64_t ldc;
    if (pl.x_operand) {
        c = static_cast<const T*>(p.x_data) + n * p.x.strides[0] + (g * cg + r0) * p.x.strides[1] + p0;
        ldc = p.x.strides[1];
    } else {
        with_storage(p.x.dtype, [&](auto s) {
            im2col_cm(p, static_cast<const decltype(s)*>(p.x_data), g, q0, len, r0, r0 + rn, col);
        });
        c = col;
        ldc = len;
    }
    gemm(false, true, kn, rn, len, alpha, dy, lddy, c, ldc, beta, acc, cg * p.filt_pixels());
}

template <class T>
void run_bwd_filter(const ConvProblem& p, const Plan& pl, const Work<T>& b) {
    const int64_t kg = p.kg(), kr = p.cg() * p.filt_pixels();
    const int64_t tiles = tile_count(p, pl);
    if (pl.partials) {
        // Partial s sums tiles [ceil(s T / P), ceil((s + 1) T / P)): partial 0 is never empty.
        const int64_t parts = pl.parts;
        auto first_tile = [&](int64_t s) { return ceil_div(s * tiles, parts); };
        parallel_tasks(parts, [&](int64_t s, int slot) {
            T* part = b.partial(s);
            const int64_t t0 = first_tile(s), t1 = first_tile(s + 1);
            for (int64_t t = t0; t < t1; ++t) {
                const Tile tl = tile_at(p, pl, t);
                for (int64_t g = 0; g < p.groups; ++g)
                    wgrad_tile(p, pl, tl, g, g * kg, kg, 0, kr, T(1), t == t0 ? T(0) : T(1), part + g * kg * kr,
                               b.col(slot), b.io(slot), g > 0);
            }
        });
        // Sum the partials in order into partial 0, then blend into dw.
        const int64_t total = p.k * kr, chunk = 4096;
        T* sum = b.partial(0);
        parallel_tasks(ceil_div(total, chunk), [&](int64_t c, int) {
            const int64_t i0 = c * chunk, i1 = std::min(total, i0 + chunk);
            for (int64_t s = 1; s < parts; ++s) {
                if (first_tile(s) == first_tile(s + 1)) continue;  // empty partial
                const T* part = b.partial(s);
                for (int64_t i = i0; i < i1; ++i) sum[i] += part[i];
            }
            if (pl.w_native)
                store_run(static_cast<T*>(p.w_data) + i0, 1, sum + i0, i1 - i0, static_cast<T>(p.alpha),
                          static_cast<T>(p.beta));
        });
        if (!pl.w_native) write_filter(p, sum, pl.pm);
        return;
    }
    // Blocks of dw, each summed over every tile in tile order.
    T* acc = pl.w_native ? static_cast<T*>(p.w_data) : b.w;
    const T alpha = static_cast<T>(pl.w_native ? p.alpha : 1.0);
    const T beta0 = static_cast<T>(pl.w_native ? p.beta : 0.0);
    const int64_t kblocks = ceil_div(kg, pl.kb), rblocks = ceil_div(kr, pl.rb);
    parallel_tasks(p.groups * kblocks * rblocks, [&](int64_t task, int slot) {
        const int64_t rbi = task % rblocks, kbi = task / rblocks % kblocks, g = task / (rblocks * kblocks);
        const int64_t k0 = g * kg + kbi * pl.kb, kn = std::min(pl.kb, kg - kbi * pl.kb);
        const int64_t r0 = rbi * pl.rb, rn = std::min(pl.rb, kr - r0);
        for (int64_t t = 0; t < tiles; ++t)
            wgrad_tile(p, pl, tile_at(p, pl, t), g, k0, kn, r0, rn, alpha, t == 0 ? beta0 : T(1), acc + k0 * kr + r0,
                       b.col(slot), b.io(slot), false);
    });
    if (!pl.w_native) write_filter(p, b.w, pl.pm);
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

class GemmConv final : public core::Impl<ConvProblem> {
public:
    const char* name() const override { return "cpu_gemm_conv"; }

    Status check(const ConvProblem& p) const override {
        ODNN_REQUIRE_SUPPORTED(!algo_is_direct(p), "algo %s runs on cpu_direct_conv",
                               core::conv_algo_name(p.kind, p.algo));
        const cudnnDataType_t t = p.x.dtype;
        ODNN_REQUIRE_SUPPORTED(t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF ||
                                   t == CUDNN_DATA_BFLOAT16,
                               "data type %s", core::dtype_name(t));
        ODNN_REQUIRE_SUPPORTED(p.w.dtype == t && p.y.dtype == t, "mixed data types");
        ODNN_REQUIRE_SUPPORTED(p.x.vect == 1 && p.y.vect == 1 && p.w.vect == 1, "vectorized layouts");
        ODNN_REQUIRE_SUPPORTED(fits_int(p.n * p.out_pixels()) && fits_int(p.n * p.in_pixels()) &&
                                   fits_int(p.c * p.filt_pixels()) && fits_int(p.x.strides[0]) &&
                                   fits_int(p.y.strides[0]),
                               "sizes beyond 32-bit BLAS indices");
        return Status::ok();
    }

    size_t workspace_size(const ConvProblem& p) const override { return plan(p).bytes(); }

    Status execute(const core::Handle&, const ConvProblem& p) const override {
        const Plan pl = plan(p);
        const BlasSerial serial;
        if (pl.dbl) run<double>(p, pl);
        else run<float>(p, pl);
        return Status::ok();
    }

private:
    template <class T>
    static void run(const ConvProblem& p, const Plan& pl) {
        const Work<T> b = carve<T>(pl, p.workspace);
        switch (p.kind) {
            case ConvKind::fwd: run_fwd<T>(p, pl, b); break;
            case ConvKind::bwd_data: run_bwd_data<T>(p, pl, b); break;
            case ConvKind::bwd_filter: run_bwd_filter<T>(p, pl, b); break;
        }
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, ConvProblem, GemmConv, core::kPriorityGeneric);

}  // namespace odnn::cpu
