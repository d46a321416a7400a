// CUDA batch normalization: forward inference, forward training and backward, every
// mode, FLOAT / DOUBLE / HALF / BFLOAT16, with the fused activation and add.
//
// Kernels, by layout of x (y, z, dy, dx, dz must share x's strides for the fast ones):
//   nchw    packed NCHW / NCDHW, SPATIAL: one block per (channel, slice of N*S), the
//           channel's run of S elements read in 16-byte vectors (S divisible by the width)
//   nhwc    packed NHWC / NDHWC, SPATIAL (also N x C x 1 x 1): statistics block =
//           channels x rows, each thread V consecutive channels, 16-byte vectors (C
//           divisible by V), rows in bands from the tensor's end; apply: each thread a
//           fixed chunk of V channels (its coefficients in registers) over a stride of
//           rows, after statistics in one resident wave from the tensor's start (so its
//           first re-reads hit the L2)
//   generic any strides, either mode: per-element index arithmetic
//   fused   packed NCHW training / backward in one launch (fused_nchw; the default where
//           it can run, ODNN_BN_FUSED=off for three passes)
//   resident packed NCHW training / backward, each channel held in a cluster's shared
//           memory (resident_nchw, sm_90; ODNN_BN_RESIDENT=on only: measured slower
//           than the three passes but for the FLOAT backward, see there)
// Statistics use a two-level reduction: partial sums per (slice, feature) in the
// workspace (doubles, accumulated from float partials, shifted by a sample of the
// feature so large means do not cancel), then one thread per feature adds the slices
// in a fixed order (deterministic) and finishes the feature's coefficients.
//
// Bytes moved, T = the tensor's size in bytes:
//   forward inference  2T  (read x, write y; + T for z, + T when beta != 0)
//   forward training   3T  (statistics: read x; apply: read x, write y; + z / beta as above;
//                           fused: 2T and the re-reads of x the L2 misses)
//   backward           5T  (statistics: read x, dy; apply: read x, dy, write dx;
//                           fused: 3T and the re-reads the L2 misses;
//                           + 2T for y with an activation, + T for dz, + T when beta != 0;
//                           + T when savedMean / savedInvVariance are NULL)
// plus O(features * slices) bytes of partial sums.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/cuda_runtime.hpp"
#include "core/dtype.hpp"
#include "core/elem_access.hpp"
#include "core/knob.hpp"
#include "core/norm_math.hpp"
#include "core/norm_problem.hpp"
#include "cuda/async_copy.cuh"
#include "cuda/bn_fused_tiles.hpp"
#include "cuda/launch.cuh"
#include "cuda/norm_common.cuh"
#include "cuda/sm90_async.cuh"

namespace odnn::cuda {

using core::FastDiv;
using core::NormActivation;
using core::NormCommon;
using core::NormGeometry;
using core::NormOps;
using core::Status;
using core::TensorDesc;

namespace {

constexpr int kThreads = 256;
constexpr int kMaxSlices = 1024;
constexpr int kStatsNhwcBlocks = 3;  // stats_nhwc blocks an SM (its launch bound)

enum class Layout { generic, nchw, nhwc };

// The fused launch (fused_nchw): blocks an SM it is built for (its launch bound, <= 128
// registers), worker threads a block (the last warp is its control warp), and the
// vectors a worker thread holds in flight a round: forward 8 of x, backward 4 each of x
// and dy (at 4 / 2 both directions ran 1.1-1.3x slower on the H100). At three blocks an
// SM (<= 80 registers) every instance spilled, 250-1350 bytes, in its load rounds: Nsight
// Compute counted 6.8 M local-memory requests in the f32 training forward, its L2 92%
// busy and DRAM 64% (0.473 ms). At two blocks an SM nothing spills, and the tiles waiting
// in L2 for their re-read take 2/3 of the room: 0.392 ms, DRAM 68%, 22% of the re-reads
// missing the L2 (docs/PERFORMANCE.md).
constexpr int kFusedBlocks = 2;
constexpr int kFusedWorkers = kThreads - 32;
template <bool kBwd>
constexpr int fused_unroll() {
    return kBwd ? 4 : 8;
}

struct Strides {
    int64_t st[core::kDimMax];
};

Strides strides_of(const TensorDesc& d) {
    Strides s{};
    for (int i = 0; i < d.nb_dims; ++i) s.st[i] = d.strides[i];
    return s;
}

// ---- Planning (host) ----

bool packed_nchw(const TensorDesc& t) {
    int64_t s = 1;
    for (int i = t.nb_dims - 1; i >= 0; --i) {
        if (t.dims[i] > 1 && t.strides[i] != s) return false;
        s *= t.dims[i];
    }
    return true;
}

bool packed_nhwc(const TensorDesc& t) {
    int64_t s = 1;
    if (t.dims[1] > 1 && t.strides[1] != 1) return false;
    s = t.dims[1];
    for (int i = t.nb_dims - 1; i >= 2; --i) {
        if (t.dims[i] > 1 && t.strides[i] != s) return false;
        s *= t.dims[i];
    }
    return t.dims[0] == 1 || t.strides[0] == s;
}

bool same_layout(const TensorDesc& a, const TensorDesc& b) {
    for (int i = 0; i < a.nb_dims; ++i)
        if (a.dims[i] > 1 && a.strides[i] != b.strides[i]) return false;
    return true;
}

int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(hi, v)); }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Workspace carving and the reduction split. Depends on shapes, strides and the device's
// SM count (read once a process) only, so the size queries and the runs agree.
struct Plan {
    Layout layout = Layout::generic;
    int64_t F = 0, M = 0;
    int P = 1;
    // Packed NCHW training and backward: statistics and apply in one launch (fused_nchw),
    // P = Q tiles a channel (its partial sums' pieces), fitted to fused_grid blocks.
    bool fused = false;
    int64_t fused_grid = 0;
    size_t off_a = 0, off_b = 0, off_mean = 0, off_istd = 0, off_coef = 0, off_sync = 0, bytes = 0;
};

// Whether packed NCHW training / backward run fused (fused_nchw) where they can (16-byte
// vectors, a cooperative launch): yes unless ODNN_BN_FUSED=off (the GPU suite runs
// both). It moves 2T / 3T of DRAM traffic (plus the re-reads the L2 misses) against
// three passes' 3T / 5T. On the H100 it measured 1.10-1.30x faster than three passes at
// 128x256x56x56 and faster at ResNet-50's batch-norm shapes at batch 32 but for three
// forwards, 3-7% slower (bench/bn_nchw_sizes.txt, docs/PERFORMANCE.md).
bool fused_wanted() {
    static const bool off = core::knob_is("ODNN_BN_FUSED", "off");
    return !off;
}

// How the fused launch publishes a tile's sums: stamped pieces (the default) or a
// release count a channel (ODNN_BN_FUSED_SYNC=counter, a tuning knob the GPU suite runs).
// A reader polls its stamped pieces eight at a time, one memory round trip a batch, so
// stamps win at every piece count measured: at 128x256x56x56 on the H100, stamped against
// counted, training forward f32 0.355 / 0.401 ms (66 pieces a channel), bf16 0.186 /
// 0.209 (33), backward f32 0.498 / 0.567 (132), bf16 0.269 / 0.300 (66).
bool fused_stamped() {
    static const bool counter = core::knob_is("ODNN_BN_FUSED_SYNC", "counter");
    return !counter;
}

// Where the fused launch marks its sums unset (stamped) or clears its counters (counted):
// the kernel itself, before a grid barrier (the default), or a memset launched before it
// (ODNN_BN_FUSED_INIT=memset, a tuning knob the GPU suite runs). One launch a call
// instead of two took 2.5-4 us of host time off each call and 0-3% off the batch-32
// ResNet-50 shapes on the H100; only 8x64x56x56 went 2-4% slower, the barrier's cost
// against a 12 us kernel (docs/PERFORMANCE.md).
bool fused_init_in_kernel() {
    static const bool memset = core::knob_is("ODNN_BN_FUSED_INIT", "memset");
    return !memset;
}

// Whether the fused launch's plain instances step a round's vector offsets (for_round)
// instead of dividing for each (ODNN_BN_FUSED_WALK=off, a tuning knob the GPU suite runs).
bool fused_walk() {
    static const bool off = core::knob_is("ODNN_BN_FUSED_WALK", "off");
    return !off;
}

// Whether packed NHWC training and backward read the tensor's first rows last in their
// statistics pass (stats_nhwc's bands) and then apply in one resident wave, rows ascending,
// so that the apply's first re-reads hit the L2 (ODNN_BN_NHWC_ORDER=slices: a slice of
// rows a statistics block and the apply in about two waves, a tuning knob the GPU suite
// runs).
bool nhwc_tail_first() {
    static const bool slices = core::knob_is("ODNN_BN_NHWC_ORDER", "slices");
    return !slices;
}

// Blocks of kernel fn an SM runs at once (kThreads a block, smem bytes of dynamic shared
// memory), 0 where the device does not say.
template <class K>
int blocks_per_sm(K fn, size_t smem) {
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, fn, kThreads, smem) != cudaSuccess) {
        cudaGetLastError();
        b = 0;
    }
    return b;
}

// Threads of kernel fn resident at once on the GPU (blocks_per_sm).
template <class K>
int64_t resident_threads(K fn, size_t smem) {
    return int64_t{blocks_per_sm(fn, smem)} * sm_count() * kThreads;
}

// Steps from a fused tile's statistics to its apply (ODNN_BN_FUSED_LAG, a tuning knob).
int fused_lag() {
    static const int lag = static_cast<int>(clamp64(core::knob_long("ODNN_BN_FUSED_LAG", 2), 2, 8));
    return lag;
}

// Steps ahead that the fused launch asks the L2 for a tile's statistics inputs
// (FusedPlan::prefetch): one in the backward, none in the forward (ODNN_BN_FUSED_PREFETCH=d
// sets both, a tuning knob; 0: none). H100, 128x256x56x56 NCHW, two runs each: the bf16
// backward 0.2659 / 0.2627 ms -> 0.2550 / 0.2578 (80.4% / 79.5% of copy), f32 level; the
// forwards 1-3% slower with it (docs/PERFORMANCE.md). Tiles of one round only
// (launch_fused_v).
int fused_prefetch(bool bwd) {
    static const long d = core::knob_long("ODNN_BN_FUSED_PREFETCH", -1);
    return d < 0 ? (bwd ? 1 : 0) : static_cast<int>(clamp64(d, 0, 4));
}

// ODNN_BN_RESIDENT (resident_knob): 0 off, K > 0 the cluster size forced, kResidentOn
// (the channel's size picks it).
constexpr int kResidentOn = -1;
int resident_knob();

// ODNN_BN_FUSED_TRACE=path (a profiling knob): each fused launch stamps its phases
// (TraceSlot) a block and step, waits for them and writes them to `path` as text, one
// line a block and step (scripts/bn_fused_trace.py reads them); the last launch's stay.
// The stamps are compiled only with -DODNN_BN_TRACE=ON (CMake): in the kernel they cost
// registers (up to 5 in the plain instances, spills in others); without them a launch
// with the knob set fails, naming the option.
const char* fused_trace_path() {
    static const char* p = core::knob_str("ODNN_BN_FUSED_TRACE");
    return p;
}

// The fewest steps the fused launch is cut into (ODNN_BN_FUSED_MIN_STEPS, a tuning knob).
int64_t fused_min_steps() {
    static const int64_t m = clamp64(core::knob_long("ODNN_BN_FUSED_MIN_STEPS", 0), 0, 4096);
    return m;
}

// stat_tensors: how many tensors of x's size the statistics pass reads (training 1,
// backward 2, 3 with an activation); 0 where no statistics are gathered (inference).
Plan make_plan(const NormCommon& k, std::initializer_list<const TensorDesc*> others, const TensorDesc& x,
               int stat_tensors) {
    Plan pl;
    const NormGeometry& g = k.g;
    pl.F = g.features();
    pl.M = g.count();
    bool uniform = true;
    for (const TensorDesc* t : others)
        if (t && t->is_set() && !same_layout(x, *t)) uniform = false;
    // N x C x 1 x 1 is both; a C = 1 NCHW tensor also reads as NHWC but wants the NCHW kernel.
    if (uniform && g.per_channel && packed_nhwc(x) && (g.s == 1 || !packed_nchw(x)))
        pl.layout = Layout::nhwc;
    else if (uniform && g.per_channel && packed_nchw(x))
        pl.layout = Layout::nchw;
    int64_t p = 1;
    switch (pl.layout) {
        case Layout::nchw: p = clamp64(ceil_div(1024, g.c), 1, std::max<int64_t>(1, g.n * g.s / 8192)); break;
        case Layout::nhwc: {
            // One wave of stats_nhwc (three blocks an SM; the grid's x extent as with 16-byte
            // vectors): at 128x256x56x56 on the H200, 396 slices took the bf16 training
            // forward from 0.2127 to 0.1984 ms and the backward from 0.3188 to 0.2873 against
            // the 1024 slices (2.6 waves) before, whose last wave and per-block reductions
            // idled the SMs; 792 measured as 1024.
            const int64_t vmax = std::max<int64_t>(1, 16 / (core::dtype_bits(k.dtype) / 8));
            const int64_t gx = ceil_div(g.c, vmax * 256);
            p = clamp64(ceil_div(int64_t{kStatsNhwcBlocks} * sm_count(), gx), 1, std::max<int64_t>(1, g.n * g.s / 32));
            break;
        }
        case Layout::generic:
            if (g.per_channel)
                p = clamp64(ceil_div(1024, pl.F), 1, std::max<int64_t>(1, pl.M / 4096));
            else
                p = clamp64(ceil_div(512, ceil_div(pl.F, kThreads)), 1, std::max<int64_t>(1, pl.M / 32));
            break;
    }
    pl.P = static_cast<int>(std::min<int64_t>(p, kMaxSlices));
    const int64_t elt = core::dtype_bits(k.dtype) / 8;
    const int64_t chan_bytes = g.n * g.s * elt;  // one tensor's bytes of one channel
    // Fused (packed NCHW training / backward, 16-byte vectors): tiles of one round, the
    // grid as many blocks as the kernel's launch bound fits. Tile indices and the
    // per-channel vector index are 32-bit-safe.
    const int64_t vec16 = std::max<int64_t>(1, 16 / elt);
    if (pl.layout == Layout::nchw && stat_tensors > 0 && fused_wanted() &&
        (g.s % vec16) == 0 && chan_bytes < (int64_t{1} << 32) && g.c * int64_t{kMaxSlices} < (int64_t{1} << 31)) {
        const bool bwd = stat_tensors > 1;
        const int64_t round = int64_t{bwd ? fused_unroll<true>() : fused_unroll<false>()} * kFusedWorkers;
        const int64_t grid = int64_t{kFusedBlocks} * sm_count();
        pl.fused = true;
        pl.fused_grid = grid;
        pl.P = fused_tiles(g.c, g.n * g.s / vec16, round, grid, fused_min_steps(), kMaxSlices);
    }
    const size_t f8 = static_cast<size_t>(pl.F) * 8;
    size_t off = 0;
    pl.off_a = off;
    off = align256(off + f8 * pl.P);
    pl.off_b = off;
    off = align256(off + f8 * pl.P);
    pl.off_mean = off;
    off = align256(off + f8);
    pl.off_istd = off;
    off = align256(off + f8);
    pl.off_coef = off;
    off = align256(off + 5 * f8);  // five coefficient arrays, sized for double
    pl.off_sync = off;
    if (pl.fused) off = align256(off + sizeof(unsigned) * static_cast<size_t>(pl.F));
    pl.bytes = off + 256;           // room to align a caller's workspace pointer
    return pl;
}

char* align_up256(char* p) {
    return reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(p) + 255) / 256 * 256);
}

// ---- Block reduction of two doubles ----

__device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// Sums a and b over the block (blockDim.x a multiple of 32) in one fixed order; the result
// is valid in thread 0.
__device__ __forceinline__ void block_sum2(double& a, double& b) {
    __shared__ double sh[2][32];
    a = warp_sum(a);
    b = warp_sum(b);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    if (lane == 0) {
        sh[0][warp] = a;
        sh[1][warp] = b;
    }
    __syncthreads();
    if (warp == 0) {
        a = lane < warps ? sh[0][lane] : 0.0;
        b = lane < warps ? sh[1][lane] : 0.0;
        a = warp_sum(a);
        b = warp_sum(b);
    }
}

// Per element: forward a += x - K, b += (x - K)^2 (K = the feature's first element);
// backward a += d, b += d * (x - mean), with d = dy * act'(y).
template <class C, bool kBwd>
__device__ __forceinline__ void contrib(C x, C dy, C y, bool has_act, const NormActivation& act, C center, C& a,
                                        C& b) {
    if constexpr (!kBwd) {
        const C d = x - center;
        a += d;
        b += d * d;
    } else {
        C d = dy;
        if (has_act) d *= core::norm_act_grad_from_y(act, y);
        a += d;
        b += d * (x - center);
    }
}

// ---- Statistics: packed NCHW, one block per (channel, slice) ----

// Offset of vector v of a packed NCHW channel from the channel's first element: element
// j = v * V of the channel's N * S lies at n * cs + j - n * S (n = j / S).
template <int V>
__device__ __forceinline__ int64_t nchw_vec_offset(int64_t v, int64_t cs, uint32_t s, const FastDiv& fd_s) {
    const uint32_t j = static_cast<uint32_t>(v) * V;
    const uint32_t n = fd_s.div(j);
    return static_cast<int64_t>(n) * cs + (j - n * s);
}

// The vectors [v0, v1) of one channel (its first elements at xc, dyc, yc), summed into
// this thread's acc_a / acc_b (contrib).
template <class T, int V, bool kBwd>
__device__ __forceinline__ void stats_nchw_slice(const T* __restrict__ xc, const T* __restrict__ dyc,
                                                 const T* __restrict__ yc, bool has_act, const NormActivation& act,
                                                 typename Io<T>::C center, int64_t cs, uint32_t s, FastDiv fd_s,
                                                 int64_t v0, int64_t v1, double& acc_a, double& acc_b) {
    using C = typename Io<T>::C;
    constexpr int U = 4;  // vectors in flight per thread and tensor
    auto offset = [&](int64_t v) { return nchw_vec_offset<V>(v, cs, s, fd_s); };
    int64_t v = v0 + threadIdx.x;
    for (; v + (U - 1) * kThreads < v1; v += U * kThreads) {
        Vec<T, V> xv[U], dv[U], yv[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t off = offset(v + u * kThreads);
            xv[u] = load_vec<T, V>(xc + off);
            if constexpr (kBwd) {
                dv[u] = load_vec<T, V>(dyc + off);
                if (has_act) yv[u] = load_vec<T, V>(yc + off);
            }
        }
        C fa = 0, fb = 0;
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < V; ++i)
                contrib<C, kBwd>(Io<T>::in(xv[u].v[i]), kBwd ? Io<T>::in(dv[u].v[i]) : C(0),
                                 (kBwd && has_act) ? Io<T>::in(yv[u].v[i]) : C(0), has_act, act, center, fa, fb);
        acc_a += fa;
        acc_b += fb;
    }
    for (; v < v1; v += kThreads) {
        const int64_t off = offset(v);
        const Vec<T, V> xv = load_vec<T, V>(xc + off);
        Vec<T, V> dv{}, yv{};
        if constexpr (kBwd) {
            dv = load_vec<T, V>(dyc + off);
            if (has_act) yv = load_vec<T, V>(yc + off);
        }
        C fa = 0, fb = 0;
#pragma unroll
        for (int i = 0; i < V; ++i)
            contrib<C, kBwd>(Io<T>::in(xv.v[i]), kBwd ? Io<T>::in(dv.v[i]) : C(0),
                             (kBwd && has_act) ? Io<T>::in(yv.v[i]) : C(0), has_act, act, center, fa, fb);
        acc_a += fa;
        acc_b += fb;
    }
}

template <class T, int V, bool kBwd>
__global__ void __launch_bounds__(kThreads)
    stats_nchw(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ y, bool has_act,
               NormActivation act, const double* __restrict__ mean, int64_t cs, uint32_t s, FastDiv fd_s,
               int64_t nvec, int P, double* __restrict__ part_a, double* __restrict__ part_b, int64_t F) {
    using C = typename Io<T>::C;
    const int64_t c = blockIdx.x;
    const int p = blockIdx.y;
    const T* xc = x + c * s;
    const C center = kBwd ? static_cast<C>(mean[c]) : Io<T>::in(xc[0]);
    double acc_a = 0.0, acc_b = 0.0;
    stats_nchw_slice<T, V, kBwd>(xc, kBwd ? dy + c * s : nullptr, (kBwd && has_act) ? y + c * s : nullptr, has_act,
                                 act, center, cs, s, fd_s, nvec * p / P, nvec * (p + 1) / P, acc_a, acc_b);
    block_sum2(acc_a, acc_b);
    if (threadIdx.x == 0) {
        part_a[static_cast<int64_t>(p) * F + c] = acc_a;
        part_b[static_cast<int64_t>(p) * F + c] = acc_b;
    }
}

// ---- Statistics: packed NHWC (rows x C), block = (TX channel groups) x (TY rows) ----

// How stats_nhwc's P blocks take the rows: in `count` bands of P `rows`-row parts, block p
// part p of each, the last band first. Where nhwc_tail_first, a part is U TY rows (one
// step of the block's threads): the rows read last are the tensor's first, which the
// apply after it (one resident wave, rows ascending) reads first, so those re-reads hit
// the L2. Else one band: a slice of ceil(rows / P) rows a block.
struct StatsBands {
    int64_t rows, count;
};
StatsBands stats_nhwc_bands(int64_t rows, int P, int U, int TY) {
    const int64_t b = nhwc_tail_first() ? int64_t{U} * TY : ceil_div(rows, P);
    return {b, ceil_div(rows, P * b)};
}
// stats_nhwc's rows a step a thread (backward: two or three tensors).
constexpr int stats_nhwc_unroll(bool bwd) { return bwd ? 2 : 4; }

// Each thread sums its rows in C (float for the 16-bit and FLOAT types) over chunks of
// kChunk steps and adds each chunk into its own double slot of shared memory: sixteen
// double accumulators a thread (V = 8) held stats_nhwc<bf16, 8> at 80 registers and 29%
// occupancy. A float chunk adds at most U * kChunk terms, so its rounding stays near
// 2^-24 * U kChunk relative to the chunk's sum. The backward reads two or three tensors
// and takes U = 2 rows a step (at U = 4 its 16-bit form spilled 1 KB at 80 registers).
template <class T, int V, bool kBwd>
__global__ void __launch_bounds__(kThreads, kStatsNhwcBlocks)  // <= 80 registers: three blocks an SM
    stats_nhwc(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ y, bool has_act,
               NormActivation act, const double* __restrict__ mean, int64_t c_total, int64_t rows, int P, int64_t B,
               int64_t bands, double* __restrict__ part_a, double* __restrict__ part_b) {  // StatsBands: B, bands
    using C = typename Io<T>::C;
    constexpr int U = stats_nhwc_unroll(kBwd), kChunk = 16;
    extern __shared__ double shm[];  // [2][TY][TX * V]
    const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
    const int p = blockIdx.y;
    const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * TX + tx) * V;
    const bool active = c0 < c_total;  // V divides C
    const int width = TX * V;
    double* sa = shm + ty * width + tx * V;
    double* sb = shm + (TY + ty) * width + tx * V;
    C center[V], ca[V], cb[V];
#pragma unroll
    for (int i = 0; i < V; ++i) {
        sa[i] = sb[i] = 0.0;
        ca[i] = cb[i] = C(0);
        center[i] = C(0);
        if (active) center[i] = kBwd ? static_cast<C>(mean[c0 + i]) : Io<T>::in(x[c0 + i]);
    }
    if (active) {
        int steps = 0;
        auto flush = [&] {
#pragma unroll
            for (int i = 0; i < V; ++i) {
                sa[i] += ca[i];
                sb[i] += cb[i];
                ca[i] = cb[i] = C(0);
            }
            steps = 0;
        };
        auto step = [&](const int64_t* rr, int cnt) {
            Vec<T, V> xv[U], dv[U], yv[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                if (u >= cnt) break;
                const int64_t off = rr[u] * c_total + c0;
                xv[u] = load_vec<T, V>(x + off);
                if constexpr (kBwd) {
                    dv[u] = load_vec<T, V>(dy + off);
                    if (has_act) yv[u] = load_vec<T, V>(y + off);
                }
            }
#pragma unroll
            for (int i = 0; i < V; ++i) {
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    if (u >= cnt) break;
                    contrib<C, kBwd>(Io<T>::in(xv[u].v[i]), kBwd ? Io<T>::in(dv[u].v[i]) : C(0),
                                     (kBwd && has_act) ? Io<T>::in(yv[u].v[i]) : C(0), has_act, act, center[i], ca[i],
                                     cb[i]);
                }
            }
            if (++steps == kChunk) flush();
        };
        // Bands of P B rows, block p taking rows [(k P + p) B, + B) of band k, from the last
        // band to the first (stats_nhwc_bands).
        const int64_t band = int64_t{P} * B;
        for (int64_t base = (bands - 1) * band + p * B; base >= 0; base -= band) {
            const int64_t end = min(base + B, rows);
            int64_t r = base + ty;
            for (; r + (U - 1) * TY < end; r += U * TY) {
                int64_t rr[U];
#pragma unroll
                for (int u = 0; u < U; ++u) rr[u] = r + u * TY;
                step(rr, U);
            }
            for (; r < end; r += TY) {
                int64_t rr[U];
#pragma unroll
                for (int u = 0; u < U; ++u) rr[u] = r;
                step(rr, 1);
            }
        }
        flush();
    }
    __syncthreads();
    if (ty == 0 && active) {
#pragma unroll
        for (int i = 0; i < V; ++i) {
            double a = 0.0, b = 0.0;
            for (int k = 0; k < TY; ++k) {
                a += shm[k * width + tx * V + i];
                b += shm[(TY + k) * width + tx * V + i];
            }
            part_a[static_cast<int64_t>(p) * c_total + c0 + i] = a;
            part_b[static_cast<int64_t>(p) * c_total + c0 + i] = b;
        }
    }
}

// ---- Statistics: any strides ----

// SPATIAL: one block per (channel, slice of the N * S elements).
template <class T, bool kBwd>
__global__ void __launch_bounds__(kThreads)
    stats_generic_channel(NormGeometry g, const T* __restrict__ x, Strides xs, const T* __restrict__ dy, Strides dys,
                          const T* __restrict__ y, Strides ys, bool has_act, NormActivation act,
                          const double* __restrict__ mean, int P, double* __restrict__ part_a,
                          double* __restrict__ part_b) {
    using C = typename Io<T>::C;
    const int64_t f = blockIdx.x;
    const int p = blockIdx.y;
    const int64_t M = g.count(), F = g.features();
    const C center = kBwd ? static_cast<C>(mean[f]) : Io<T>::in(x[g.offset(xs.st, 0, f)]);
    double acc_a = 0.0, acc_b = 0.0;
    for (int64_t m = M * p / P + threadIdx.x; m < M * (p + 1) / P; m += kThreads) {
        C a = 0, b = 0;
        contrib<C, kBwd>(Io<T>::in(x[g.offset(xs.st, m, f)]), kBwd ? Io<T>::in(dy[g.offset(dys.st, m, f)]) : C(0),
                         (kBwd && has_act) ? Io<T>::in(y[g.offset(ys.st, m, f)]) : C(0), has_act, act, center, a, b);
        acc_a += a;
        acc_b += b;
    }
    block_sum2(acc_a, acc_b);
    if (threadIdx.x == 0) {
        part_a[static_cast<int64_t>(p) * F + f] = acc_a;
        part_b[static_cast<int64_t>(p) * F + f] = acc_b;
    }
}

// PER_ACTIVATION: one thread per feature (consecutive features are usually adjacent
// in memory), each summing a slice of the batch.
template <class T, bool kBwd>
__global__ void __launch_bounds__(kThreads)
    stats_generic_feature(NormGeometry g, const T* __restrict__ x, Strides xs, const T* __restrict__ dy,
                          Strides dys, const T* __restrict__ y, Strides ys, bool has_act, NormActivation act,
                          const double* __restrict__ mean, int P, double* __restrict__ part_a,
                          double* __restrict__ part_b) {
    using C = typename Io<T>::C;
    const int64_t f = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
    const int p = blockIdx.y;
    const int64_t M = g.count(), F = g.features();
    if (f >= F) return;
    const C center = kBwd ? static_cast<C>(mean[f]) : Io<T>::in(x[g.offset(xs.st, 0, f)]);
    double acc_a = 0.0, acc_b = 0.0;
    for (int64_t m = M * p / P; m < M * (p + 1) / P; ++m) {
        C a = 0, b = 0;
        contrib<C, kBwd>(Io<T>::in(x[g.offset(xs.st, m, f)]), kBwd ? Io<T>::in(dy[g.offset(dys.st, m, f)]) : C(0),
                         (kBwd && has_act) ? Io<T>::in(y[g.offset(ys.st, m, f)]) : C(0), has_act, act, center, a, b);
        acc_a += a;
        acc_b += b;
    }
    part_a[static_cast<int64_t>(p) * F + f] = acc_a;
    part_b[static_cast<int64_t>(p) * F + f] = acc_b;
}

// ---- Per-feature finishing (one thread per feature) ----

struct ParamIo {
    Strides sb, mv;  // scale/bias and mean/variance strides
    int dtype;       // FLOAT or DOUBLE
};

// The P partial sums of feature f (pieces p * F + f), two arrays. The sequential form: one
// thread per feature, pieces in order. The parallel form: a block of 32 features x W warps
// (W = min(P, 32)), warp w summing pieces w, w + W, ..., then warp 0 adding the W warp sums
// in order (deterministic too). The sequential form is latency-bound where P is large: one
// block over 256 channels with 1024 NHWC pieces measured 140 us on the H200 (nearly half
// of an NHWC training forward; the parallel form took NHWC training forward 0.51 -> 0.40 ms
// f32, 0.44 -> 0.30 bf16). Where P is small (NCHW plans, per-activation mode: many features,
// few pieces) 32-thread blocks would cap occupancy, so the sequential form stays there.
// ODNN_BN_FINALIZE=parallel or =sequential forces one (the GPU suite runs both).
constexpr int kFinLanes = 32, kFinMaxWarps = 32, kFinParallelPieces = 8;

bool finalize_parallel(int P) {
    static const bool force_par = core::knob_is("ODNN_BN_FINALIZE", "parallel");
    static const bool force_seq = core::knob_is("ODNN_BN_FINALIZE", "sequential");
    if (force_par || force_seq) return force_par;
    return P >= kFinParallelPieces;
}

struct FinalizeLaunch {
    dim3 grid, block;
};

FinalizeLaunch finalize_launch(int64_t F, int P) {
    if (!finalize_parallel(P)) return {dim3(static_cast<unsigned>(ceil_div(F, kThreads))), dim3(kThreads)};
    const unsigned warps = static_cast<unsigned>(std::max(1, std::min(P, kFinMaxWarps)));
    return {dim3(static_cast<unsigned>(ceil_div(F, kFinLanes))), dim3(kFinLanes, warps)};
}

// Feature of this thread (threadIdx.x within blockDim.x features per block) and, in
// *sa / *sb, its sums: valid in the threads with threadIdx.y == 0. Every thread of the
// block must call it (a barrier when blockDim.y > 1).
__device__ __forceinline__ int64_t sum_partials(const double* __restrict__ part_a, const double* __restrict__ part_b,
                                                int P, int64_t F, double* sa, double* sb) {
    const int64_t f = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int W = static_cast<int>(blockDim.y), w = static_cast<int>(threadIdx.y);
    double ra = 0.0, rb = 0.0;
    if (f < F)
        for (int p = w; p < P; p += W) {
            ra += part_a[static_cast<int64_t>(p) * F + f];
            rb += part_b[static_cast<int64_t>(p) * F + f];
        }
    if (W > 1) {
        __shared__ double sh_a[kFinMaxWarps][kFinLanes], sh_b[kFinMaxWarps][kFinLanes];
        sh_a[w][threadIdx.x] = ra;
        sh_b[w][threadIdx.x] = rb;
        __syncthreads();
        if (w == 0) {
            ra = rb = 0.0;
            for (int i = 0; i < W; ++i) {
                ra += sh_a[i][threadIdx.x];
                rb += sh_b[i][threadIdx.x];
            }
        }
    }
    *sa = ra;
    *sb = rb;
    return f;
}

// What finishing a feature's forward statistics writes: mean and inverse std (workspace,
// backward's recomputation), saved and running values, and the apply coefficients
// y = a * (x - mean) + bias. Null pointers are skipped.
template <class C>
struct FwdFinish {
    const void* x;  // the centre of each feature: its first element
    int x_dtype;
    Strides xs;
    ParamIo pio;
    const void* scale;
    const void* bias;
    void* run_mean;
    void* run_var;
    void* save_mean;
    void* save_istd;
    double factor, eps;
    double* mean_out;
    double* istd_out;
    C *coef_a, *coef_m, *coef_b, *coef_ml;
};

// A feature's mean, (biased) variance and inverse std from its sums shifted by `center`:
// sa = sum (x - center), sb = sum (x - center)^2 over M elements.
struct MeanVar {
    double mean, var, istd;
};
__device__ __forceinline__ MeanVar mean_var(double center, double sa, double sb, double M, double eps) {
    const double dm = sa / M;
    double var = sb / M - dm * dm;
    if (var < 0.0) var = 0.0;
    return {center + dm, var, 1.0 / sqrt(var + eps)};
}

// A feature's forward apply coefficients: y = a * ((x - m) - ml) + b.
template <class C>
struct FwdCoef {
    C a, m, b, ml;
};

// Finishes feature f from its sums; `side` writes the side outputs (mean_out / istd_out,
// running and saved values). The coefficients are computed where o.scale is set.
// What finishing feature f reads besides its sums, loaded at once (one memory latency,
// not one a value) and ahead of the sums where the caller can. The values are loaded as
// raw bits and converted after the last load is issued: core::load_elem converts right
// after its load, so five of them in a row took five round trips (the fused launch's
// forward control warp, where that chain sets the step length).
struct FwdParams {
    double center, rm, rv, sc, bi;
};
// Element i of a FLOAT / DOUBLE / HALF / BFLOAT16 array as its bits, and those bits as a
// double (the data types FwdFinish's arrays take).
__device__ __forceinline__ uint64_t load_bits(const void* base, int64_t i, int dtype) {
    switch (dtype) {
        case CUDNN_DATA_DOUBLE: return static_cast<const uint64_t*>(base)[i];
        case CUDNN_DATA_FLOAT: return static_cast<const uint32_t*>(base)[i];
        default: return static_cast<const uint16_t*>(base)[i];
    }
}
__device__ __forceinline__ double bits_value(uint64_t b, int dtype) {
    switch (dtype) {
        case CUDNN_DATA_DOUBLE: return __longlong_as_double(static_cast<long long>(b));
        case CUDNN_DATA_FLOAT: return __uint_as_float(static_cast<uint32_t>(b));
        case CUDNN_DATA_HALF: return __half2float(__ushort_as_half(static_cast<unsigned short>(b)));
        default: return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(b)));
    }
}
// fwd_params in two halves: the loads (issued, not waited for) and the conversions, so
// a caller can put other loads between them.
struct FwdParamBits {
    uint64_t center, rm, rv, sc, bi;
    bool run, coef;
};
template <class C>
__device__ __forceinline__ FwdParamBits fwd_param_bits(const NormGeometry& g, const FwdFinish<C>& o, int64_t f,
                                                       bool side) {
    const int64_t mo = g.param_offset(o.pio.mv.st, f), so = g.param_offset(o.pio.sb.st, f);
    FwdParamBits b;
    b.run = side && o.run_mean;
    b.coef = o.scale != nullptr;
    b.center = load_bits(o.x, g.param_offset(o.xs.st, f), o.x_dtype);
    b.rm = b.run ? load_bits(o.run_mean, mo, o.pio.dtype) : 0;
    b.rv = b.run ? load_bits(o.run_var, mo, o.pio.dtype) : 0;
    b.sc = b.coef ? load_bits(o.scale, so, o.pio.dtype) : 0;
    b.bi = b.coef ? load_bits(o.bias, so, o.pio.dtype) : 0;
    return b;
}
template <class C>
__device__ __forceinline__ FwdParams fwd_params_of(const FwdFinish<C>& o, const FwdParamBits& b) {
    FwdParams p;
    p.center = bits_value(b.center, o.x_dtype);
    p.rm = b.run ? bits_value(b.rm, o.pio.dtype) : 0.0;
    p.rv = b.run ? bits_value(b.rv, o.pio.dtype) : 0.0;
    p.sc = b.coef ? bits_value(b.sc, o.pio.dtype) : 0.0;
    p.bi = b.coef ? bits_value(b.bi, o.pio.dtype) : 0.0;
    return p;
}
template <class C>
__device__ FwdParams fwd_params(const NormGeometry& g, const FwdFinish<C>& o, int64_t f, bool side) {
    return fwd_params_of<C>(o, fwd_param_bits<C>(g, o, f, side));
}

template <class C>
__device__ FwdCoef<C> finish_forward(const NormGeometry& g, const FwdFinish<C>& o, int64_t f, const FwdParams& p,
                                     double sa, double sb, bool side) {
    const double M = static_cast<double>(g.count());
    const int64_t mo = g.param_offset(o.pio.mv.st, f);
    const bool run = side && o.run_mean;
    const MeanVar mv = mean_var(p.center, sa, sb, M, o.eps);
    const double mean = mv.mean, var = mv.var, istd = mv.istd;
    if (side && o.mean_out) {
        o.mean_out[f] = mean;
        o.istd_out[f] = istd;
    }
    if (run) {
        const double unbias = g.count() > 1 ? M / (M - 1.0) : 1.0;
        core::store_elem(o.run_mean, mo, o.pio.dtype, (1.0 - o.factor) * p.rm + o.factor * mean);
        core::store_elem(o.run_var, mo, o.pio.dtype, (1.0 - o.factor) * p.rv + o.factor * var * unbias);
    }
    if (side && o.save_mean) {
        core::store_elem(o.save_mean, mo, o.pio.dtype, mean);
        core::store_elem(o.save_istd, mo, o.pio.dtype, istd);
    }
    return {static_cast<C>(p.sc * istd), static_cast<C>(mean), static_cast<C>(p.bi),
            static_cast<C>(mean - static_cast<double>(static_cast<C>(mean)))};
}

template <class C>
__device__ FwdCoef<C> finish_forward(const NormGeometry& g, const FwdFinish<C>& o, int64_t f, double sa, double sb,
                                     bool side) {
    return finish_forward<C>(g, o, f, fwd_params<C>(g, o, f, side), sa, sb, side);
}

// Feature f's forward coefficients into o's arrays, where it has them.
template <class C>
__device__ __forceinline__ void store_coef(const FwdFinish<C>& o, int64_t f, const FwdCoef<C>& k) {
    if (!o.coef_a) return;
    o.coef_a[f] = k.a;
    o.coef_m[f] = k.m;
    o.coef_b[f] = k.b;
    o.coef_ml[f] = k.ml;
}

template <class C>
__global__ void finalize_forward(NormGeometry g, const double* __restrict__ part_a, const double* __restrict__ part_b,
                                 int P, FwdFinish<C> o) {
    const int64_t F = g.features();
    double sa, sb;
    const int64_t f = sum_partials(part_a, part_b, P, F, &sa, &sb);
    if (f >= F || threadIdx.y != 0) return;
    store_coef<C>(o, f, finish_forward<C>(g, o, f, sa, sb, true));
}

// Where a forward apply takes feature f's coefficients from. FwdCoefArrays: the arrays
// finalize_forward / coef_inference wrote (a, m, b at 0, F, 2F and ml at 4F of the
// coefficient block). FwdCoefChannel: inference's, computed from the caller's per-channel
// scale, bias, mean and variance where they are needed (the NHWC apply loads a thread's V
// channels once, so it needs neither coef_inference's launch nor its scratch).
template <class C>
struct FwdCoefArrays {
    const C *a, *m, *b, *ml;
    static constexpr bool kStageable = false;  // already one load a coefficient
    FwdCoefArrays(const C* coef, int64_t F) : a(coef), m(coef + F), b(coef + 2 * F), ml(coef + 4 * F) {}
    __device__ FwdCoef<C> operator()(int64_t f) const { return {a[f], m[f], b[f], ml[f]}; }
};

// Inference coefficients of the parameters at offset so (scale, bias) and mo (mean, var),
// a = scale / sqrt(var + eps) in C, the parameters' type (FLOAT, or DOUBLE for DOUBLE data;
// core::param_dtype_for): correctly rounded sqrt and division, within 1.5 ulp of C. In
// double through core::load_elem the folded NHWC apply took 48 registers. The mean is
// exact in C, so ml = 0.
template <class C>
struct FwdCoefParams {
    const C *scale, *bias, *mean, *var;
    C eps;
    __device__ FwdCoef<C> at(int64_t so, int64_t mo) const {
        return {scale[so] / sqrt(var[mo] + eps), mean[mo], bias[so], C(0)};
    }
};
template <class C>
struct FwdCoefChannel {
    static constexpr bool kStageable = true;  // apply_forward_nhwc's kStage
    FwdCoefParams<C> p;
    int64_t sb_c, mv_c;  // the channel strides of scale / bias and mean / variance
    __device__ FwdCoef<C> operator()(int64_t f) const { return p.at(f * sb_c, f * mv_c); }
};

template <class C>
__global__ void coef_inference(NormGeometry g, ParamIo pio, FwdCoefParams<C> src, C* coef_a, C* coef_m, C* coef_b,
                               C* coef_ml) {
    const int64_t f = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (f >= g.features()) return;
    const FwdCoef<C> k = src.at(g.param_offset(pio.sb.st, f), g.param_offset(pio.mv.st, f));
    coef_a[f] = k.a;
    coef_m[f] = k.m;
    coef_b[f] = k.b;
    coef_ml[f] = k.ml;
}

__global__ void load_saved(NormGeometry g, ParamIo pio, const void* saved_mean, const void* saved_istd,
                           double* mean_out, double* istd_out) {
    const int64_t f = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (f >= g.features()) return;
    const int64_t mo = g.param_offset(pio.mv.st, f);
    mean_out[f] = core::load_elem(saved_mean, mo, pio.dtype);
    istd_out[f] = core::load_elem(saved_istd, mo, pio.dtype);
}

// What finishing a feature's backward sums writes: dscale, dbias (blended) and the
// coefficients of dx = A * d + B * (x - mean) + Cc.
template <class C>
struct BwdFinish {
    const double* mean_in;
    const double* istd_in;
    ParamIo pio;
    const void* scale;
    void* dscale;
    void* dbias;
    double p_alpha, p_beta;
    C *coef_a, *coef_b, *coef_c, *coef_m, *coef_ml;
    // The caller's saved mean and inverse std (the parameters' type and mean / variance
    // strides), read in place of mean_in / istd_in where set (the fused launch: no
    // load_saved launch before it).
    const void* saved_mean = nullptr;
    const void* saved_istd = nullptr;
};

// Feature f's mean and inverse std as bits of type *dt (bits_value converts them):
// from the caller's saved arrays where o.saved_mean is set, else the workspace's doubles.
template <class C>
__device__ __forceinline__ void bwd_stat_bits(const NormGeometry& g, const BwdFinish<C>& o, int64_t f,
                                              uint64_t* mean, uint64_t* istd, int* dt) {
    if (o.saved_mean) {
        const int64_t mo = g.param_offset(o.pio.mv.st, f);
        *dt = o.pio.dtype;
        *mean = load_bits(o.saved_mean, mo, *dt);
        *istd = load_bits(o.saved_istd, mo, *dt);
    } else {
        *dt = CUDNN_DATA_DOUBLE;
        *mean = load_bits(o.mean_in, f, *dt);
        *istd = load_bits(o.istd_in, f, *dt);
    }
}
template <class C>
__device__ __forceinline__ double bwd_mean(const NormGeometry& g, const BwdFinish<C>& o, int64_t f) {
    if (!o.saved_mean) return o.mean_in[f];
    return bits_value(load_bits(o.saved_mean, g.param_offset(o.pio.mv.st, f), o.pio.dtype), o.pio.dtype);
}

// A feature's backward apply coefficients: dx = a * d + b * ((x - m) - ml) + c.
template <class C>
struct BwdCoef {
    C a, b, c, m, ml;
};

// Feature f's coefficients from its mean, inverse std, scale and sums (sum_dxm centred
// on the mean rounded to C); `side` writes dscale and dbias (blended).
template <class C>
__device__ BwdCoef<C> finish_backward_at(const NormGeometry& g, const BwdFinish<C>& o, int64_t f, double mean,
                                         double istd, double sc, double sum_d, double sum_dxm, bool side) {
    const double M = static_cast<double>(g.count());
    const int64_t so = g.param_offset(o.pio.sb.st, f);
    // The statistics kernels centred on mean rounded to C; move the sum to the exact mean.
    sum_dxm -= (mean - static_cast<double>(static_cast<C>(mean))) * sum_d;
    const double dscale_v = sum_dxm * istd;
    if (side) {
        core::blend_store(o.dscale, so, o.pio.dtype, dscale_v, o.p_alpha, o.p_beta);
        core::blend_store(o.dbias, so, o.pio.dtype, sum_d, o.p_alpha, o.p_beta);
    }
    const double k1 = sc * istd;
    return {static_cast<C>(k1), static_cast<C>(-k1 * istd * dscale_v / M), static_cast<C>(-k1 * sum_d / M),
            static_cast<C>(mean), static_cast<C>(mean - static_cast<double>(static_cast<C>(mean)))};
}

// The same with the mean and inverse std of o.mean_in / o.istd_in and the scale loaded.
template <class C>
__device__ BwdCoef<C> finish_backward(const NormGeometry& g, const BwdFinish<C>& o, int64_t f, double sum_d,
                                      double sum_dxm, bool side) {
    const double sc = core::load_elem(o.scale, g.param_offset(o.pio.sb.st, f), o.pio.dtype);
    return finish_backward_at<C>(g, o, f, o.mean_in[f], o.istd_in[f], sc, sum_d, sum_dxm, side);
}

// Feature f's backward coefficients into o's arrays.
template <class C>
__device__ __forceinline__ void store_coef(const BwdFinish<C>& o, int64_t f, const BwdCoef<C>& k) {
    o.coef_a[f] = k.a;
    o.coef_b[f] = k.b;
    o.coef_c[f] = k.c;
    o.coef_m[f] = k.m;
    o.coef_ml[f] = k.ml;
}

template <class C>
__global__ void finalize_backward(NormGeometry g, const double* __restrict__ part_a,
                                  const double* __restrict__ part_b, int P, BwdFinish<C> o) {
    const int64_t F = g.features();
    double sum_d, sum_dxm;
    const int64_t f = sum_partials(part_a, part_b, P, F, &sum_d, &sum_dxm);
    if (f >= F || threadIdx.y != 0) return;
    store_coef<C>(o, f, finish_backward<C>(g, o, f, sum_d, sum_dxm, true));
}

// ---- Statistics and finish: packed NCHW, one block a channel ----
//
// Where the NCHW plan sums each channel in one block (P = 1: C >= 1024, or few elements a
// channel: the 14 x 14 and 7 x 7 planes), that block finishes its channel as well, so the
// three-pass forms become two launches: the forward's side outputs and apply coefficients
// (finalize_forward's work), the backward's dscale, dbias and coefficients
// (finalize_backward's), with the backward's mean and inverse std read in place from the
// caller's saved arrays or the workspace (load_saved's). Under ncu at 32x1024x14x14 bf16
// on the H100 those launches took 6.5 us (finalize_forward: 4 blocks, a serial chain a
// thread), 5.0 (finalize_backward) and 3.8 (load_saved). With the finish in the
// statistics launch (odnn bench, bench/bn_nchw_sizes.txt, ms): 32x1024x14x14 forward bf16
// 0.0290 -> 0.0236, f32 0.0380 -> 0.0358, backward bf16 0.0393 -> 0.0328; 32x2048x7x7
// forward f32 0.0370 -> 0.0341, bf16 0.0339 -> 0.0305 (where the one-block-a-channel
// launch does not take them first). ODNN_BN_STATS_FINISH=off keeps the separate launches
// (the GPU suite runs both).
//
// The launch bound keeps stats_nchw's occupancy: unbounded, the finish's code took the
// forward from 32 registers to 48-60 (eight blocks an SM to four or five, so the 1024
// blocks of 32x1024x14x14 ran in two waves, not one). Bounded, the forward's extra
// registers spill in thread 0's finish, after the loop (the SASS of the bf16 V = 4
// instance). The bounds follow stats_nchw's registers (scripts/sass.py): the forward and
// the 2- and 4-byte backward vectors 32 or fewer, the 8- and 16-byte ones 46-63, the
// 16-byte 16-bit ones 69-120.
template <class T, int V, bool kBwd>
constexpr int stats_finish_blocks() {
    constexpr int bytes = V * static_cast<int>(sizeof(T));
    if (!kBwd || bytes <= 4) return 8;
    return (bytes >= 16 && sizeof(T) == 2) ? 2 : 4;
}

bool stats_finish_wanted() {
    static const bool off = core::knob_is("ODNN_BN_STATS_FINISH", "off");
    return !off;
}

template <class T, int V, bool kBwd>
__global__ void __launch_bounds__(kThreads, (stats_finish_blocks<T, V, kBwd>()))
    stats_finish_nchw(NormGeometry g, const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ y,
                      bool has_act, NormActivation act, FastDiv fd_s, int64_t nvec, FwdFinish<typename Io<T>::C> ff,
                      BwdFinish<typename Io<T>::C> bf) {
    using C = typename Io<T>::C;
    const int64_t c = blockIdx.x;
    const uint32_t s = static_cast<uint32_t>(g.s);
    // Thread 0's parameters first, in flight with the other warps' data, and parked in
    // shared memory rather than held in registers through the loop.
    __shared__ FwdParamBits sh_pb;
    __shared__ uint64_t sh_istd, sh_sc;
    double mean = 0.0;
    int stat_dt = 0;
    if constexpr (!kBwd) {
        if (threadIdx.x == 0) sh_pb = fwd_param_bits<C>(g, ff, c, true);
    } else {
        uint64_t mean_bits = 0, istd_bits = 0;
        bwd_stat_bits<C>(g, bf, c, &mean_bits, &istd_bits, &stat_dt);  // every thread: the centre
        mean = bits_value(mean_bits, stat_dt);
        if (threadIdx.x == 0) {
            sh_istd = istd_bits;
            sh_sc = load_bits(bf.scale, g.param_offset(bf.pio.sb.st, c), bf.pio.dtype);
        }
    }
    const T* xc = x + c * s;
    const C center = kBwd ? static_cast<C>(mean) : Io<T>::in(xc[0]);
    double acc_a = 0.0, acc_b = 0.0;
    stats_nchw_slice<T, V, kBwd>(xc, kBwd ? dy + c * s : nullptr, (kBwd && has_act) ? y + c * s : nullptr, has_act,
                                 act, center, g.c * g.s, s, fd_s, 0, nvec, acc_a, acc_b);
    block_sum2(acc_a, acc_b);
    if (threadIdx.x != 0) return;
    if constexpr (!kBwd) {
        store_coef<C>(ff, c, finish_forward<C>(g, ff, c, fwd_params_of<C>(ff, sh_pb), acc_a, acc_b, true));
    } else {
        store_coef<C>(bf, c,
                      finish_backward_at<C>(g, bf, c, mean, bits_value(sh_istd, stat_dt),
                                            bits_value(sh_sc, bf.pio.dtype), acc_a, acc_b, true));
    }
}

// ---- Apply: packed layouts, vectors of V elements ----

template <class C>
__device__ __forceinline__ C fwd_value(C x, C z, int ops, const NormActivation& act, C a, C m, C ml, C b) {
    C v = a * ((x - m) - ml) + b;  // the mean as two C values: no cancellation when |mean| >> std
    if (ops == 2) v += z;
    if (ops != 0) v = core::norm_act_forward(act, v);
    return v;
}

// The 16-bit applies without activation, add or beta fold a channel's coefficients:
// forward alpha (a ((x - m) - ml) + b) = A x + B, backward alpha (a dy + bb ((x - m) - ml)
// + k) = A dy + B x + K. Fewer coefficients a channel in registers (NHWC) or loaded a
// vector (NCHW). The cancellation in b - a (m + ml), |a m| 2^-24 in float, is far below a
// 16-bit output's unit unless |mean| / std is near 2^16 (docs/DIVERGENCES.md); FLOAT and
// DOUBLE keep the split mean.
template <class C>
struct FwdFold {
    C A, B;
    FwdFold() = default;
    __device__ FwdFold(C a, C m, C ml, C b, C alpha) : A(alpha * a), B(alpha * (b - a * (m + ml))) {}
    __device__ C operator()(C x) const { return A * x + B; }
};
template <class C>
struct BwdFold {
    C A, B, K;
    BwdFold() = default;
    __device__ BwdFold(C a, C bb, C k, C m, C ml, C alpha)
        : A(alpha * a), B(alpha * bb), K(alpha * (k - bb * (m + ml))) {}
    __device__ C operator()(C dy, C x) const { return A * dy + (B * x + K); }
};

// The backward apply of one vector with activation, add and beta at run time: d = dy
// times the activation's gradient from y, dx = alpha (a d + b ((x - m) - ml) + c) (+ beta
// dx), dz = alpha d (+ beta dz); coef(i) gives element i's coefficients. yv, old and oldz
// are read only where ops and blend ask for them.
template <class T, int V, class Coef>
__device__ __forceinline__ void bwd_generic_vec(const Vec<T, V>& xv, const Vec<T, V>& dv, const Vec<T, V>& yv,
                                                const Vec<T, V>& old, const Vec<T, V>& oldz, int ops, bool blend,
                                                const NormActivation& act, typename Io<T>::C alpha,
                                                typename Io<T>::C beta, Coef coef, Vec<T, V>& out, Vec<T, V>& outz) {
    using C = typename Io<T>::C;
#pragma unroll
    for (int i = 0; i < V; ++i) {
        const BwdCoef<C> k = coef(i);
        C d = Io<T>::in(dv.v[i]);
        if (ops != 0) d *= core::norm_act_grad_from_y(act, Io<T>::in(yv.v[i]));
        C r = alpha * (k.a * d + k.b * ((Io<T>::in(xv.v[i]) - k.m) - k.ml) + k.c);
        C rz = alpha * d;
        if (blend) {
            r += beta * Io<T>::in(old.v[i]);
            if (ops == 2) rz += beta * Io<T>::in(oldz.v[i]);
        }
        out.v[i] = Io<T>::out(r);
        outz.v[i] = Io<T>::out(rz);
    }
}

// Packed NCHW: vector v's channel is (v * V / S) mod C. The per-vector math is
// fwd_apply_vec's, written out here: through that helper the f32 instance took 34
// registers instead of 32 (75% occupancy instead of 100%), and these kernels are the
// default three-pass applies. kFold: FwdFold (bf16: 40 -> 30 registers).
template <class T, int V, bool kFold>
__global__ void __launch_bounds__(kThreads)
    apply_forward_packed(const T* __restrict__ x, const T* __restrict__ z, T* y, int64_t nvec, FastDiv fd_s,
                         FastDiv fd_c, const typename Io<T>::C* __restrict__ ca,
                         const typename Io<T>::C* __restrict__ cm, const typename Io<T>::C* __restrict__ cb,
                         const typename Io<T>::C* __restrict__ cml, int ops, NormActivation act,
                         typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(v, nvec) {
        const uint32_t e = static_cast<uint32_t>(v) * V;
        const uint32_t c = fd_c.mod(fd_s.div(e));
        const Vec<T, V> xv = load_vec<T, V>(x + e);
        if constexpr (kFold) {
            const FwdFold<C> f(ca[c], cm[c], cml[c], cb[c], alpha);
            Vec<T, V> out;
#pragma unroll
            for (int i = 0; i < V; ++i) out.v[i] = Io<T>::out(f(Io<T>::in(xv.v[i])));
            store_vec<T, V>(y + e, out);
        } else {
            Vec<T, V> zv{}, yv{};
            if (ops == 2) zv = load_vec<T, V>(z + e);
            if (beta != C(0)) yv = load_vec<T, V>(y + e);
            Vec<T, V> out;
#pragma unroll
            for (int i = 0; i < V; ++i) {
                C r = alpha * fwd_value<C>(Io<T>::in(xv.v[i]), ops == 2 ? Io<T>::in(zv.v[i]) : C(0), ops, act, ca[c],
                                           cm[c], cml[c], cb[c]);
                if (beta != C(0)) r += beta * Io<T>::in(yv.v[i]);
                out.v[i] = Io<T>::out(r);
            }
            store_vec<T, V>(y + e, out);
        }
    }
}

// kFold: BwdFold, three coefficients a channel instead of five (bf16: 60 -> 30 registers).
template <class T, int V, bool kFold>
__global__ void __launch_bounds__(kThreads)
    apply_backward_packed(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ y, T* dx, T* dz,
                          int64_t nvec, FastDiv fd_s, FastDiv fd_c, const typename Io<T>::C* __restrict__ ca,
                          const typename Io<T>::C* __restrict__ cbb, const typename Io<T>::C* __restrict__ cc,
                          const typename Io<T>::C* __restrict__ cm, const typename Io<T>::C* __restrict__ cml,
                          int ops, NormActivation act, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(v, nvec) {
        const uint32_t e = static_cast<uint32_t>(v) * V;
        const uint32_t c = fd_c.mod(fd_s.div(e));
        const Vec<T, V> xv = load_vec<T, V>(x + e);
        const Vec<T, V> dv = load_vec<T, V>(dy + e);
        if constexpr (kFold) {
            const BwdFold<C> f(ca[c], cbb[c], cc[c], cm[c], cml[c], alpha);
            Vec<T, V> out;
#pragma unroll
            for (int i = 0; i < V; ++i) out.v[i] = Io<T>::out(f(Io<T>::in(dv.v[i]), Io<T>::in(xv.v[i])));
            store_vec<T, V>(dx + e, out);
        } else {
            Vec<T, V> yv{}, old{}, oldz{};
            if (ops != 0) yv = load_vec<T, V>(y + e);
            if (beta != C(0)) {
                old = load_vec<T, V>(dx + e);
                if (ops == 2) oldz = load_vec<T, V>(dz + e);
            }
            Vec<T, V> out, outz;
            // Written out, not bwd_generic_vec: through the helper the V = 1 and 16-bit
            // instances took 2-8 more registers (ptxas).
#pragma unroll
            for (int i = 0; i < V; ++i) {
                C d = Io<T>::in(dv.v[i]);
                if (ops != 0) d *= core::norm_act_grad_from_y(act, Io<T>::in(yv.v[i]));
                C r = alpha * (ca[c] * d + cbb[c] * ((Io<T>::in(xv.v[i]) - cm[c]) - cml[c]) + cc[c]);
                C rz = alpha * d;
                if (beta != C(0)) {
                    r += beta * Io<T>::in(old.v[i]);
                    if (ops == 2) rz += beta * Io<T>::in(oldz.v[i]);
                }
                out.v[i] = Io<T>::out(r);
                outz.v[i] = Io<T>::out(rz);
            }
            store_vec<T, V>(dx + e, out);
            if (ops == 2) store_vec<T, V>(dz + e, outz);
        }
    }
}

// ---- Apply: packed NHWC, one channel chunk per thread ----
//
// Ceiling at 128x256x56x56 (4.2 TB/s): inference 2T = 822 MB f32 / 411 MB bf16 ->
// 0.196 / 0.098 ms; training 3T 0.29 / 0.147 ms; backward 5T 0.49 / 0.245 ms. What
// limited apply_*_packed on NHWC (0.40 / 0.49 ms inference f32 / bf16): every vector
// of V channels read its 4-5 coefficients per channel from global memory, 4-5 x V
// scalar loads whose warp accesses span V * 32 floats (8 L1 wavefronts each for bf16):
// load-issue bound at ~1 wavefront per element. Here the thread's V channels never
// change (the thread count is a multiple of C / V), so the coefficients are loaded
// once into registers and the loop over rows issues one 16-byte load per tensor.

// Threads t = row * (C / V) + cv for row < row_step; the thread walks rows row,
// row + row_step, ...
struct NhwcWalk {
    uint32_t rows, cvn, row_step, lanes;
    FastDiv fd_cv;
};

// About two resident waves on 132 SMs, or at most `one_wave` threads (those resident at
// once, so the rows are applied in ascending order across the GPU, after stats_nhwc's
// bands); at least about four rows per thread (the coefficient loads amortised; small
// problems walk several rows too).
NhwcWalk nhwc_walk(int64_t rows, int64_t c, int v, int64_t one_wave = 0) {
    NhwcWalk w;
    w.rows = static_cast<uint32_t>(rows);
    w.cvn = static_cast<uint32_t>(c / v);
    const int64_t threads = one_wave > 0 ? one_wave : int64_t{1} << 19;
    const int64_t per_row = one_wave > 0 ? threads / w.cvn : ceil_div(threads, w.cvn);
    w.row_step = static_cast<uint32_t>(clamp64(per_row, 1, std::max<int64_t>(1, ceil_div(rows, 4))));
    w.lanes = w.row_step * w.cvn;
    w.fd_cv = FastDiv(w.cvn);
    return w;
}

// kFold (FwdFold): two coefficients a channel in registers instead of four
// (apply_forward_nhwc<bf16, 8> held 32 of them at 70 registers, 34% occupancy, 150 us for
// 0.1 ms of bytes).
// src: FwdCoefArrays or FwdCoefChannel. kStage (folded only): the block's threads first
// write every channel's folded pair to shared memory, one channel a thread, and each
// thread then reads its V pairs from there (32 registers, as with the arrays; computing its
// own 8 channels the bf16 instance took 40). The thread's first row is loaded ahead of its
// coefficients, so their latencies overlap: FLOAT's FwdCoefChannel instance takes 40
// registers that way and measured 0.2226 ms at 128x256x56x56 against 0.2314-0.2349 with
// the row loaded after them (44 registers, 5 blocks an SM instead of 6).
template <class T, int V, bool kFold, class Src, bool kStage>
__global__ void __launch_bounds__(kThreads)
    apply_forward_nhwc(const T* __restrict__ x, const T* __restrict__ z, T* y, NhwcWalk w, Src src, int ops,
                       NormActivation act, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const size_t row_len = static_cast<size_t>(w.cvn) * V;
    static_assert(!kStage || kFold, "only folded pairs are staged");
    extern __shared__ __align__(16) unsigned char stage_bytes[];
    FwdFold<C>* stage = reinterpret_cast<FwdFold<C>*>(stage_bytes);
    auto folded = [&](uint32_t c) {
        const FwdCoef<C> k = src(c);
        return FwdFold<C>(k.a, k.m, k.ml, k.b, alpha);
    };
    if constexpr (kStage) {
        for (uint32_t c = threadIdx.x; c < row_len; c += blockDim.x) stage[c] = folded(c);
        __syncthreads();
    }
    if (t >= w.lanes) return;
    const uint32_t r0 = w.fd_cv.div(t);
    const uint32_t c0 = (t - r0 * w.cvn) * V;
    if (r0 >= w.rows) return;
    Vec<T, V> xv = load_vec<T, V>(x + r0 * row_len + c0);
    if constexpr (kFold) {
        FwdFold<C> f[V];
#pragma unroll
        for (int i = 0; i < V; ++i) f[i] = kStage ? stage[c0 + i] : folded(c0 + i);
        for (uint32_t r = r0;;) {
            const size_t e = r * row_len + c0;
            Vec<T, V> out;
#pragma unroll
            for (int i = 0; i < V; ++i) out.v[i] = Io<T>::out(f[i](Io<T>::in(xv.v[i])));
            store_vec<T, V>(y + e, out);
            r += w.row_step;
            if (r >= w.rows) break;
            xv = load_vec<T, V>(x + r * row_len + c0);
        }
    } else {
        FwdCoef<C> k[V];
#pragma unroll
        for (int i = 0; i < V; ++i) k[i] = src(c0 + i);
        for (uint32_t r = r0;;) {
            const size_t e = r * row_len + c0;
            Vec<T, V> zv{}, yv{};
            if (ops == 2) zv = load_vec<T, V>(z + e);
            if (beta != C(0)) yv = load_vec<T, V>(y + e);
            Vec<T, V> out;
#pragma unroll
            for (int i = 0; i < V; ++i) {
                C v = alpha * fwd_value<C>(Io<T>::in(xv.v[i]), ops == 2 ? Io<T>::in(zv.v[i]) : C(0), ops, act,
                                           k[i].a, k[i].m, k[i].ml, k[i].b);
                if (beta != C(0)) v += beta * Io<T>::in(yv.v[i]);
                out.v[i] = Io<T>::out(v);
            }
            store_vec<T, V>(y + e, out);
            r += w.row_step;
            if (r >= w.rows) break;
            xv = load_vec<T, V>(x + r * row_len + c0);
        }
    }
}

// kFold: BwdFold, three coefficients a channel in registers instead of five (bf16: 92 -> 48
// registers).
template <class T, int V, bool kFold>
__global__ void __launch_bounds__(kThreads)
    apply_backward_nhwc(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ y, T* dx, T* dz,
                        NhwcWalk w, const typename Io<T>::C* __restrict__ ca,
                        const typename Io<T>::C* __restrict__ cbb, const typename Io<T>::C* __restrict__ cc,
                        const typename Io<T>::C* __restrict__ cm, const typename Io<T>::C* __restrict__ cml, int ops,
                        NormActivation act, typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= w.lanes) return;
    const uint32_t r0 = w.fd_cv.div(t);
    const uint32_t c0 = (t - r0 * w.cvn) * V;
    const size_t row_len = static_cast<size_t>(w.cvn) * V;
    if constexpr (kFold) {
        BwdFold<C> f[V];
#pragma unroll
        for (int i = 0; i < V; ++i)
            f[i] = BwdFold<C>(ca[c0 + i], cbb[c0 + i], cc[c0 + i], cm[c0 + i], cml[c0 + i], alpha);
        for (uint32_t r = r0; r < w.rows; r += w.row_step) {
            const size_t e = r * row_len + c0;
            const Vec<T, V> xv = load_vec<T, V>(x + e);
            const Vec<T, V> dv = load_vec<T, V>(dy + e);
            Vec<T, V> out;
#pragma unroll
            for (int i = 0; i < V; ++i)
                out.v[i] = Io<T>::out(f[i](Io<T>::in(dv.v[i]), Io<T>::in(xv.v[i])));
            store_vec<T, V>(dx + e, out);
        }
    } else {
        C a[V], bb[V], k[V], m[V], ml[V];
#pragma unroll
        for (int i = 0; i < V; ++i) {
            a[i] = ca[c0 + i];
            bb[i] = cbb[c0 + i];
            k[i] = cc[c0 + i];
            m[i] = cm[c0 + i];
            ml[i] = cml[c0 + i];
        }
        for (uint32_t r = r0; r < w.rows; r += w.row_step) {
            const size_t e = r * row_len + c0;
            const Vec<T, V> xv = load_vec<T, V>(x + e);
            const Vec<T, V> dv = load_vec<T, V>(dy + e);
            Vec<T, V> yv{}, old{}, oldz{};
            if (ops != 0) yv = load_vec<T, V>(y + e);
            if (beta != C(0)) {
                old = load_vec<T, V>(dx + e);
                if (ops == 2) oldz = load_vec<T, V>(dz + e);
            }
            Vec<T, V> out, outz;
            bwd_generic_vec<T, V>(xv, dv, yv, old, oldz, ops, beta != C(0), act, alpha, beta,
                                  [&](int i) { return BwdCoef<C>{a[i], bb[i], k[i], m[i], ml[i]}; }, out, outz);
            store_vec<T, V>(dx + e, out);
            if (ops == 2) store_vec<T, V>(dz + e, outz);
        }
    }
}

// ---- Fused statistics and apply: packed NCHW SPATIAL, one cooperative launch ----
//
// The three-pass form (statistics, finalize, apply) reads every channel twice from
// DRAM: training forward moves 3T, backward 5T. Here a channel is cut into Q tiles
// (tile t = channel t / Q, piece t % Q, at most U vectors a worker thread and tensor),
// and a cooperative launch of P resident blocks runs in steps: at step i block b sums
// tile i P + b (its statistics) and then applies tile (i - lag) P + b, which it summed
// lag steps earlier. So a tile's apply re-reads from L2 what its statistics read about
// (lag + 1) P tiles before: forward 2T and backward 3T of DRAM traffic, with
// (lag + 1) P tiles' bytes held in L2 (~23 MB at lag 2 on an H100: 264 tiles of 24 KB a
// step). Nsight Compute, f32 training forward: 503 MB read against T = 411, so 22% of
// the re-reads miss the 50 MB L2.
//
// A block is seven worker warps and one control warp, meeting at one barrier a step.
// The workers load and sum the step's statistics tile into shared memory, issue the
// apply tile's loads, wait at the barrier, then apply with the coefficients the control
// warp left there. The control warp, before the barrier, waits for the apply tile's
// channel, sums the channel's Q pieces in a fixed order (deterministic, the same in
// every tile of the channel) and finishes the channel (its piece 0 also writes the side
// outputs); after the barrier it stores the step's statistics sums at the tile's index.
// Two ways to wait (fused_stamped): counted, the sums stored then counted in the
// channel (a release) and the count acquired by every lane before the pieces are read;
// stamped (the default), the pieces pre-filled with kUnsetPiece (by the kernel before a
// grid barrier, or by a memset launched first: fused_init_in_kernel) and polled until
// stored, eight a lane at a time, no fence on either side. So no worker waits on a channel's
// finish, a chain of memory latencies: a first form in which warp 0 both worked and
// finished ran 1.5x slower than three passes.
// This one is 1.10-1.30x faster (H100, 128x256x56x56) but at ~70% of DRAM bandwidth: a
// step (~6 us counted) is longer than its traffic (~4 us at full bandwidth). Stamping
// took a memory round trip (the release) out of each step's chain and the training
// forward f32 from 0.414 to 0.386 ms. A form that copies the statistics tiles into a
// shared-memory ring (bulk copies, two steps ahead) and applies them from there moved
// exactly 2T but ran slower (0.58 ms against 0.41, counted): more, smaller steps, each
// as long (docs/PERFORMANCE.md). Traced (ODNN_BN_FUSED_TRACE), a step is the workers' own
// chain, the statistics loads' round trip (~3 us under load) then the apply (~2 us); the
// control warp's polls end 0.7-1.7 us before the barrier. Each worker's tile vectors held
// in shared memory for their apply (no re-read, exactly 2T) measured 3-8% slower but for
// the FLOAT forward (H100, 128x256x56x56).
// Warp 0 also asks the L2 for a later step's statistics tile at each step's start
// (FusedPlan::prefetch; one step ahead in the backward by default), so those loads find
// it there: the bf16 backward 3% faster on the H100, the forwards slower.
// Progress: every block is resident (cooperative launch), which the opening grid barrier
// (fused_init_in_kernel) needs too. The control warp of step i
// waits for statistics of steps <= i - lag + 1 <= i - 1 (a channel's tiles span at most
// two steps, as Q <= the grid; lag >= 2), stored after the barriers of those steps, so by
// induction on i every step completes. With more tiles a channel than blocks it would
// wait on its own step's tiles: the launch refuses that (three passes run instead).
// Lag 1 (a grid of whole channels, so that a channel's tiles lie in one step) measured
// 20-38% slower on the H100 at 128x256x56x56 (bf16 forward 0.1806-0.1813 -> 0.2195-0.2198
// ms; f32 backward 0.499-0.502 -> 0.689-0.692): a block's step then waits for every
// block of the step before, with no slack between them (docs/PERFORMANCE.md).
// Packed edges (the first step summing two steps' tiles and the last applying two, so
// max(S, 2) steps instead of S + 2) measured level to 11% slower on the H100 at every shape
// tried and were taken out (docs/PERFORMANCE.md).

struct FusedPlan {
    int64_t cs = 0;  // C * S
    uint32_t s = 0;
    FastDiv fd_s;
    int64_t nvec = 0;  // vectors per channel: N * S / V
    int Q = 1;         // tiles a channel
    int64_t qlen = 0;  // nvec / Q
    int qrem = 0;      // nvec % Q
    int C = 0;         // channels; C * Q < 2^31
    int lag = 1;       // steps from a tile's statistics to its apply
    int steps = 0;     // ceil(C * Q / grid) + lag
    bool stamped = true;  // pieces published stamped (store_piece), not counted in `done`
    bool init = true;     // the kernel marks the pieces unset / clears `done` (fused_init_in_kernel)
    bool walk = true;     // for_round steps its offsets where it can (fused_walk)
    int prefetch = 0;     // steps ahead a tile's statistics inputs are asked of the L2 (fused_prefetch)
    unsigned long long* trace = nullptr;  // per block and step, kTraceSlots stamps (fused_trace_path)
};

// Stamps of a traced fused launch (ODNN_BN_FUSED_TRACE): per block and step, the slots
// below; clock64 (the SM's cycles, comparable within a block) but for the two globaltimer
// slots (ns, comparable across blocks). Lane 0 of worker warp 0 unless the slot says.
enum TraceSlot {
    kTrStartNs = 0,     // step start, globaltimer
    kTrStart = 1,       // step start
    kTrSums = 2,        // the statistics tile's sums in (its loads waited for)
    kTrPreBar = 3,      // the apply's first loads issued, at the barrier
    kTrPostBar = 4,     // past the barrier
    kTrApplied = 5,     // the apply's stores issued
    kTrAppliedNs = 6,   // the same, globaltimer
    kTrLastSums = 7,    // the last worker warp's sums in
    kTrCtlStart = 8,    // control warp: step start
    kTrCtlCoef = 9,     // control warp: coefficients in shared memory (polls done)
    kTrCtlPublished = 10,  // control warp: the step's sums stored
    kTrSm = 11,         // the block's SM (%smid), step 0 only
    kTrEntryNs = 12,    // the block's start, before the opening grid barrier, globaltimer; step 0 only
    kTraceSlots = 13
};
#ifdef ODNN_BN_TRACE
__device__ __forceinline__ unsigned long long trace_clock(bool ns) {
    unsigned long long t;
    if (ns)
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    else
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    return t;
}
#endif
__device__ __forceinline__ void trace_stamp(const FusedPlan& fp, int64_t step, int slot) {
#ifndef ODNN_BN_TRACE
    (void)fp, (void)step, (void)slot;
#else
    if (fp.trace && (threadIdx.x & 31) == 0) {
        unsigned long long v;
        if (slot == kTrSm) {
            unsigned sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            v = sm;
        } else {
            v = trace_clock(slot == kTrStartNs || slot == kTrAppliedNs || slot == kTrEntryNs);
        }
        fp.trace[(static_cast<int64_t>(blockIdx.x) * fp.steps + step) * kTraceSlots + slot] = v;
    }
#endif
}

template <class T>
struct FusedIo {
    const T* x;
    const T* z;   // forward: the add operand
    const T* dy;  // backward
    const T* y;   // backward with an activation: the forward output; forward with beta: the old y
    T* out;       // y (forward) or dx (backward)
    T* dz;        // backward add: dz
    int ops;
    NormActivation act;
    typename Io<T>::C alpha, beta;
};

__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// The fused kernel holds its loads as raw 16-byte words and unpacks them at their use:
// a Vec of 16-bit elements unpacked early takes 8 registers, and U of them spilled.
__device__ __forceinline__ uint4 ld16(const void* p) { return *static_cast<const uint4*>(p); }
__device__ __forceinline__ uint4 ld16_last(const void* p) { return __ldcs(static_cast<const uint4*>(p)); }
template <class T, int V>
__device__ __forceinline__ Vec<T, V> as_vec_of(const uint4& u) {
    static_assert(sizeof(Vec<T, V>) == 16, "16-byte vectors");
    Vec<T, V> r;
    memcpy(&r, &u, 16);
    return r;
}

// 16-byte vectors read for the last time / written once: evict-first in L2, so the
// tiles still to be re-read keep their lines.
template <class T, int V>
__device__ __forceinline__ Vec<T, V> load_vec_last(const T* p) {
    if constexpr (sizeof(Vec<T, V>) == 16) {
        return as_vec_of<T, V>(ld16_last(p));
    } else {
        return load_vec<T, V>(p);
    }
}
template <class T, int V>
__device__ __forceinline__ void store_vec_stream(T* p, const Vec<T, V>& v) {
    if constexpr (sizeof(Vec<T, V>) == 16) {
        uint4 u;
        memcpy(&u, &v, 16);
        __stcs(reinterpret_cast<uint4*>(p), u);
    } else {
        store_vec<T, V>(p, v);
    }
}

// A vector's elements in C. BFLOAT16 pairs by their bits: a 32-bit word's two elements
// are its low half shifted up and its high half masked, one instruction each (through
// __bfloat162float the high one took two: a byte permute, then the shift).
template <class T, int V>
__device__ __forceinline__ void unpack_in(const Vec<T, V>& v, typename Io<T>::C (&out)[V]) {
    if constexpr (std::is_same_v<T, __nv_bfloat16> && V % 2 == 0) {
        uint32_t w[V / 2];
        memcpy(w, &v, sizeof(w));
#pragma unroll
        for (int i = 0; i < V / 2; ++i) {
            out[2 * i] = __uint_as_float(w[i] << 16);
            out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
        }
    } else {
#pragma unroll
        for (int i = 0; i < V; ++i) out[i] = Io<T>::in(v.v[i]);
    }
}

// Element e (a constant once unrolled) of a raw 16-byte vector in C: unpack_in's rule,
// one element at a time (converted at its use, so no array of them is held).
template <class T, int V>
__device__ __forceinline__ typename Io<T>::C elem_in(const uint4& raw, int e) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        const uint32_t w = e < 2 ? raw.x : e < 4 ? raw.y : e < 6 ? raw.z : raw.w;
        return __uint_as_float(e % 2 ? (w & 0xffff0000u) : (w << 16));
    } else {
        return Io<T>::in(as_vec_of<T, V>(raw).v[e]);
    }
}

// One vector of the fused / resident forward apply at element offset `off`:
// y = alpha * fwd_value(x, z) + beta * y, stored evict-first. kPlain: no activation, add
// or beta (the 16-bit types fold the coefficients, as the three-pass applies).
template <class T, int V, bool kPlain>
__device__ __forceinline__ void fwd_apply_vec(const FusedIo<T>& io, const FwdCoef<typename Io<T>::C>& k, int64_t off,
                                              const Vec<T, V>& xv) {
    using C = typename Io<T>::C;
    Vec<T, V> out;
    if constexpr (kPlain && sizeof(T) == 2) {
        const FwdFold<C> f(k.a, k.m, k.ml, k.b, io.alpha);
        C x[V];
        unpack_in<T, V>(xv, x);
#pragma unroll
        for (int i = 0; i < V; ++i) out.v[i] = Io<T>::out(f(x[i]));
    } else {
        Vec<T, V> zv{}, yv{};
        const int ops = kPlain ? 0 : io.ops;
        const bool blend = !kPlain && io.beta != C(0);
        if (ops == 2) zv = load_vec<T, V>(io.z + off);
        if (blend) yv = load_vec<T, V>(io.out + off);
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const C zi = ops == 2 ? Io<T>::in(zv.v[i]) : C(0);
            C r = io.alpha * fwd_value<C>(Io<T>::in(xv.v[i]), zi, ops, io.act, k.a, k.m, k.ml, k.b);
            if (blend) r += io.beta * Io<T>::in(yv.v[i]);
            out.v[i] = Io<T>::out(r);
        }
    }
    store_vec_stream<T, V>(io.out + off, out);
}

// One vector of the fused / resident backward apply: dx (and dz with the add) from x and
// dy, blended with beta, stored evict-first. kPlain: no activation, add or beta (the
// 16-bit types fold the coefficients, as the three-pass applies).
template <class T, int V, bool kPlain>
__device__ __forceinline__ void bwd_apply_vec(const FusedIo<T>& io, const BwdCoef<typename Io<T>::C>& k, int64_t off,
                                              const Vec<T, V>& xv, const Vec<T, V>& dv) {
    using C = typename Io<T>::C;
    Vec<T, V> out;
    if constexpr (kPlain && sizeof(T) == 2) {
        const BwdFold<C> f(k.a, k.b, k.c, k.m, k.ml, io.alpha);
        C x[V], d[V];
        unpack_in<T, V>(xv, x);
        unpack_in<T, V>(dv, d);
#pragma unroll
        for (int i = 0; i < V; ++i) out.v[i] = Io<T>::out(f(d[i], x[i]));
    } else {
        Vec<T, V> yv{}, old{}, oldz{}, outz;
        const int ops = kPlain ? 0 : io.ops;
        const bool blend = !kPlain && io.beta != C(0);
        if (ops != 0) yv = load_vec_last<T, V>(io.y + off);
        if (blend) {
            old = load_vec<T, V>(io.out + off);
            if (ops == 2) oldz = load_vec<T, V>(io.dz + off);
        }
        bwd_generic_vec<T, V>(xv, dv, yv, old, oldz, ops, blend, io.act, io.alpha, io.beta, [&](int) { return k; }, out,
                              outz);
        if (ops == 2) store_vec_stream<T, V>(io.dz + off, outz);
    }
    store_vec_stream<T, V>(io.out + off, out);
}

// The vectors [v0, v1) of channel c's piece q (tile t = c Q + q): pieces of nvec / Q
// vectors, the first nvec % Q of them one longer. 32-bit divisions only (a 64-bit one
// is a call, and the registers live across it spill).
struct FusedTile {
    int64_t c, base, v0, v1;
    int q;
};
__device__ __forceinline__ FusedTile fused_tile(const FusedPlan& fp, uint32_t t) {
    FusedTile r;
    const uint32_t c = t / static_cast<uint32_t>(fp.Q);
    r.c = c;
    r.q = static_cast<int>(t - c * static_cast<uint32_t>(fp.Q));
    r.base = r.c * fp.s;
    r.v0 = static_cast<int64_t>(r.q) * fp.qlen + min(r.q, fp.qrem);
    r.v1 = r.v0 + fp.qlen + (r.q < fp.qrem ? 1 : 0);
    return r;
}

__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void red_release_add(unsigned* p, unsigned v) {
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Stamped pieces: the pieces are first filled with kUnsetPiece (all bits set, a NaN no
// arithmetic makes) and a tile's sums are stored over it relaxed, each double at once;
// a reader polls the pieces themselves. No fence on either side: the pieces guard no
// other data. A sum that is kUnsetPiece's bits (a NaN read from DOUBLE input with that
// payload) is stored as the canonical NaN.
constexpr unsigned long long kUnsetPiece = ~0ull;
__device__ __forceinline__ void store_piece(double* p, double v) {
    unsigned long long b = static_cast<unsigned long long>(__double_as_longlong(v));
    if (b == kUnsetPiece) b = 0x7ff8000000000000ull;
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(b) : "memory");
}
__device__ __forceinline__ unsigned long long load_piece(const double* p) {
    unsigned long long b;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(b) : "l"(p) : "memory");
    return b;
}

// f(u, off) for each vector v = vb + u kFusedWorkers < tl.v1 of a round, off its element
// offset. Where an image's run of S elements is at least a round's stride, the offsets
// are stepped (at most one run boundary a step: a compare and two adds) from the first,
// the only one divided; a division a vector took ~13 instructions of the 16-bit apply's
// ~45 a vector. Measured 0.5-1.5% faster at 128x256x56x56 on the H100 (bf16 forward
// 0.1834 -> 0.1810 ms): the kernel waits on memory, not on issue. The plan's bound of
// 4 GiB a channel keeps S < 2^31, so r + kStep does not wrap. kWalk false: a division a
// vector always (the instances with an activation, add or beta: the stepped form's
// second copy of the loop made them spill).
template <int V, int U, bool kWalk, class F>
__device__ __forceinline__ void for_round(const FusedPlan& fp, const FusedTile& tl, int64_t vb, F&& f) {
    constexpr uint32_t kStep = static_cast<uint32_t>(kFusedWorkers) * V;
    if (kWalk && fp.walk && fp.s >= kStep) {
        const uint32_t j = static_cast<uint32_t>(vb) * V;
        const uint32_t n = fp.fd_s.div(j);
        uint32_t r = j - n * fp.s;
        int64_t off = tl.base + static_cast<int64_t>(n) * fp.cs + r;
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (vb + u * kFusedWorkers < tl.v1) f(u, off);
            r += kStep;
            off += kStep;
            if (r >= fp.s) {
                r -= fp.s;
                off += fp.cs - fp.s;
            }
        }
    } else {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t v = vb + u * kFusedWorkers;
            if (v < tl.v1) f(u, tl.base + nchw_vec_offset<V>(v, fp.cs, fp.s, fp.fd_s));
        }
    }
}

// One round of a fused tile's loads, all issued before any is used: vectors
// vb + u kFusedWorkers < tl.v1 of x, and of dy (kBwd) and y (has_y). kLast: the apply's
// re-reads, evict-first. kWalk: for_round's.
template <class T, int V, int U, bool kBwd, bool kLast, bool kWalk>
__device__ __forceinline__ void fused_load_round(const FusedIo<T>& io, const FusedPlan& fp, const FusedTile& tl,
                                                 int64_t vb, bool has_y, uint4 (&xv)[U], uint4 (&dv)[U],
                                                 uint4 (&yv)[U]) {
    for_round<V, U, kWalk>(fp, tl, vb, [&](int u, int64_t off) {
        xv[u] = kLast ? ld16_last(io.x + off) : ld16(io.x + off);
        if constexpr (kBwd) {
            dv[u] = kLast ? ld16_last(io.dy + off) : ld16(io.dy + off);
            if (has_y) yv[u] = kLast ? ld16_last(io.y + off) : ld16(io.y + off);
        }
    });
}

// Asks the L2 for tile tl's statistics inputs (x; in the backward dy, and y with an
// activation): one bulk prefetch a run of the tile in an image, a lane each, so a later
// step's loads find them there (FusedPlan::prefetch). The tile's bounds are whole
// 16-byte vectors, so every run is aligned. sm_90 only; a no-op before.
template <class T, int V, bool kBwd>
__device__ __forceinline__ void fused_prefetch_tile(const FusedIo<T>& io, const FusedPlan& fp, const FusedTile& tl,
                                                    bool has_y, int lane) {
#if ODNN_SM90
    const uint32_t e0 = static_cast<uint32_t>(tl.v0) * V, e1 = static_cast<uint32_t>(tl.v1) * V;
    const uint32_t n1 = fp.fd_s.div(e1 - 1u);
    for (uint32_t n = fp.fd_s.div(e0) + lane; n <= n1; n += 32) {
        const uint32_t a = max(e0, n * fp.s), b = min(e1, n * fp.s + fp.s);
        const int64_t off = tl.base + static_cast<int64_t>(n) * fp.cs + (a - n * fp.s);
        const uint32_t bytes = (b - a) * static_cast<uint32_t>(sizeof(T));
        sm90::bulk_prefetch_l2(io.x + off, bytes);
        if constexpr (kBwd) {
            sm90::bulk_prefetch_l2(io.dy + off, bytes);
            if (has_y) sm90::bulk_prefetch_l2(io.y + off, bytes);
        }
    }
#else
    (void)io, (void)fp, (void)tl, (void)has_y, (void)lane;
#endif
}

// kPlain (with_plain): no activation, add or beta, compiled without their run-time
// switches (resident_nchw's too).
template <class T, int V, bool kBwd, bool kPlain>
__global__ void __launch_bounds__(kThreads, kFusedBlocks)
    fused_nchw(NormGeometry g, FusedPlan fp, FusedIo<T> io, unsigned* __restrict__ done, double* __restrict__ part_a,
               double* __restrict__ part_b, FwdFinish<typename Io<T>::C> ff, BwdFinish<typename Io<T>::C> bf) {
    using C = typename Io<T>::C;
    constexpr int U = fused_unroll<kBwd>(), kW = kFusedWorkers, kWarps = kW / 32;
    __shared__ double sh_red[2][2][kWarps];  // [step parity][a, b][worker warp]
    __shared__ FwdCoef<C> sh_fwd[2];         // [step parity]
    __shared__ BwdCoef<C> sh_bwd[2];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int64_t tiles = static_cast<int64_t>(fp.C) * fp.Q, P = gridDim.x;
    if (threadIdx.x == 0) trace_stamp(fp, 0, kTrEntryNs);
    if (fp.init) {
        // The pieces unset (stamped) or the counters cleared, then a grid barrier: no
        // block reads either before every block has written its share.
        const int64_t n = fp.stamped ? tiles : fp.C;
        for (int64_t k = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; k < n; k += P * kThreads) {
            if (fp.stamped) {
                reinterpret_cast<unsigned long long*>(part_a)[k] = kUnsetPiece;
                reinterpret_cast<unsigned long long*>(part_b)[k] = kUnsetPiece;
            } else {
                done[k] = 0u;
            }
        }
        cooperative_groups::this_grid().sync();
    }
    // The schedule (bn_fused_tiles.hpp): the tiles launch step i sums and applies.
    auto step_tiles = [&](int64_t i, bool& do_s, bool& do_a, int64_t& ts_i, int64_t& ta_i) {
        const int64_t js = fused_stats_step(i), ja = fused_apply_step(fp.lag, i);
        ts_i = js * P + blockIdx.x;
        ta_i = ja * P + blockIdx.x;
        do_s = ts_i < tiles;
        do_a = ja >= 0 && ta_i < tiles;
    };
    if (warp == kWarps) {
        // The control warp. Before step i's barrier: the coefficients of step i's apply tile
        // into slot i % 2 (its channel's statistics are at least one step old, so the wait
        // is short and never on this step's tiles). After it: the step's statistics sums
        // (the workers' slot i % 2) stored at the tile's index, stamped or counted in its
        // channel (a release; fused_stamped).
        // The coefficients of apply tile ta_i into sh_fwd / sh_bwd[cs].
        auto coefficients = [&](int64_t ta_i, int cs) {
            const FusedTile ta = fused_tile(fp, static_cast<uint32_t>(ta_i));
            // The channel's parameters, loaded as bits and converted after the polls, so
            // that one round trip covers them and the pieces.
            FwdParamBits prm{};
            uint64_t mean_bits = 0, istd_bits = 0, sc_bits = 0;
            int stat_dt = CUDNN_DATA_DOUBLE;
            if (lane == 0) {
                if constexpr (!kBwd) {
                    prm = fwd_param_bits<C>(g, ff, ta.c, ta.q == 0);
                } else {
                    bwd_stat_bits<C>(g, bf, ta.c, &mean_bits, &istd_bits, &stat_dt);
                    sc_bits = load_bits(bf.scale, g.param_offset(bf.pio.sb.st, ta.c), bf.pio.dtype);
                }
            }
            // The pieces are summed in one fixed order (the same in every tile of the
            // channel). Counted: every lane acquires the count itself, so its loads of the
            // pieces follow it. Stamped: each lane polls its pieces until they are stored.
            double sa = 0.0, sb = 0.0;
            if (fp.stamped) {
                // A lane's pieces kPollBatch at a time: all loads issued, then checked
                // (one round trip a batch, not two a piece); in the same order.
                constexpr int kPollBatch = 8;
                const double* pa = part_a + ta.c * fp.Q;
                const double* pb = part_b + ta.c * fp.Q;
                for (int p0 = lane; p0 < fp.Q; p0 += 32 * kPollBatch) {
                    unsigned long long a[kPollBatch], b[kPollBatch];
                    bool ready;
                    do {
                        ready = true;
#pragma unroll
                        for (int k = 0; k < kPollBatch; ++k) {
                            const int p = p0 + 32 * k;
                            a[k] = p < fp.Q ? load_piece(pa + p) : 0ull;
                            b[k] = p < fp.Q ? load_piece(pb + p) : 0ull;
                        }
#pragma unroll
                        for (int k = 0; k < kPollBatch; ++k) ready &= a[k] != kUnsetPiece && b[k] != kUnsetPiece;
                        if (!ready) __nanosleep(32);
                    } while (!ready);
#pragma unroll
                    for (int k = 0; k < kPollBatch; ++k)
                        if (p0 + 32 * k < fp.Q) {
                            sa += __longlong_as_double(static_cast<long long>(a[k]));
                            sb += __longlong_as_double(static_cast<long long>(b[k]));
                        }
                }
            } else {
                while (load_acquire(done + ta.c) < static_cast<unsigned>(fp.Q)) __nanosleep(64);
                for (int p = lane; p < fp.Q; p += 32) {
                    sa += __ldcg(part_a + ta.c * fp.Q + p);
                    sb += __ldcg(part_b + ta.c * fp.Q + p);
                }
            }
            sa = warp_sum(sa);
            sb = warp_sum(sb);
            if (lane == 0) {
                if constexpr (!kBwd)
                    sh_fwd[cs] = finish_forward<C>(g, ff, ta.c, fwd_params_of<C>(ff, prm), sa, sb, ta.q == 0);
                else
                    sh_bwd[cs] = finish_backward_at<C>(g, bf, ta.c, bits_value(mean_bits, stat_dt),
                                                        bits_value(istd_bits, stat_dt),
                                                        bits_value(sc_bits, bf.pio.dtype), sa, sb, ta.q == 0);
            }
        };
        // The statistics sums of tile ts_i (the workers' sh_red[cs]) stored at its index.
        auto publish = [&](int64_t ts_i, int cs) {
            double a = lane < kWarps ? sh_red[cs][0][lane] : 0.0;
            double b = lane < kWarps ? sh_red[cs][1][lane] : 0.0;
            a = warp_sum(a);
            b = warp_sum(b);
            if (lane == 0 && fp.stamped) {
                store_piece(part_a + ts_i, a);
                store_piece(part_b + ts_i, b);
            } else if (lane == 0) {
                part_a[ts_i] = a;
                part_b[ts_i] = b;
                red_release_add(done + static_cast<uint32_t>(ts_i) / static_cast<uint32_t>(fp.Q), 1u);
            }
        };
        for (int64_t i = 0; i < fp.steps; ++i) {
            const int par = static_cast<int>(i & 1);
            bool do_s, do_a;
            int64_t ts_i, ta_i;
            step_tiles(i, do_s, do_a, ts_i, ta_i);
            trace_stamp(fp, i, kTrCtlStart);
            if (do_a) coefficients(ta_i, par);
            trace_stamp(fp, i, kTrCtlCoef);
            named_barrier_sync(1, kThreads);
            if (do_s) publish(ts_i, par);
            trace_stamp(fp, i, kTrCtlPublished);
        }
        return;
    }
    // The workers: kW threads.
    const bool has_act = kBwd && !kPlain && io.ops != 0;
    auto as_vec = [](const uint4& u) { return as_vec_of<T, V>(u); };
    for (int64_t i = 0; i < fp.steps; ++i) {
        const int par = static_cast<int>(i & 1);
        bool do_s, do_a;
        int64_t ts_i, ta_i;
        step_tiles(i, do_s, do_a, ts_i, ta_i);
        if (warp == 0) {
            trace_stamp(fp, i, kTrStartNs);
            trace_stamp(fp, i, kTrStart);
            if (i == 0) trace_stamp(fp, i, kTrSm);
        }
        if (fp.prefetch > 0 && warp == 0) {
            // The L2 asked for the tiles of steps i + 1 .. i + prefetch at step 0, then for
            // step i + prefetch's at step i.
            for (int64_t k = i == 0 ? 1 : fp.prefetch; k <= fp.prefetch; ++k) {
                const int64_t tp = fused_stats_step(i + k) * P + blockIdx.x;
                if (tp < tiles)
                    fused_prefetch_tile<T, V, kBwd>(io, fp, fused_tile(fp, static_cast<uint32_t>(tp)), has_act, lane);
            }
        }
        // Statistics of tile ts: rounds of U vectors a thread, all loads of a round issued
        // before any is used.
        double acc_a = 0.0, acc_b = 0.0;
        if (do_s) {
            const FusedTile ts = fused_tile(fp, static_cast<uint32_t>(ts_i));
            const C center = kBwd ? static_cast<C>(bwd_mean<C>(g, bf, ts.c)) : Io<T>::in(io.x[ts.base]);
            for (int64_t vb = ts.v0 + threadIdx.x; vb < ts.v1; vb += U * kW) {
                uint4 xv[U], dv[U], yv[U];  // raw: 16-bit elements unpacked would take 8 registers
                fused_load_round<T, V, U, kBwd, false, kPlain>(io, fp, ts, vb, has_act, xv, dv, yv);
                C fa = 0, fb = 0;
#pragma unroll
                for (int u = 0; u < U; ++u)
                    if (vb + u * kW < ts.v1) {
#pragma unroll
                        for (int e = 0; e < V; ++e)
                            contrib<C, kBwd>(elem_in<T, V>(xv[u], e), kBwd ? elem_in<T, V>(dv[u], e) : C(0),
                                             (kBwd && has_act) ? elem_in<T, V>(yv[u], e) : C(0), has_act, io.act,
                                             center, fa, fb);
                    }
                acc_a += fa;
                acc_b += fb;
            }
        }
        acc_a = warp_sum(acc_a);
        acc_b = warp_sum(acc_b);
        if (lane == 0) {
            sh_red[par][0][warp] = acc_a;
            sh_red[par][1][warp] = acc_b;
        }
        if (warp == 0) trace_stamp(fp, i, kTrSums);
        if (warp == kWarps - 1) trace_stamp(fp, i, kTrLastSums);
        // The apply's first round of loads, in flight across the barrier.
        const FusedTile ta = fused_tile(fp, do_a ? static_cast<uint32_t>(ta_i) : 0u);
        uint4 xa[U], da[U], ya[U];
        const int64_t va = ta.v0 + threadIdx.x;
        if (do_a) fused_load_round<T, V, U, kBwd, true, kPlain>(io, fp, ta, va, false, xa, da, ya);
        if (warp == 0) trace_stamp(fp, i, kTrPreBar);
        named_barrier_sync(1, kThreads);  // sh_red[par] in; the coefficients in sh_*[par]
        if (warp == 0) trace_stamp(fp, i, kTrPostBar);
        if (!do_a) continue;
        FwdCoef<C> kf{};
        BwdCoef<C> kb{};
        if constexpr (kBwd)
            kb = sh_bwd[par];
        else
            kf = sh_fwd[par];
        for (int64_t vb = va; vb < ta.v1; vb += U * kW) {
            if (vb != va) fused_load_round<T, V, U, kBwd, true, kPlain>(io, fp, ta, vb, false, xa, da, ya);
            for_round<V, U, kPlain>(fp, ta, vb, [&](int u, int64_t off) {
                if constexpr (!kBwd)
                    fwd_apply_vec<T, V, kPlain>(io, kf, off, as_vec(xa[u]));
                else
                    bwd_apply_vec<T, V, kPlain>(io, kb, off, as_vec(xa[u]), as_vec(da[u]));
            });
        }
        if (warp == 0) {
            trace_stamp(fp, i, kTrApplied);
            trace_stamp(fp, i, kTrAppliedNs);
        }
    }
}

// ---- Resident: packed NCHW training / backward, each channel held on chip ----
//
// A cluster of K blocks takes one channel at a time: block rank r copies its K-th of
// the channel's N * S elements (x, and dy for the backward) into shared memory with
// bulk copies (all in flight at once, in kStages groups, each on its own transaction
// barrier so the sums start on the first group while the rest arrive), sums it, and
// the cluster adds its K block sums through distributed shared memory in one fixed
// order (every block gets the same totals). Each block then finishes the channel itself and
// writes its outputs from shared memory: x and dy cross DRAM once, so the training
// forward moves 2T and the backward 3T, against the three passes' 3T and 5T. The
// backward without saved statistics first sums x the same way (one more cluster round).
//
// The clusters are persistent and take channels c, c + clusters, ...; two buffers let
// the copies of a block's next channel run while it sums, waits on its cluster and
// writes the current one. Needs sm_90 (clusters, bulk copies): resident_max_smem()
// checks the binary. Opt-in (resident_knob): at 128x256x56x56 on the H200 the bf16
// training forward takes 0.204 ms against 0.191 for three passes. Nsight Compute's
// stall samples by instruction (docs/PERFORMANCE.md): the apply's run-time switches over
// activation, add and beta took 45% of them and ~175 instructions a vector (0.279 ms),
// hence the plain instances (kPlain, ~50); what remains waits at barriers, 33% of the
// samples at the block reduction after the sums and 10% at the cluster barrier, whose
// release is a GPU-wide memory barrier. Each round (a channel) is a chain of waits
// that the next channel's copies alone do not cover.
constexpr int kResidentMaxCluster = 16;  // non-portable above 8: allowed on sm_90 parts

struct ResidentPlan {
    int64_t cs = 0;  // C * S
    uint32_t s = 0;
    FastDiv fd_s;
    int64_t nvec = 0;   // vectors a channel: N * S / V
    int64_t rv = 0;     // vectors a run of S elements: S / V
    int64_t slice = 0;  // vectors a block holds at most: ceil(nvec / K)
    int64_t C = 0;
    int K = 1;
};

// The backward's saved statistics (null: recomputed from x, with epsilon eps).
struct ResidentSaved {
    const void* mean;
    const void* istd;
    double eps;
};

// Channel c's saved mean and inverse std (sv.mean set), as the backward's statistics.
template <class C>
__device__ __forceinline__ void saved_stats(const NormGeometry& g, const BwdFinish<C>& bf, const ResidentSaved& sv,
                                            int64_t c, double& mean, double& istd) {
    const int64_t mo = g.param_offset(bf.pio.mv.st, c);
    mean = core::load_elem(sv.mean, mo, bf.pio.dtype);
    istd = core::load_elem(sv.istd, mo, bf.pio.dtype);
}

template <class T, int V, bool kBwd, bool kPlain>
__global__ void __launch_bounds__(kThreads)
    resident_nchw(NormGeometry g, ResidentPlan rp, FusedIo<T> io, ResidentSaved sv, FwdFinish<typename Io<T>::C> ff,
                  BwdFinish<typename Io<T>::C> bf) {
#if ODNN_SM90
    using C = typename Io<T>::C;
    using VT = Vec<T, V>;
    constexpr int kTensors = kBwd ? 2 : 1;
    constexpr int kStages = 4;  // copy groups a buffer, each on its own barrier
    extern __shared__ __align__(128) unsigned char resident_shm[];
    __shared__ uint64_t bar[2][kStages];
    __shared__ double part[2][2][2];  // [channel parity][round][a, b]: block sums the cluster reads
    __shared__ FwdCoef<C> sh_fwd;
    __shared__ BwdCoef<C> sh_bwd;
    __shared__ double sh_tot[2];
    const uint32_t K = static_cast<uint32_t>(rp.K), rank = sm90::cluster_rank();
    const int64_t first = blockIdx.x / K, step = gridDim.x / K;
    const int64_t v0 = rp.nvec * rank / K, nv = rp.nvec * (rank + 1) / K - v0;
    const int tid = threadIdx.x;
    const bool has_act = kBwd && !kPlain && io.ops != 0;
    const double M = static_cast<double>(g.count());
    // Buffer b: x at buf(b), dy at buf(b) + slice.
    auto buf = [&](int b) { return reinterpret_cast<VT*>(resident_shm) + static_cast<int64_t>(b) * kTensors * rp.slice; };
    auto stage_begin = [&](int st) { return nv * st / kStages; };

    // Warp 0: channel c's slice into buffer b, one copy per run of S a stage touches.
    auto issue = [&](int64_t c, int b) {
        const int64_t base = c * rp.s;
        VT* sx = buf(b);
        for (int st = 0; st < kStages; ++st) {
            const int64_t a0 = v0 + stage_begin(st), a1 = v0 + stage_begin(st + 1);
            if (tid == 0) sm90::mbar_arrive_expect(&bar[b][st], static_cast<uint32_t>((a1 - a0) * sizeof(VT) * kTensors));
            __syncwarp();
            if (a1 <= a0) continue;
            for (int64_t n = a0 / rp.rv + tid; n <= (a1 - 1) / rp.rv; n += 32) {
                const int64_t lo = std::max(a0, n * rp.rv), hi = std::min(a1, (n + 1) * rp.rv);
                const int64_t off = base + n * rp.cs + (lo - n * rp.rv) * V;
                const uint32_t bytes = static_cast<uint32_t>((hi - lo) * sizeof(VT));
                sm90::bulk_load(sx + (lo - v0), io.x + off, bytes, &bar[b][st]);
                if constexpr (kBwd) sm90::bulk_load(sx + rp.slice + (lo - v0), io.dy + off, bytes, &bar[b][st]);
            }
        }
    };

    if (tid == 0) {
        for (int b = 0; b < 2; ++b)
            for (int st = 0; st < kStages; ++st) sm90::mbar_init(&bar[b][st], 1);
        sm90::mbar_init_fence();
    }
    __syncthreads();
    if (tid < 32 && first < rp.C) issue(first, 0);

    int t = 0;
    for (int64_t c = first; c < rp.C; c += step, ++t) {
        const int b = t & 1;
        const uint32_t parity = static_cast<uint32_t>(t >> 1) & 1u;
        // The next channel's copies into the other buffer, freed by the last iteration.
        if (tid < 32 && c + step < rp.C) issue(c + step, b ^ 1);
        const int64_t base = c * rp.s;
        const VT* sx = buf(b);
        const VT* sd = sx + rp.slice;
        auto offset = [&](int64_t v) { return base + nchw_vec_offset<V>(v, rp.cs, rp.s, rp.fd_s); };

        // One cluster round: the block's sums in, the channel's totals out (all threads).
        auto cluster_sum = [&](int round, double a, double bsum, double& ta, double& tb) {
            block_sum2(a, bsum);
            if (tid == 0) {
                part[b][round][0] = a;
                part[b][round][1] = bsum;
            }
            sm90::cluster_arrive();
            sm90::cluster_wait();
            if (tid < 32) {  // lane k reads rank k; one fixed tree, so every block gets the same totals
                double sa = 0.0, sb = 0.0;
                if (static_cast<uint32_t>(tid) < K) {
                    sa = sm90::load_remote(&part[b][round][0], tid);
                    sb = sm90::load_remote(&part[b][round][1], tid);
                }
                sa = warp_sum(sa);
                sb = warp_sum(sb);
                if (tid == 0) {
                    sh_tot[0] = sa;
                    sh_tot[1] = sb;
                }
            }
            __syncthreads();
            ta = sh_tot[0];
            tb = sh_tot[1];
            __syncthreads();  // sh_tot is read before a next round writes it
        };
        // This block's sums of contrib over its slice, stage by stage as the copies land.
        auto block_sums = [&](bool bwd, C center, double& acc_a, double& acc_b) {
            acc_a = acc_b = 0.0;
            for (int st = 0; st < kStages; ++st) {
                sm90::mbar_wait(&bar[b][st], parity);
                for (int64_t i = stage_begin(st) + tid; i < stage_begin(st + 1); i += kThreads) {
                    const VT xv = sx[i];
                    C fa = 0, fb = 0;
                    if (!bwd) {
#pragma unroll
                        for (int e = 0; e < V; ++e)
                            contrib<C, false>(Io<T>::in(xv.v[e]), C(0), C(0), false, io.act, center, fa, fb);
                    } else {
                        const VT dv = sd[i];
                        VT yv{};
                        if (has_act) yv = load_vec<T, V>(io.y + offset(v0 + i));
#pragma unroll
                        for (int e = 0; e < V; ++e)
                            contrib<C, true>(Io<T>::in(xv.v[e]), Io<T>::in(dv.v[e]),
                                             has_act ? Io<T>::in(yv.v[e]) : C(0), has_act, io.act, center, fa, fb);
                    }
                    acc_a += fa;
                    acc_b += fb;
                }
            }
        };

        double acc_a, acc_b, sa, sb;
        if constexpr (!kBwd) {
            FwdParams prm{};
            if (tid == 0) prm = fwd_params<C>(g, ff, c, rank == 0);  // in flight during the sums
            block_sums(false, Io<T>::in(io.x[base]), acc_a, acc_b);
            cluster_sum(0, acc_a, acc_b, sa, sb);
            if (tid == 0) sh_fwd = finish_forward<C>(g, ff, c, prm, sa, sb, rank == 0);
            __syncthreads();
            const FwdCoef<C> k = sh_fwd;
            for (int64_t i = tid; i < nv; i += kThreads) {
                const VT xv = sx[i];
                fwd_apply_vec<T, V, kPlain>(io, k, offset(v0 + i), xv);
            }
        } else {
            double mean, istd, sc = 0.0;
            if (tid == 0) sc = core::load_elem(bf.scale, g.param_offset(bf.pio.sb.st, c), bf.pio.dtype);
            if (sv.mean) {
                saved_stats<C>(g, bf, sv, c, mean, istd);
            } else {
                const double center = Io<T>::in(io.x[base]);
                block_sums(false, static_cast<C>(center), acc_a, acc_b);
                cluster_sum(1, acc_a, acc_b, sa, sb);
                const MeanVar mv = mean_var(center, sa, sb, M, sv.eps);
                mean = mv.mean;
                istd = mv.istd;
            }
            block_sums(true, static_cast<C>(mean), acc_a, acc_b);
            cluster_sum(0, acc_a, acc_b, sa, sb);
            if (tid == 0) sh_bwd = finish_backward_at<C>(g, bf, c, mean, istd, sc, sa, sb, rank == 0);
            __syncthreads();
            const BwdCoef<C> k = sh_bwd;
            for (int64_t i = tid; i < nv; i += kThreads) {
                const VT xv = sx[i], dv = sd[i];
                bwd_apply_vec<T, V, kPlain>(io, k, offset(v0 + i), xv, dv);
            }
        }
        __syncthreads();  // buffer b and sh_fwd / sh_bwd are free for the channel after next
    }
    // No block exits while another may still read its block sums.
    sm90::cluster_arrive();
    sm90::cluster_wait();
#else
    __trap();  // never launched: resident_max_smem() requires sm_90 code
#endif
}

// ---- Channel: packed NCHW training / backward, one block a channel held in registers ----
//
// Where a channel (N * S elements a tensor) fits in one block's registers, kChannelVecs
// vectors a thread of at most kChannelMaxThreads threads, a block takes the whole channel:
// it loads x (and dy) once, sums them (a block reduction in one fixed order), finishes the
// channel (side outputs, coefficients) and applies from its registers. One launch of C
// blocks, no workspace, no grid-wide wait: 2T / 3T of DRAM traffic as the fused launch,
// with each channel's chain (loads, reduction, finish, stores) its own, so the blocks of
// a short launch overlap their waits instead of meeting step after step. Any of
// choose_vec's widths (8-byte and scalar 16-bit vectors too, where S % 8 != 0: the 14 x 14
// and 7 x 7 planes the fused launch does not take). The backward without saved statistics
// sums x first (one more reduction, no more traffic). A larger channel can stream the
// vectors past the registers (opt-in: channel_streams), and a channel can be held in
// shared memory instead of registers (channel_in_shared).
constexpr int kChannelMaxThreads = 512;
constexpr int kChannelVecs = 8;

// Where channel_nchw holds a channel between its passes:
// - kInRegs: kChannelVecs vectors a thread in registers (the channel fits them);
// - kStreamed: as kInRegs, and the vectors past them read again from global memory
//   (the L2) for each pass;
// - kInShared: all of it in dynamic shared memory, copied there by cp.async (no
//   registers held: ~40 a thread, so the blocks an SM are bounded by shared memory,
//   not registers). Vectors of 4, 8 or 16 bytes only (cp.async's sizes).
enum ChannelHold : int { kInRegs = 0, kStreamed = 1, kInShared = 2 };

struct ChannelPlan {
    int64_t cs = 0;  // C * S
    uint32_t s = 0;
    FastDiv fd_s;
    int64_t nvec = 0;  // vectors a channel: N * S / V
};

// block_sum2 with the totals in every thread. Every thread must call it.
__device__ __forceinline__ void block_sum2_all(double& a, double& b) {
    __shared__ double tot[2];
    block_sum2(a, b);
    if (threadIdx.x == 0) {
        tot[0] = a;
        tot[1] = b;
    }
    __syncthreads();
    a = tot[0];
    b = tot[1];
}

template <class T, int V, bool kBwd, bool kPlain, int kHold>
__global__ void __launch_bounds__(kChannelMaxThreads)
    channel_nchw(NormGeometry g, ChannelPlan cp, FusedIo<T> io, ResidentSaved sv, FwdFinish<typename Io<T>::C> ff,
                 BwdFinish<typename Io<T>::C> bf) {
    using C = typename Io<T>::C;
    using VT = Vec<T, V>;
    constexpr int R = kHold == kInShared ? 0 : kChannelVecs;
    __shared__ FwdCoef<C> sh_fwd;
    __shared__ BwdCoef<C> sh_bwd;
    const int64_t c = blockIdx.x, base = c * cp.s;
    const int tid = threadIdx.x;
    const int64_t B = blockDim.x;
    const bool has_act = kBwd && !kPlain && io.ops != 0;
    auto valid = [&](int r) { return tid + r * B < cp.nvec; };
    auto at = [&](int64_t v) { return base + nchw_vec_offset<V>(v, cp.cs, cp.s, cp.fd_s); };
    auto offset = [&](int r) { return at(tid + r * B); };
    // kStreamed: vectors past the registers' R a thread (a channel over R * B vectors:
    // launch_channel_v) are read again for each pass instead of held. A separate instance:
    // the loops cost the others registers (the bf16 V = 4 forward 64 -> 73, a block less
    // an SM). kInShared: R = 0, every vector read from shared memory for each pass.
    const int64_t held = R * B;
    extern __shared__ __align__(16) unsigned char channel_shm[];
    VT* const sx = reinterpret_cast<VT*>(channel_shm);
    VT* const sd = sx + cp.nvec;  // the backward's dy
    // Vector v (at o) of x and of dy past the registers: from shared memory or again from
    // global memory.
    auto x_past = [&](int64_t v, int64_t o) -> VT {
        if constexpr (kHold == kInShared) {
            return sx[v];
        } else {
            return load_vec<T, V>(io.x + o);
        }
    };
    auto dy_past = [&](int64_t v, int64_t o) -> VT {
        if constexpr (kHold == kInShared) {
            return sd[v];
        } else {
            return load_vec<T, V>(io.dy + o);
        }
    };
    // The channel's parameters first (thread 0), in flight with the data.
    FwdParamBits pb{};
    uint64_t sc_bits = 0;
    if (tid == 0) {
        if constexpr (!kBwd)
            pb = fwd_param_bits<C>(g, ff, c, true);
        else
            sc_bits = load_bits(bf.scale, g.param_offset(bf.pio.sb.st, c), bf.pio.dtype);
    }
    VT xr[R > 0 ? R : 1], dr[R > 0 ? R : 1];
#pragma unroll
    for (int r = 0; r < R; ++r)
        if (valid(r)) {
            const int64_t o = offset(r);
            xr[r] = load_vec<T, V>(io.x + o);
            if constexpr (kBwd) dr[r] = load_vec<T, V>(io.dy + o);
        }
    if constexpr (kHold == kInShared) {
        static_assert(sizeof(VT) == 4 || sizeof(VT) == 8 || sizeof(VT) == 16, "cp.async copies 4, 8 or 16 bytes");
        for (int64_t v = tid; v < cp.nvec; v += B) {
            const int64_t o = at(v);
            cp_async<static_cast<int>(sizeof(VT))>(static_cast<uint32_t>(__cvta_generic_to_shared(sx + v)), io.x + o);
            if constexpr (kBwd) {
                cp_async<static_cast<int>(sizeof(VT))>(static_cast<uint32_t>(__cvta_generic_to_shared(sd + v)),
                                                       io.dy + o);
            }
        }
        cp_async_commit();
        cp_async_wait_all();
        __syncthreads();
    }
    // One vector's contrib (the backward's: bwd) into fa / fb.
    auto add = [&](bool bwd, C center, const VT& xv, const VT& dv, int64_t o, C& fa, C& fb) {
        if (!bwd) {
#pragma unroll
            for (int e = 0; e < V; ++e)
                contrib<C, false>(Io<T>::in(xv.v[e]), C(0), C(0), false, io.act, center, fa, fb);
        } else {
            VT yv{};
            if (has_act) yv = load_vec<T, V>(io.y + o);
#pragma unroll
            for (int e = 0; e < V; ++e)
                contrib<C, true>(Io<T>::in(xv.v[e]), Io<T>::in(dv.v[e]), has_act ? Io<T>::in(yv.v[e]) : C(0),
                                 has_act, io.act, center, fa, fb);
        }
    };
    // The block's sums of contrib (the backward's: bwd), totals in every thread.
    auto sums = [&](bool bwd, C center, double& sa, double& sb) {
        C fa = 0, fb = 0;
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (valid(r)) add(bwd, center, xr[r], dr[r], offset(r), fa, fb);
        // Braced: nvcc 13.0 drops the rest of a lambda after an unbraced discarded
        // `if constexpr (false) for (...)` (a kernel with only that left compiled to a
        // bare `ret`): unbraced, the kInRegs instances gave wrong results.
        if constexpr (kHold != kInRegs) {
            for (int64_t v = held + tid; v < cp.nvec; v += B) {
                const int64_t o = at(v);
                VT dv{};
                if (bwd) dv = dy_past(v, o);
                add(bwd, center, x_past(v, o), dv, o, fa, fb);
            }
        }
        sa = fa;
        sb = fb;
        block_sum2_all(sa, sb);
    };
    double sa, sb;
    if constexpr (!kBwd) {
        sums(false, Io<T>::in(io.x[base]), sa, sb);
        if (tid == 0) sh_fwd = finish_forward<C>(g, ff, c, fwd_params_of<C>(ff, pb), sa, sb, true);
        __syncthreads();
        const FwdCoef<C> k = sh_fwd;
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (valid(r)) fwd_apply_vec<T, V, kPlain>(io, k, offset(r), xr[r]);
        if constexpr (kHold != kInRegs) {
            for (int64_t v = held + tid; v < cp.nvec; v += B) {
                const int64_t o = at(v);
                fwd_apply_vec<T, V, kPlain>(io, k, o, x_past(v, o));
            }
        }
    } else {
        double mean, istd;
        if (sv.mean) {
            saved_stats<C>(g, bf, sv, c, mean, istd);
        } else {
            const double center = Io<T>::in(io.x[base]);
            sums(false, static_cast<C>(center), sa, sb);
            const MeanVar mv = mean_var(center, sa, sb, static_cast<double>(g.count()), sv.eps);
            mean = mv.mean;
            istd = mv.istd;
        }
        sums(true, static_cast<C>(mean), sa, sb);
        if (tid == 0)
            sh_bwd = finish_backward_at<C>(g, bf, c, mean, istd, bits_value(sc_bits, bf.pio.dtype), sa, sb, true);
        __syncthreads();
        const BwdCoef<C> k = sh_bwd;
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (valid(r)) bwd_apply_vec<T, V, kPlain>(io, k, offset(r), xr[r], dr[r]);
        if constexpr (kHold != kInRegs) {
            for (int64_t v = held + tid; v < cp.nvec; v += B) {
                const int64_t o = at(v);
                bwd_apply_vec<T, V, kPlain>(io, k, o, x_past(v, o), dy_past(v, o));
            }
        }
    }
}

// ---- Apply: any strides ----

struct ElemIndex {
    int64_t m, f;
};

__device__ __forceinline__ ElemIndex elem_index(const NormGeometry& g, int64_t i) {
    const int64_t cs = g.c * g.s;
    const int64_t n = i / cs;
    const int64_t rem = i - n * cs;
    const int64_t c = rem / g.s;
    const int64_t sp = rem - c * g.s;
    return g.per_channel ? ElemIndex{n * g.s + sp, c} : ElemIndex{n, c * g.s + sp};
}

template <class T>
__global__ void apply_forward_generic(NormGeometry g, const T* x, Strides xs, const T* z, Strides zs, T* y,
                                      Strides ys, int64_t total, const typename Io<T>::C* ca,
                                      const typename Io<T>::C* cm, const typename Io<T>::C* cb,
                                      const typename Io<T>::C* cml, int ops, NormActivation act,
                                      typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(i, total) {
        const ElemIndex e = elem_index(g, i);
        const int64_t yo = g.offset(ys.st, e.m, e.f);
        C r = alpha * fwd_value<C>(Io<T>::in(x[g.offset(xs.st, e.m, e.f)]),
                                   ops == 2 ? Io<T>::in(z[g.offset(zs.st, e.m, e.f)]) : C(0), ops, act, ca[e.f],
                                   cm[e.f], cml[e.f], cb[e.f]);
        if (beta != C(0)) r += beta * Io<T>::in(y[yo]);
        y[yo] = Io<T>::out(r);
    }
}

template <class T>
__global__ void apply_backward_generic(NormGeometry g, const T* x, Strides xs, const T* dy, Strides dys, const T* y,
                                       Strides ys, T* dx, Strides dxs, T* dz, Strides dzs, int64_t total,
                                       const typename Io<T>::C* ca, const typename Io<T>::C* cbb,
                                       const typename Io<T>::C* cc, const typename Io<T>::C* cm,
                                       const typename Io<T>::C* cml, int ops, NormActivation act,
                                       typename Io<T>::C alpha, typename Io<T>::C beta) {
    using C = typename Io<T>::C;
    ODNN_GRID_STRIDE_LOOP(i, total) {
        const ElemIndex e = elem_index(g, i);
        C d = Io<T>::in(dy[g.offset(dys.st, e.m, e.f)]);
        if (ops != 0) d *= core::norm_act_grad_from_y(act, Io<T>::in(y[g.offset(ys.st, e.m, e.f)]));
        const int64_t o = g.offset(dxs.st, e.m, e.f);
        C r = alpha *
              (ca[e.f] * d + cbb[e.f] * ((Io<T>::in(x[g.offset(xs.st, e.m, e.f)]) - cm[e.f]) - cml[e.f]) + cc[e.f]);
        if (beta != C(0)) r += beta * Io<T>::in(dx[o]);
        dx[o] = Io<T>::out(r);
        if (ops == 2) {
            const int64_t zo = g.offset(dzs.st, e.m, e.f);
            C rz = alpha * d;
            if (beta != C(0)) rz += beta * Io<T>::in(dz[zo]);
            dz[zo] = Io<T>::out(rz);
        }
    }
}

// ---- Host orchestration ----

unsigned feature_blocks(int64_t F) { return static_cast<unsigned>(ceil_div(F, kThreads)); }

// Vector width for the packed kernels: the type's 16-byte width when the run it
// vectorises (S for NCHW, C for NHWC) divides evenly and every pointer is aligned; else,
// for the 16-bit types, 8-byte vectors where those fit (S = 14 x 14, ResNet-50's fourth
// stage, ran scalar at a fifth of copy); else scalar.
template <class T>
constexpr int kHalfVec = sizeof(T) == 2 ? Io<T>::kVec / 2 : 1;
template <class T>
int choose_vec(const Plan& pl, const NormGeometry& g, std::initializer_list<const void*> ptrs) {
    const int64_t run = pl.layout == Layout::nchw ? g.s : g.c;
    for (const int v : {Io<T>::kVec, kHalfVec<T>}) {
        bool fits = v > 1 && run % v == 0;
        for (const void* p : ptrs)
            if (p && !aligned_to(p, sizeof(T) * v)) fits = false;
        if (fits) return v;
    }
    return 1;
}

// Calls f(std::integral_constant<int, V>{}) with V the width choose_vec picked.
template <class T, class F>
decltype(auto) with_vec(int vec, F&& f) {
    if (vec == Io<T>::kVec) return f(std::integral_constant<int, Io<T>::kVec>{});
    if constexpr (kHalfVec<T> > 1)
        if (vec == kHalfVec<T>) return f(std::integral_constant<int, kHalfVec<T>>{});
    return f(std::integral_constant<int, 1>{});
}

struct StatsArgs {
    const void* x;
    const void* dy;
    const void* y;
    Strides xs, dys, ys;
    bool has_act;
    NormActivation act;
    const double* mean;  // backward: the centre of each feature
    double* part_a;
    double* part_b;
};

// The statistics pass's arguments over x (the backward adds dy, y and the mean), its
// partial sums in the workspace ws.
StatsArgs x_stats_args(const Plan& pl, const void* x, const TensorDesc& xd, char* ws) {
    StatsArgs a{};
    a.x = x;
    a.xs = strides_of(xd);
    a.part_a = reinterpret_cast<double*>(ws + pl.off_a);
    a.part_b = reinterpret_cast<double*>(ws + pl.off_b);
    return a;
}

template <class T, bool kBwd, int V>
void launch_stats_v(const Plan& pl, const NormGeometry& g, const StatsArgs& a, cudaStream_t s) {
    const T* x = static_cast<const T*>(a.x);
    const T* dy = static_cast<const T*>(a.dy);
    const T* y = static_cast<const T*>(a.y);
    if (pl.layout == Layout::nchw) {
        const int64_t nvec = g.n * g.s / V;
        const dim3 grid(static_cast<unsigned>(g.c), static_cast<unsigned>(pl.P));
        stats_nchw<T, V, kBwd><<<grid, kThreads, 0, s>>>(x, dy, y, a.has_act, a.act, a.mean, g.c * g.s,
                                                         static_cast<uint32_t>(g.s),
                                                         FastDiv(static_cast<uint32_t>(g.s)), nvec, pl.P, a.part_a,
                                                         a.part_b, pl.F);
    } else {
        const int64_t groups = g.c / V;
        const int tx = static_cast<int>(std::min<int64_t>(256, (groups + 31) / 32 * 32));
        const int ty = kThreads / tx;
        const dim3 block(tx, ty);
        const dim3 grid(static_cast<unsigned>(ceil_div(groups, tx)), static_cast<unsigned>(pl.P));
        const size_t shm = 2 * sizeof(double) * static_cast<size_t>(ty) * tx * V;
        const StatsBands sb = stats_nhwc_bands(g.n * g.s, pl.P, stats_nhwc_unroll(kBwd), ty);
        stats_nhwc<T, V, kBwd><<<grid, block, shm, s>>>(x, dy, y, a.has_act, a.act, a.mean, g.c, g.n * g.s, pl.P,
                                                        sb.rows, sb.count, a.part_a, a.part_b);
    }
}

// The statistics pass with its finish in the same launch (stats_finish_nchw), where the
// plan takes it: packed NCHW, one block a channel.
bool stats_finish_applies(const Plan& pl) { return pl.layout == Layout::nchw && pl.P == 1 && stats_finish_wanted(); }

template <class T, bool kBwd>
void launch_stats_finish(const NormGeometry& g, const StatsArgs& a, int vec, const FwdFinish<typename Io<T>::C>& ff,
                         const BwdFinish<typename Io<T>::C>& bf, cudaStream_t s) {
    with_vec<T>(vec, [&](auto v) {
        constexpr int V = decltype(v)::value;
        stats_finish_nchw<T, V, kBwd><<<static_cast<unsigned>(g.c), kThreads, 0, s>>>(
            g, static_cast<const T*>(a.x), static_cast<const T*>(a.dy), static_cast<const T*>(a.y), a.has_act, a.act,
            FastDiv(static_cast<uint32_t>(g.s)), g.n * g.s / V, ff, bf);
    });
}

template <class T, bool kBwd>
void launch_stats(const Plan& pl, const NormGeometry& g, const StatsArgs& a, int vec, cudaStream_t s) {
    const T* x = static_cast<const T*>(a.x);
    const T* dy = static_cast<const T*>(a.dy);
    const T* y = static_cast<const T*>(a.y);
    if (pl.layout == Layout::generic) {
        if (g.per_channel) {
            const dim3 grid(static_cast<unsigned>(pl.F), static_cast<unsigned>(pl.P));
            stats_generic_channel<T, kBwd><<<grid, kThreads, 0, s>>>(g, x, a.xs, dy, a.dys, y, a.ys, a.has_act, a.act,
                                                                     a.mean, pl.P, a.part_a, a.part_b);
        } else {
            const dim3 grid(feature_blocks(pl.F), static_cast<unsigned>(pl.P));
            stats_generic_feature<T, kBwd><<<grid, kThreads, 0, s>>>(g, x, a.xs, dy, a.dys, y, a.ys, a.has_act, a.act,
                                                                     a.mean, pl.P, a.part_a, a.part_b);
        }
        return;
    }
    with_vec<T>(vec, [&](auto v) { launch_stats_v<T, kBwd, decltype(v)::value>(pl, g, a, s); });
}

// The statistics pass and its finish: one launch where stats_finish_applies, else the
// statistics launch and finalize_forward (finalize_backward for kBwd) over its pieces.
template <class T, bool kBwd>
void launch_stats_and_finish(const Plan& pl, const NormGeometry& g, const StatsArgs& a, int vec,
                             const FwdFinish<typename Io<T>::C>& ff, const BwdFinish<typename Io<T>::C>& bf,
                             cudaStream_t s) {
    using C = typename Io<T>::C;
    if (stats_finish_applies(pl)) {
        launch_stats_finish<T, kBwd>(g, a, vec, ff, bf, s);
        return;
    }
    launch_stats<T, kBwd>(pl, g, a, vec, s);
    const FinalizeLaunch fin = finalize_launch(pl.F, pl.P);
    if constexpr (kBwd) {
        finalize_backward<C><<<fin.grid, fin.block, 0, s>>>(g, a.part_a, a.part_b, pl.P, bf);
    } else {
        finalize_forward<C><<<fin.grid, fin.block, 0, s>>>(g, a.part_a, a.part_b, pl.P, ff);
    }
}

// Calls f(std::bool_constant<kPlain>) with kPlain true for an apply with no activation,
// no add and beta = 0: the one rule for the apply kernels' compile-time plain forms.
template <class C, class F>
decltype(auto) with_plain(int ops, C beta, F&& f) {
    if (ops == 0 && beta == C(0)) return f(std::true_type{});
    return f(std::false_type{});
}

// Calls f(std::bool_constant<kFold>) with kFold true where the applies fold their
// coefficients (plain applies of 16-bit storage; see FwdFold / BwdFold): only 16-bit
// types compile a folded instance.
template <class T, class F>
decltype(auto) with_fold(int ops, typename Io<T>::C beta, F&& f) {
    return with_plain(ops, beta,
                      [&](auto plain) { return f(std::bool_constant<decltype(plain)::value && sizeof(T) == 2>{}); });
}

// Staging (FwdCoefChannel, folded applies only): each block first stages every channel's
// folded pair in shared memory, one channel a thread, where they fit in kStageBytes. H200,
// bf16 NHWC 128x256x56x56: 0.1190-0.1192 ms with each thread computing its 8 channels (40
// registers) -> 0.1140-0.1145 (32 registers, 85% of copy). FLOAT's unfolded instance
// staged took 44 registers against 40 and measured 0.2310-0.2336 against 0.2182-0.2196:
// FLOAT computes its own.
constexpr size_t kStageBytes = 16 * 1024;
template <class T, int V, class Src>
void launch_apply_forward_nhwc(const NormGeometry& g, const T* x, const T* z, T* y, const Src& src, int ops,
                               const NormActivation& act, typename Io<T>::C alpha, typename Io<T>::C beta,
                               cudaStream_t s) {
    using C = typename Io<T>::C;
    with_fold<T>(ops, beta, [&](auto fold) {
        constexpr bool kFold = decltype(fold)::value, kStage = kFold && Src::kStageable;
        const size_t smem = static_cast<size_t>(g.c) * sizeof(FwdFold<C>);
        int64_t one_wave = 0;
        if constexpr (!Src::kStageable) {
            // After a statistics pass (training: the coefficient arrays): one resident wave.
            static const int64_t resident = resident_threads(apply_forward_nhwc<T, V, kFold, Src, false>, 0);
            if (nhwc_tail_first()) one_wave = resident;
        }
        const NhwcWalk w = nhwc_walk(g.n * g.s, g.c, V, one_wave);
        const unsigned grid = static_cast<unsigned>(ceil_div(w.lanes, kThreads));
        if (kStage && smem <= kStageBytes)
            apply_forward_nhwc<T, V, kFold, Src, kStage><<<grid, kThreads, smem, s>>>(x, z, y, w, src, ops, act,
                                                                                       alpha, beta);
        else
            apply_forward_nhwc<T, V, kFold, Src, false><<<grid, kThreads, 0, s>>>(x, z, y, w, src, ops, act, alpha,
                                                                                   beta);
    });
}

template <class T, int V>
void launch_apply_forward_v(const Plan& pl, const NormGeometry& g, const T* x, const T* z, T* y,
                            const typename Io<T>::C* coef, const FwdCoefChannel<typename Io<T>::C>* channel,
                            int ops, const NormActivation& act, typename Io<T>::C alpha, typename Io<T>::C beta,
                            cudaStream_t s) {
    using C = typename Io<T>::C;
    const int64_t F = pl.F;
    if (pl.layout != Layout::nchw) {
        if (channel)
            launch_apply_forward_nhwc<T, V>(g, x, z, y, *channel, ops, act, alpha, beta, s);
        else
            launch_apply_forward_nhwc<T, V>(g, x, z, y, FwdCoefArrays<C>(coef, F), ops, act, alpha, beta, s);
        return;
    }
    const int64_t nvec = g.n * g.c * g.s / V;
    const FastDiv fd_s(static_cast<uint32_t>(g.s)), fd_c(static_cast<uint32_t>(g.c));
    with_fold<T>(ops, beta, [&](auto fold) {
        apply_forward_packed<T, V, decltype(fold)::value><<<grid_for(nvec), kThreads, 0, s>>>(
            x, z, y, nvec, fd_s, fd_c, coef, coef + F, coef + 2 * F, coef + 4 * F, ops, act, alpha, beta);
    });
}

template <class T, int V>
void launch_apply_backward_v(const Plan& pl, const NormGeometry& g, const T* x, const T* dy, const T* y, T* dx, T* dz,
                             const typename Io<T>::C* coef, int ops, const NormActivation& act,
                             typename Io<T>::C alpha, typename Io<T>::C beta, cudaStream_t s) {
    const int64_t F = pl.F;
    const int64_t nvec = g.n * g.c * g.s / V;
    const FastDiv fd_s(static_cast<uint32_t>(g.s)), fd_c(static_cast<uint32_t>(g.c));
    with_fold<T>(ops, beta, [&](auto fold) {
        constexpr bool kFold = decltype(fold)::value;
        if (pl.layout == Layout::nchw) {
            apply_backward_packed<T, V, kFold><<<grid_for(nvec), kThreads, 0, s>>>(
                x, dy, y, dx, dz, nvec, fd_s, fd_c, coef, coef + F, coef + 2 * F, coef + 3 * F, coef + 4 * F, ops, act,
                alpha, beta);
        } else {
            auto fn = apply_backward_nhwc<T, V, kFold>;
            static const int64_t resident = resident_threads(fn, 0);
            const NhwcWalk w = nhwc_walk(g.n * g.s, g.c, V, nhwc_tail_first() ? resident : 0);
            fn<<<static_cast<unsigned>(ceil_div(w.lanes, kThreads)), kThreads, 0, s>>>(
                x, dy, y, dx, dz, w, coef, coef + F, coef + 2 * F, coef + 3 * F, coef + 4 * F, ops, act, alpha, beta);
        }
    });
}

ParamIo param_io(const NormCommon& k, const TensorDesc& sb, const TensorDesc& mv) {
    ParamIo p;
    p.sb = strides_of(sb);
    p.mv = strides_of(mv);
    p.dtype = static_cast<int>(k.param_dtype);
    return p;
}

// Forward apply (inference and training): coefficients already in `coef` (a, mean, bias),
// or, for packed NHWC inference, computed in the apply from `channel` (coef unused).
template <class T>
void launch_apply_forward(const Plan& pl, const NormCommon& k, const TensorDesc& xd, const void* xp,
                          const TensorDesc& zd, const void* zp, const TensorDesc& yd, void* yp,
                          const typename Io<T>::C* coef, const core::Scale& out, cudaStream_t s,
                          const FwdCoefChannel<typename Io<T>::C>* channel = nullptr) {
    using C = typename Io<T>::C;
    const NormGeometry& g = k.g;
    const T* x = static_cast<const T*>(xp);
    const T* z = static_cast<const T*>(zp);
    T* y = static_cast<T*>(yp);
    const int ops = static_cast<int>(k.ops);
    const C alpha = static_cast<C>(out.alpha), beta = static_cast<C>(out.beta);
    if (pl.layout == Layout::generic) {
        const int64_t total = g.n * g.c * g.s;
        apply_forward_generic<T><<<grid_for(total), kThreads, 0, s>>>(g, x, strides_of(xd), z, strides_of(zd), y,
                                                                      strides_of(yd), total, coef, coef + pl.F,
                                                                      coef + 2 * pl.F, coef + 4 * pl.F, ops, k.act,
                                                                      alpha, beta);
        return;
    }
    with_vec<T>(choose_vec<T>(pl, g, {xp, zp, yp}), [&](auto v) {
        launch_apply_forward_v<T, decltype(v)::value>(pl, g, x, z, y, coef, channel, ops, k.act, alpha, beta, s);
    });
}

// Waits for a traced fused launch and writes its stamps to fused_trace_path(): a header
// line, then a line a block and step, `block step` and the kTraceSlots stamps.
Status write_fused_trace(const FusedPlan& fp, int64_t grid, size_t n, cudaStream_t s) {
    std::vector<unsigned long long> h(n);
    ODNN_RETURN_IF_ERROR(cuda_status(cudaMemcpyAsync(h.data(), fp.trace, n * sizeof(unsigned long long),
                                                     cudaMemcpyDeviceToHost, s),
                                     "copying the fused batch-norm trace"));
    ODNN_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(s), "waiting for the traced fused batch-norm launch"));
    FILE* f = std::fopen(fused_trace_path(), "w");
    if (!f)
        return core::make_status(CUDNN_STATUS_EXECUTION_FAILED, "cannot write the fused batch-norm trace to %s",
                                 fused_trace_path());
    std::fprintf(f, "# fused_nchw grid=%lld steps=%d Q=%d C=%d lag=%d slots=%d\n", static_cast<long long>(grid),
                 fp.steps, fp.Q, fp.C, fp.lag, static_cast<int>(kTraceSlots));
    for (int64_t b = 0; b < grid; ++b)
        for (int i = 0; i < fp.steps; ++i) {
            std::fprintf(f, "%lld %d", static_cast<long long>(b), i);
            for (int k = 0; k < kTraceSlots; ++k)
                std::fprintf(f, " %llu", h[(static_cast<size_t>(b) * fp.steps + i) * kTraceSlots + k]);
            std::fputc('\n', f);
        }
    std::fclose(f);
    return Status::ok();
}

// Blocks an SM of one fused_nchw instance, asked once and only for an instance that runs
// (the query loads its module).
template <class T, int V, bool kBwd, bool kPlain>
int fused_blocks_per_sm() {
    static const int n = blocks_per_sm(fused_nchw<T, V, kBwd, kPlain>, 0);
    return n;
}

// Fused statistics + apply (Plan::fused): one cooperative launch (after a memset that marks
// the sums unset or clears the counters, where the kernel does not) of as many blocks as the
// plan's quantization assumed and fit the GPU at once. *done stays false (three passes
// follow) where the instance does not fit or the device refuses the cooperative launch.
template <class T, int V, bool kBwd, bool kPlain>
Status launch_fused_v(const Plan& pl, const NormGeometry& g, const FusedIo<T>& io, char* ws,
                      const FwdFinish<typename Io<T>::C>& ff, const BwdFinish<typename Io<T>::C>& bf, cudaStream_t s,
                      bool* done) {
    auto fn = fused_nchw<T, V, kBwd, kPlain>;
    const int per_sm = fused_blocks_per_sm<T, V, kBwd, kPlain>();
    if (per_sm == 0) return Status::ok();
#ifndef ODNN_BN_TRACE
    ODNN_REQUIRE_SUPPORTED(!fused_trace_path(),
                           "ODNN_BN_FUSED_TRACE is set, but this library was built without the fused batch-norm "
                           "kernel's stamps (configure with -DODNN_BN_TRACE=ON)");
#endif
    FusedPlan fp;
    fp.cs = g.c * g.s;
    fp.s = static_cast<uint32_t>(g.s);
    fp.fd_s = FastDiv(fp.s);
    fp.nvec = g.n * g.s / V;
    fp.Q = pl.P;
    fp.C = static_cast<int>(g.c);
    fp.lag = fused_lag();
    fp.qlen = fp.nvec / fp.Q;
    fp.qrem = static_cast<int>(fp.nvec % fp.Q);
    const int64_t tiles = g.c * pl.P;
    const int64_t grid = std::min({pl.fused_grid, static_cast<int64_t>(per_sm) * sm_count(), tiles});
    // Progress needs a channel's tiles within two steps (fused_tiles keeps Q <= the plan's
    // grid); a device that runs fewer blocks at once takes three passes.
    if (fp.Q > grid) return Status::ok();
    fp.steps = static_cast<int>(fused_launch_steps(fp.lag, ceil_div(tiles, grid)));
    unsigned* counters = reinterpret_cast<unsigned*>(ws + pl.off_sync);
    fp.stamped = fused_stamped();
    fp.init = fused_init_in_kernel();
    fp.walk = fused_walk();
    // Only tiles of one round are prefetched: a tile of several would ask the L2 for more
    // than its loads take at once (not measured).
    const bool one_round = fp.qlen + (fp.qrem > 0 ? 1 : 0) <= int64_t{fused_unroll<kBwd>()} * kFusedWorkers;
    fp.prefetch = one_round ? fused_prefetch(kBwd) : 0;
    if (!fp.init) {  // else fused_nchw marks the sums unset or clears the counters itself
        if (fp.stamped) {
            // kUnsetPiece in every piece of both arrays (one byte fill from a's first to b's last).
            const size_t bytes = pl.off_b - pl.off_a + sizeof(double) * static_cast<size_t>(tiles);
            ODNN_RETURN_IF_ERROR(
                cuda_status(cudaMemsetAsync(ws + pl.off_a, 0xff, bytes, s), "marking the batch-norm sums unset"));
        } else {
            ODNN_RETURN_IF_ERROR(cuda_status(
                cudaMemsetAsync(counters, 0, sizeof(unsigned) * static_cast<size_t>(g.c), s),
                "clearing the batch-norm channel counters"));
        }
    }
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeCooperative;
    attr.val.cooperative = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(grid));
    cfg.blockDim = dim3(kThreads);
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    const size_t trace_n = static_cast<size_t>(grid) * static_cast<size_t>(fp.steps) * kTraceSlots;
    if (fused_trace_path()) {
        ODNN_RETURN_IF_ERROR(cuda_status(cudaMalloc(&fp.trace, trace_n * sizeof(unsigned long long)),
                                         "allocating the fused batch-norm trace"));
        const Status st = cuda_status(cudaMemsetAsync(fp.trace, 0, trace_n * sizeof(unsigned long long), s),
                                      "clearing the fused batch-norm trace");
        if (!st.is_ok()) cudaFree(fp.trace);
        ODNN_RETURN_IF_ERROR(st);
    }
    const cudaError_t e = cudaLaunchKernelEx(&cfg, fn, g, fp, io, counters, reinterpret_cast<double*>(ws + pl.off_a),
                                             reinterpret_cast<double*>(ws + pl.off_b), ff, bf);
    if (e == cudaErrorCooperativeLaunchTooLarge || e == cudaErrorNotSupported) {
        cudaGetLastError();
        if (fp.trace) cudaFree(fp.trace);
        return Status::ok();
    }
    const Status launched = cuda_status(e, "fused batch-norm launch");
    if (fp.trace) {
        const Status traced = launched.is_ok() ? write_fused_trace(fp, grid, trace_n, s) : Status::ok();
        cudaFree(fp.trace);
        ODNN_RETURN_IF_ERROR(traced);
    }
    ODNN_RETURN_IF_ERROR(launched);
    *done = true;
    return Status::ok();
}

// The fused launch for 16-bit vectors (Plan::fused); anything else leaves *done false.
template <class T, bool kBwd>
Status launch_fused(const Plan& pl, const NormGeometry& g, const FusedIo<T>& io, int vec, char* ws,
                    const FwdFinish<typename Io<T>::C>& ff, const BwdFinish<typename Io<T>::C>& bf, cudaStream_t s,
                    bool* done) {
    if (!pl.fused || vec != Io<T>::kVec) return Status::ok();
    return with_plain(io.ops, io.beta, [&](auto plain) {
        constexpr bool kPlain = decltype(plain)::value;
        return launch_fused_v<T, Io<T>::kVec, kBwd, kPlain>(pl, g, io, ws, ff, bf, s, done);
    });
}

// Resident launches (resident_nchw) for packed NCHW training and backward: only with
// ODNN_BN_RESIDENT=on (the channel's size picks the cluster) or =K (1, 2, 4, 8 or 16,
// the cluster size where it fits); tuning knobs, the GPU suite runs both. Off by
// default: on the H200 at 128x256x56x56 they measured slower than the three passes
// (training forward bf16 0.204 against 0.191 ms, f32 0.389 against 0.314; backward bf16
// 0.337 against 0.265), though they move 2T / 3T of DRAM traffic against 3T / 5T; only
// the f32 backward gains, 2% (0.482-0.492 against 0.500), within the spread of one run.
// ODNN_BN_RESIDENT=auto (resident where the fused launch would run fewer than eight steps)
// measured level or slower at ResNet-50's shapes and was taken out (docs/PERFORMANCE.md).
// Returns 0 (off), kResidentOn (on, cluster size picked) or the forced size.
int resident_knob() {
    static const int v = [] {
        if (core::knob_is("ODNN_BN_RESIDENT", "on")) return kResidentOn;
        const long k = core::knob_long("ODNN_BN_RESIDENT", 0);
        return k >= 1 && k <= kResidentMaxCluster && (k & (k - 1)) == 0 ? static_cast<int>(k) : 0;
    }();
    return v;
}

// A resident_nchw instance's readiness on the current device: sm_90 code in the binary,
// the dynamic shared memory it may take (the opt-in limit less its static shared
// memory) granted, non-portable cluster sizes allowed, and the largest shared-memory
// carveout preferred (else the driver may keep one block an SM). Read once.
template <class T, int V, bool kBwd, bool kPlain>
size_t resident_max_smem() {
    static const size_t max_dyn =
        sm90_dyn_smem(reinterpret_cast<const void*>(resident_nchw<T, V, kBwd, kPlain>), /*clusters=*/true);
    return max_dyn;
}

// A launch of `grid` blocks of kThreads in clusters of K; `attr` holds the cluster
// attribute the configuration points to.
cudaLaunchConfig_t cluster_launch(unsigned grid, int K, size_t smem, cudaStream_t s, cudaLaunchAttribute* attr) {
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = static_cast<unsigned>(K);
    attr->val.clusterDim.y = attr->val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

// How many clusters of K blocks of `smem` dynamic bytes the GPU holds at once (0: none,
// some GPCs may be too small), asked once per (K, bytes).
template <class T, int V, bool kBwd, bool kPlain>
int resident_clusters(int K, size_t smem) {
    static std::mutex mu;
    static std::map<std::pair<int, size_t>, int> seen;
    std::lock_guard<std::mutex> lock(mu);
    const auto key = std::make_pair(K, smem);
    auto it = seen.find(key);
    if (it != seen.end()) return it->second;
    cudaLaunchAttribute attr{};
    const cudaLaunchConfig_t cfg = cluster_launch(static_cast<unsigned>(K), K, smem, nullptr, &attr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, resident_nchw<T, V, kBwd, kPlain>, &cfg) != cudaSuccess) {
        cudaGetLastError();
        clusters = 0;
    }
    return seen[key] = std::max(0, clusters);
}

// Cluster size for channels of nvec vectors, `tensors` tensors held in two buffers: the
// smallest power of two whose buffers fit two blocks an SM (112 KB), grown while there
// are fewer than two blocks an SM and slices stay >= 16 KB; `forced` (> 0) instead.
// 0 where the buffers do not fit.
int resident_cluster(int64_t channels, int64_t nvec, int tensors, size_t vec_bytes, size_t max_smem, int forced) {
    constexpr int64_t kTwoPerSm = 112 << 10, kMinSlice = 16 << 10;
    auto slice_of = [&](int k) { return ceil_div(nvec, k) * static_cast<int64_t>(vec_bytes) * tensors; };
    int K = 1;
    if (forced > 0) {
        K = forced;
    } else {
        while (K < kResidentMaxCluster &&
               (2 * slice_of(K) > kTwoPerSm || (channels * K < 2 * sm_count() && slice_of(K) >= 2 * kMinSlice)))
            K *= 2;
    }
    if (2 * slice_of(K) > static_cast<int64_t>(max_smem)) return 0;
    return K;
}

// One resident_nchw instance's launch. The grid: as many clusters as run at once (at most
// one a channel), trimmed so that every cluster takes the same number of channels, give
// or take one.
template <class T, bool kBwd, bool kPlain>
Status launch_resident_v(const NormGeometry& g, const FusedIo<T>& io, const ResidentSaved& sv,
                         const FwdFinish<typename Io<T>::C>& ff, const BwdFinish<typename Io<T>::C>& bf,
                         cudaStream_t s, bool* done) {
    constexpr int V = Io<T>::kVec;
    const size_t max_smem = resident_max_smem<T, V, kBwd, kPlain>();
    if (max_smem == 0) return Status::ok();
    ResidentPlan rp;
    rp.cs = g.c * g.s;
    rp.s = static_cast<uint32_t>(g.s);
    rp.fd_s = FastDiv(rp.s);
    rp.nvec = g.n * g.s / V;
    rp.rv = g.s / V;
    rp.C = g.c;
    const int tensors = kBwd ? 2 : 1;
    rp.K = resident_cluster(g.c, rp.nvec, tensors, sizeof(Vec<T, V>), max_smem, resident_knob());
    if (rp.K == 0) return Status::ok();
    rp.slice = ceil_div(rp.nvec, rp.K);
    const size_t smem = 2 * static_cast<size_t>(rp.slice) * sizeof(Vec<T, V>) * tensors;
    const int active = resident_clusters<T, V, kBwd, kPlain>(rp.K, smem);
    if (active == 0) return Status::ok();
    const int64_t rounds = ceil_div(g.c, std::min<int64_t>(g.c, active));
    const int64_t clusters = ceil_div(g.c, rounds);
    cudaLaunchAttribute attr{};
    const cudaLaunchConfig_t cfg = cluster_launch(static_cast<unsigned>(clusters * rp.K), rp.K, smem, s, &attr);
    auto fn = resident_nchw<T, V, kBwd, kPlain>;
    ODNN_RETURN_IF_ERROR(cuda_status(cudaLaunchKernelEx(&cfg, fn, g, rp, io, sv, ff, bf), "resident batch-norm launch"));
    *done = true;
    return Status::ok();
}

// Launches resident_nchw where it applies (packed NCHW, not fused, 16-byte vectors, a
// fitting cluster); *done stays false, and nothing is launched, where it does not.
template <class T, bool kBwd>
Status launch_resident(const Plan& pl, const NormGeometry& g, const FusedIo<T>& io, const ResidentSaved& sv, int vec,
                       const FwdFinish<typename Io<T>::C>& ff, const BwdFinish<typename Io<T>::C>& bf,
                       cudaStream_t s, bool* done) {
    *done = false;
    if (pl.layout != Layout::nchw || pl.fused || resident_knob() == 0 || vec != Io<T>::kVec) return Status::ok();
    return with_plain(io.ops, io.beta, [&](auto plain) {
        return launch_resident_v<T, kBwd, decltype(plain)::value>(g, io, sv, ff, bf, s, done);
    });
}

// Where packed NCHW training and backward run channel_nchw with the channel in registers
// or streamed, among the launches whose channel fits a block (ODNN_BN_CHANNEL: =on
// everywhere, =off nowhere, in any form; tuning knobs the GPU suite runs; the shared-memory
// form is channel_in_shared's choice). By default where it measured faster than the fused
// launch or three passes (H100, bench/bn_nchw_sizes.txt and bn_nchw_batch64.txt,
// docs/PERFORMANCE.md), before the shared-memory form, which now takes most of these rows:
// - C at most the SMs (one block an SM, a single wave): 8x64x56x56 bf16 forward 0.73x
//   the time, backward 0.90x;
// - the forward where a channel holds at most kChannelFwdElems elements: 32x1024x14x14
//   f32 0.91x, bf16 0.83x; 32x2048x7x7 f32 0.69x, bf16 0.81x (against three passes whose
//   statistics launch finishes each channel). At 64x1024x14x14 (12544 elements) bf16 it
//   took 1.18x, f32 0.97x; at 32x512x28x28 it was level;
// - the backward of 4-byte and wider types and of scalar 16-bit vectors: f32 14x14
//   0.81-0.85x, 7x7 f32 and bf16 0.82-0.83x.
// The 16-bit vector backward took 1.12x (32x1024x14x14) to 1.27x three passes' time
// and the fused launch's, which keep more blocks resident.
constexpr int64_t kChannelFwdElems = 8192;
bool channel_off() {
    static const bool off = core::knob_is("ODNN_BN_CHANNEL", "off");
    return off;
}
bool channel_chosen(bool bwd, size_t elem_bytes, int vec, int64_t c, int64_t elems) {
    static const bool on = core::knob_is("ODNN_BN_CHANNEL", "on");
    if (channel_off()) return false;
    if (on || c <= sm_count()) return true;
    if (!bwd) return elems <= kChannelFwdElems;
    return elem_bytes >= 4 || vec == 1;
}
int64_t channel_max_bytes() {
    static const int64_t m = clamp64(core::knob_long("ODNN_BN_CHANNEL_BYTES", int64_t{64} << 10), 0, int64_t{1} << 30);
    return m;
}

// A channel over what the registers hold (kChannelVecs vectors a thread of
// kChannelMaxThreads) streams the rest: it reads those vectors again for each pass, from
// the L2 where the tensors fit it. Only where C is at most the SMs (one block an SM,
// one wave) and a channel of one tensor is at most kChannelStreamBytes, so that the
// C channels' x (and dy) stay within the L2: 132 x 128 KB = 17 MB a tensor. Opt-in
// (ODNN_BN_CHANNEL_STREAM=on everywhere it applies, =fwd the forward only): measured on
// an H100 in a build whose other channel instances the nvcc bug above broke, 16x128x56x56
// bf16 forward 0.0271 -> 0.0187 ms, 8x64x56x56 f32 forward 0.0190 -> 0.0155 and backward
// 0.0204 -> 0.0166, but 16x128x56x56 bf16 backward 0.0270 -> 0.0314 (docs/PERFORMANCE.md);
// its present form has not run on a GPU yet.
constexpr int64_t kChannelStreamBytes = int64_t{128} << 10;
bool channel_streams(bool bwd, const NormGeometry& g, size_t elem_bytes) {
    static const bool on = core::knob_is("ODNN_BN_CHANNEL_STREAM", "on");
    static const bool fwd = core::knob_is("ODNN_BN_CHANNEL_STREAM", "fwd");
    if (!(on || (fwd && !bwd))) return false;
    return g.c <= sm_count() && g.n * g.s * static_cast<int64_t>(elem_bytes) <= kChannelStreamBytes;
}

// Whether channel_nchw holds a channel of `elems` elements in shared memory (kInShared)
// where an instance has one (plain, vectors of 4, 8 or 16 bytes) and the channel fits, in
// place of the registers, of streaming and of the other launches. Blocks an SM are then
// bounded by the channel's bytes (x, and dy in the backward) in the SM's shared memory
// rather than by ~100 registers a thread (two blocks of 224 threads an SM in the 16-bit
// 8-byte-vector backward at 32x1024x14x14). By default where a channel has more than
// kChannelSharedMinElems elements; measured on an H100 (bench/bn_nchw_sizes.txt and
// bn_nchw_batch64.txt, docs/PERFORMANCE.md) at 0.64-0.96x the time of the register form,
// the fused launch or three passes on 24 of the 28 rows it takes (32x1024x14x14 bf16
// backward 0.0308 -> 0.0231 ms, 16x128x56x56 bf16 forward 0.0248 -> 0.0159), within 3% on
// three and 1.04x on one (64x1024x14x14 bf16 forward); at 32x2048x7x7 (1568 elements) the
// register form was level or ahead. ODNN_BN_CHANNEL_SMEM=on: wherever the channel fits
// (the GPU suite's variant), =off: never; ODNN_BN_CHANNEL=off turns off channel_nchw in
// every form.
constexpr int64_t kChannelSharedMinElems = 2048;
bool channel_in_shared(int64_t elems) {
    static const bool on = core::knob_is("ODNN_BN_CHANNEL_SMEM", "on");
    static const bool off = core::knob_is("ODNN_BN_CHANNEL_SMEM", "off");
    return on || (!off && elems > kChannelSharedMinElems);
}
template <class T, int V, bool kBwd, bool kPlain>
size_t channel_shared_max() {
    static const size_t m =
        sm90_dyn_smem(reinterpret_cast<const void*>(channel_nchw<T, V, kBwd, kPlain, kInShared>), /*clusters=*/false);
    return m;
}

// One channel_nchw instance's launch: C blocks that hold the channel in shared memory
// where channel_in_shared and it fits; else, where `chosen` (channel_chosen), of the
// fewest warps that hold a channel of at most channel_max_bytes() in registers, else
// (plain instances, channel_streams) of kChannelMaxThreads threads that stream the rest;
// *done stays false where none applies.
template <class T, int V, bool kBwd, bool kPlain>
Status launch_channel_v(const NormGeometry& g, const FusedIo<T>& io, const ResidentSaved& sv,
                        const FwdFinish<typename Io<T>::C>& ff, const BwdFinish<typename Io<T>::C>& bf,
                        bool chosen, cudaStream_t s, bool* done) {
    ChannelPlan cp;
    cp.cs = g.c * g.s;
    cp.s = static_cast<uint32_t>(g.s);
    cp.fd_s = FastDiv(cp.s);
    cp.nvec = g.n * g.s / V;
    const int64_t threads = ceil_div(ceil_div(cp.nvec, int64_t{kChannelVecs}), int64_t{32}) * 32;
    if (threads == 0 || g.c > int64_t{0x7fffffff}) return Status::ok();
    const auto grid = static_cast<unsigned>(g.c);
    auto launched = [&] {
        ODNN_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "channel batch-norm launch"));
        *done = true;
        return Status::ok();
    };
    constexpr size_t kVecBytes = sizeof(Vec<T, V>);
    if constexpr (kPlain && (kVecBytes == 4 || kVecBytes == 8 || kVecBytes == 16)) {
        const size_t bytes = static_cast<size_t>(cp.nvec) * kVecBytes * (kBwd ? 2 : 1);
        if (channel_in_shared(g.n * g.s) && bytes <= channel_shared_max<T, V, kBwd, kPlain>()) {
            channel_nchw<T, V, kBwd, kPlain, kInShared>
                <<<grid, static_cast<unsigned>(std::min<int64_t>(threads, kChannelMaxThreads)), bytes, s>>>(
                    g, cp, io, sv, ff, bf);
            return launched();
        }
    }
    if (!chosen) return Status::ok();
    if (threads <= kChannelMaxThreads && g.n * g.s * static_cast<int64_t>(sizeof(T)) <= channel_max_bytes()) {
        channel_nchw<T, V, kBwd, kPlain, kInRegs><<<grid, static_cast<unsigned>(threads), 0, s>>>(g, cp, io, sv, ff, bf);
        return launched();
    }
    if constexpr (kPlain) {  // streaming: the plain instances only
        if (channel_streams(kBwd, g, sizeof(T))) {
            channel_nchw<T, V, kBwd, kPlain, kStreamed>
                <<<grid, static_cast<unsigned>(kChannelMaxThreads), 0, s>>>(g, cp, io, sv, ff, bf);
            return launched();
        }
    }
    return Status::ok();
}

// Launches channel_nchw where it applies (packed NCHW, a channel that launch_channel_v
// takes); *done stays false, and nothing is launched, where it does not.
template <class T, bool kBwd>
Status launch_channel(const Plan& pl, const NormGeometry& g, const FusedIo<T>& io, const ResidentSaved& sv, int vec,
                      const FwdFinish<typename Io<T>::C>& ff, const BwdFinish<typename Io<T>::C>& bf, cudaStream_t s,
                      bool* done) {
    *done = false;
    if (pl.layout != Layout::nchw || channel_off()) return Status::ok();
    const bool chosen = channel_chosen(kBwd, sizeof(T), vec, g.c, g.n * g.s);
    return with_vec<T>(vec, [&](auto v) {
        return with_plain(io.ops, io.beta, [&](auto plain) {
            return launch_channel_v<T, decltype(v)::value, kBwd, decltype(plain)::value>(g, io, sv, ff, bf, chosen, s,
                                                                                        done);
        });
    });
}

// The workspace: the caller's (aligned up to 256 bytes) or scratch of the plan's size.
Status workspace_of(const Plan& pl, void* caller, bool caller_workspace, DeviceScratch& scratch, cudaStream_t s,
                    char** ws) {
    char* w = static_cast<char*>(caller);
    if (!caller_workspace) {
        ODNN_RETURN_IF_ERROR(scratch.allocate(pl.bytes, s));
        w = static_cast<char*>(scratch.get());
    }
    *ws = align_up256(w);
    return Status::ok();
}

// ---- Implementations ----

class CudaBnFwdInference final : public core::Impl<core::BnFwdInferenceProblem> {
public:
    const char* name() const override { return "cuda_batchnorm_fwd_inference"; }
    Status execute(const core::Handle& h, const core::BnFwdInferenceProblem& p) const override {
        const Plan pl = make_plan(p.k, {&p.y, &p.z}, p.x, 0);
        return with_float_type(p.k.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            const ParamIo pio = param_io(p.k, p.scale_bias, p.mean_var);
            const FwdCoefParams<C> src{static_cast<const C*>(p.scale), static_cast<const C*>(p.bias),
                                       static_cast<const C*>(p.mean), static_cast<const C*>(p.var),
                                       static_cast<C>(p.k.epsilon)};
            if (pl.layout == Layout::nhwc) {  // coefficients in the apply: no scratch, one launch
                const FwdCoefChannel<C> ch{src, pio.sb.st[1], pio.mv.st[1]};
                launch_apply_forward<T>(pl, p.k, p.x, p.x_data, p.z, p.z_data, p.y, p.y_data, nullptr, p.out, h.stream,
                                        &ch);
                return launched(name());
            }
            DeviceScratch scratch;
            ODNN_RETURN_IF_ERROR(scratch.allocate(5 * static_cast<size_t>(pl.F) * sizeof(double), h.stream));
            C* coef = static_cast<C*>(scratch.get());
            coef_inference<C><<<feature_blocks(pl.F), kThreads, 0, h.stream>>>(
                p.k.g, pio, src, coef, coef + pl.F, coef + 2 * pl.F, coef + 4 * pl.F);
            launch_apply_forward<T>(pl, p.k, p.x, p.x_data, p.z, p.z_data, p.y, p.y_data, coef, p.out, h.stream);
            return launched(name());
        });
    }
};

class CudaBnFwdTraining final : public core::Impl<core::BnFwdTrainingProblem> {
public:
    const char* name() const override { return "cuda_batchnorm_fwd_training"; }
    static Plan plan(const core::BnFwdTrainingProblem& p) { return make_plan(p.k, {&p.y, &p.z}, p.x, 1); }
    size_t workspace_size(const core::BnFwdTrainingProblem& p) const override { return plan(p).bytes; }
    Status execute(const core::Handle& h, const core::BnFwdTrainingProblem& p) const override {
        const Plan pl = plan(p);
        DeviceScratch scratch;
        return with_float_type(p.k.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            const NormGeometry& g = p.k.g;
            // The coefficient arrays (in the workspace) are set below: one block a channel
            // takes no workspace, so none is allocated for it.
            FwdFinish<C> ff{p.x_data,     static_cast<int>(p.k.dtype),
                            strides_of(p.x), param_io(p.k, p.scale_bias, p.mean_var),
                            p.scale,      p.bias,
                            p.running_mean, p.running_var,
                            p.save_mean,  p.save_inv_var,
                            p.factor,     p.k.epsilon,
                            nullptr,      nullptr,
                            nullptr,      nullptr,
                            nullptr,      nullptr};
            const FusedIo<T> io{static_cast<const T*>(p.x_data), static_cast<const T*>(p.z_data), nullptr,
                                nullptr, static_cast<T*>(p.y_data), nullptr, static_cast<int>(p.k.ops), p.k.act,
                                static_cast<C>(p.out.alpha), static_cast<C>(p.out.beta)};
            const int io_vec = pl.layout == Layout::nchw ? choose_vec<T>(pl, g, {p.x_data, p.z_data, p.y_data}) : 1;
            if (pl.layout == Layout::nchw) {
                bool done = false;
                ODNN_RETURN_IF_ERROR((launch_channel<T, false>(pl, g, io, ResidentSaved{}, io_vec, ff,
                                                               BwdFinish<C>{}, h.stream, &done)));
                if (done) return launched(name());
            }
            char* ws = nullptr;
            ODNN_RETURN_IF_ERROR(workspace_of(pl, p.workspace, p.caller_workspace, scratch, h.stream, &ws));
            C* coef = reinterpret_cast<C*>(ws + pl.off_coef);
            ff.coef_a = coef;
            ff.coef_m = coef + pl.F;
            ff.coef_b = coef + 2 * pl.F;
            ff.coef_ml = coef + 4 * pl.F;
            if (pl.layout == Layout::nchw) {
                bool done = false;
                ODNN_RETURN_IF_ERROR(
                    (launch_fused<T, false>(pl, g, io, io_vec, ws, ff, BwdFinish<C>{}, h.stream, &done)));
                if (done) return launched(name());
                ODNN_RETURN_IF_ERROR((launch_resident<T, false>(pl, g, io, ResidentSaved{}, io_vec, ff,
                                                                BwdFinish<C>{}, h.stream, &done)));
                if (done) return launched(name());
            }
            const StatsArgs a = x_stats_args(pl, p.x_data, p.x, ws);
            const int vec = pl.layout == Layout::generic ? 1 : choose_vec<T>(pl, g, {p.x_data});
            launch_stats_and_finish<T, false>(pl, g, a, vec, ff, BwdFinish<C>{}, h.stream);
            launch_apply_forward<T>(pl, p.k, p.x, p.x_data, p.z, p.z_data, p.y, p.y_data, coef, p.out, h.stream);
            return launched(name());
        });
    }
};

class CudaBnBackward final : public core::Impl<core::BnBackwardProblem> {
public:
    const char* name() const override { return "cuda_batchnorm_bwd"; }
    static Plan plan(const core::BnBackwardProblem& p) {
        return make_plan(p.k, {&p.y, &p.dy, &p.dx, &p.dz}, p.x, p.k.ops != NormOps::norm ? 3 : 2);
    }
    size_t workspace_size(const core::BnBackwardProblem& p) const override { return plan(p).bytes; }
    Status execute(const core::Handle& h, const core::BnBackwardProblem& p) const override {
        const Plan pl = plan(p);
        DeviceScratch scratch;
        return with_float_type(p.k.dtype, [&](auto tag) -> Status {
            using T = typename decltype(tag)::type;
            using C = typename Io<T>::C;
            const NormGeometry& g = p.k.g;
            const ParamIo pio = param_io(p.k, p.scale_bias, p.mean_var);
            const bool has_act = p.k.ops != NormOps::norm;
            const int vec = pl.layout == Layout::generic
                                ? 1
                                : choose_vec<T>(pl, g, {p.x_data, p.dy_data, has_act ? p.y_data : nullptr, p.dx_data,
                                                        p.k.ops == NormOps::add_act ? p.dz_data : nullptr});
            // The statistics and coefficient arrays (in the workspace) are set below: one
            // block a channel and the resident launch take no workspace, so none is
            // allocated for them.
            BwdFinish<C> bf{nullptr,       nullptr,        pio,         p.scale,
                            p.dscale,      p.dbias,        p.param.alpha, p.param.beta,
                            nullptr,       nullptr,        nullptr,     nullptr,
                            nullptr};
            const int ops = static_cast<int>(p.k.ops);
            const C alpha = static_cast<C>(p.data.alpha), beta = static_cast<C>(p.data.beta);
            const T* x = static_cast<const T*>(p.x_data);
            const T* dy = static_cast<const T*>(p.dy_data);
            const T* y = static_cast<const T*>(p.y_data);
            T* dx = static_cast<T*>(p.dx_data);
            T* dz = static_cast<T*>(p.dz_data);
            const FusedIo<T> io{x, nullptr, dy, has_act ? y : nullptr, dx, dz, ops, p.k.act, alpha, beta};
            if (pl.layout == Layout::nchw) {
                // One block a channel, else resident where asked for (neither launches where
                // it does not apply; launch_resident never where the plan is fused).
                bool done = false;
                const ResidentSaved sv{p.saved_mean, p.saved_inv_var, p.k.epsilon};
                ODNN_RETURN_IF_ERROR(
                    (launch_channel<T, true>(pl, g, io, sv, vec, FwdFinish<C>{}, bf, h.stream, &done)));
                if (done) return launched(name());
                ODNN_RETURN_IF_ERROR(
                    (launch_resident<T, true>(pl, g, io, sv, vec, FwdFinish<C>{}, bf, h.stream, &done)));
                if (done) return launched(name());
            }
            char* ws = nullptr;
            ODNN_RETURN_IF_ERROR(workspace_of(pl, p.workspace, p.caller_workspace, scratch, h.stream, &ws));
            double* mean = reinterpret_cast<double*>(ws + pl.off_mean);
            double* istd = reinterpret_cast<double*>(ws + pl.off_istd);
            C* coef = reinterpret_cast<C*>(ws + pl.off_coef);
            bf.mean_in = mean;
            bf.istd_in = istd;
            bf.coef_a = coef;
            bf.coef_b = coef + pl.F;
            bf.coef_c = coef + 2 * pl.F;
            bf.coef_m = coef + 3 * pl.F;
            bf.coef_ml = coef + 4 * pl.F;
            StatsArgs a = x_stats_args(pl, p.x_data, p.x, ws);
            if (pl.fused && p.saved_mean) {
                // The fused launch reads the saved statistics itself (no load_saved launch).
                BwdFinish<C> direct = bf;
                direct.saved_mean = p.saved_mean;
                direct.saved_istd = p.saved_inv_var;
                bool done = false;
                ODNN_RETURN_IF_ERROR(
                    (launch_fused<T, true>(pl, g, io, vec, ws, FwdFinish<C>{}, direct, h.stream, &done)));
                if (done) return launched(name());
            }
            if (p.saved_mean && stats_finish_applies(pl)) {
                bf.saved_mean = p.saved_mean;  // read in place by the statistics launch
                bf.saved_istd = p.saved_inv_var;
            } else if (p.saved_mean) {
                load_saved<<<feature_blocks(pl.F), kThreads, 0, h.stream>>>(g, pio, p.saved_mean, p.saved_inv_var,
                                                                            mean, istd);
            } else {
                FwdFinish<C> mo{};
                mo.x = p.x_data;
                mo.x_dtype = static_cast<int>(p.k.dtype);
                mo.xs = a.xs;
                mo.pio = pio;
                mo.factor = 1.0;
                mo.eps = p.k.epsilon;
                mo.mean_out = mean;
                mo.istd_out = istd;
                launch_stats_and_finish<T, false>(pl, g, a, vec, mo, BwdFinish<C>{}, h.stream);
            }
            if (pl.fused && !p.saved_mean) {
                bool done = false;
                ODNN_RETURN_IF_ERROR((launch_fused<T, true>(pl, g, io, vec, ws, FwdFinish<C>{}, bf, h.stream, &done)));
                if (done) return launched(name());
            }
            a.dy = p.dy_data;
            a.dys = strides_of(p.dy);
            a.y = has_act ? p.y_data : nullptr;
            a.ys = strides_of(p.y);
            a.has_act = has_act;
            a.act = p.k.act;
            a.mean = mean;
            launch_stats_and_finish<T, true>(pl, g, a, vec, FwdFinish<C>{}, bf, h.stream);
            if (pl.layout == Layout::generic) {
                const int64_t total = g.n * g.c * g.s;
                apply_backward_generic<T><<<grid_for(total), kThreads, 0, h.stream>>>(
                    g, x, a.xs, dy, a.dys, y, a.ys, dx, strides_of(p.dx), dz, strides_of(p.dz), total, coef,
                    coef + pl.F, coef + 2 * pl.F, coef + 3 * pl.F, coef + 4 * pl.F, ops, p.k.act, alpha, beta);
            } else {
                with_vec<T>(vec, [&](auto v) {
                    launch_apply_backward_v<T, decltype(v)::value>(pl, g, x, dy, y, dx, dz, coef, ops, p.k.act, alpha,
                                                                   beta, h.stream);
                });
            }
            return launched(name());
        });
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cuda, core::BnFwdInferenceProblem, CudaBnFwdInference, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::BnFwdTrainingProblem, CudaBnFwdTraining, core::kPriorityGeneric);
ODNN_REGISTER_IMPL(cuda, core::BnBackwardProblem, CudaBnBackward, core::kPriorityGeneric);

}  // namespace odnn::cuda
