// Probe (not part of the library): how fast the GPU moves the fused NCHW batch norm's
// memory pattern with no synchronisation between blocks, so it bounds that kernel
// (src/cuda/batchnorm.cu, fused_nchw) from above. 128x256x56x56, f32 and bf16 (4 and 2
// bytes an element), 16-byte vectors, 2 blocks of 256 threads an SM. At step i block b
// reads its statistics tile (one round: every load issued before any is used) and sums
// it, then re-reads the tile of step i - 2 (evict-first) and writes it to y:
//   layout 0 "channels": the fused kernel's tiles, Q a channel (bn_fused_tiles.hpp's
//     fused_tiles, 1792-vector rounds), tile t = i P + b, a channel's N runs of S elements
//     cut into Q; a step covers C Q / P channels, 6 KB (bf16) runs 1.6 MB apart;
//   layout 1 "images": the same steps' channels, but a step's data taken image by image
//     (each image's run of the step's channels is contiguous) and cut into P equal tiles,
//     so a tile is one or two contiguous pieces of ~24 KB.
// sync 1 adds a block barrier between a step's two halves, as the fused kernel has.
// Results: docs/PERFORMANCE.md. Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90a -I src -o /tmp/bn_fused_pattern bench/probes/bn_fused_pattern.cu && /tmp/bn_fused_pattern

#include "cuda/bn_fused_tiles.hpp"
#include "probe_common.cuh"

struct Geo {
    int64_t n, c, s;  // s: 16-byte vectors a run (one image, one channel)
    int64_t q;        // tiles a channel (layout 0)
    int64_t per_step;  // channels a step (layout 1): C Q / P
};

constexpr int kThreads = 256, kU = 8;  // a round: kU vectors a thread

// Vector index in x of element v of tile t (layout 0) or of step j's piece b (layout 1);
// the tile's range [v0, v1) is returned through the same rule's bounds.
__device__ __forceinline__ void tile_range(const Geo& g, int layout, int64_t j, int64_t b, int64_t P, int64_t& v0,
                                           int64_t& v1) {
    if (layout == 0) {
        const int64_t t = j * P + b, nvec = g.n * g.s;
        const int64_t q = t % g.q;
        v0 = nvec * q / g.q;
        v1 = nvec * (q + 1) / g.q;
    } else {
        const int64_t len = g.n * g.per_step * g.s;
        v0 = len * b / P;
        v1 = len * (b + 1) / P;
    }
}
__device__ __forceinline__ int64_t vec_at(const Geo& g, int layout, int64_t j, int64_t b, int64_t P, int64_t v) {
    if (layout == 0) {
        const int64_t ch = (j * P + b) / g.q;
        return (v / g.s * g.c + ch) * g.s + v % g.s;
    }
    const int64_t run = g.per_step * g.s, img = v / run, r = v % run;
    return (img * g.c + j * g.per_step) * g.s + r;
}

// The rounds of the tile of step j, block b: each thread's kU vectors of a round read by
// `load` (all issued before any is used), then handed to `use` with their index in x.
template <class L, class F>
__device__ __forceinline__ void tile_rounds(const Geo& g, int layout, int64_t j, int64_t b, int64_t P, L&& load,
                                            F&& use) {
    int64_t v0, v1;
    tile_range(g, layout, j, b, P, v0, v1);
    for (int64_t vb = v0 + threadIdx.x; vb < v1; vb += kU * kThreads) {
        uint4 a[kU];
        int64_t at[kU];
#pragma unroll
        for (int u = 0; u < kU; ++u)
            if (vb + u * kThreads < v1) {
                at[u] = vec_at(g, layout, j, b, P, vb + u * kThreads);
                a[u] = load(at[u]);
            }
#pragma unroll
        for (int u = 0; u < kU; ++u)
            if (vb + u * kThreads < v1) use(a[u], at[u]);
    }
}

__global__ void __launch_bounds__(kThreads, 2)
    pattern(const uint4* __restrict__ x, uint4* __restrict__ y, float* out, Geo g, int64_t steps, int layout, int sync) {
    const int64_t P = gridDim.x, b = blockIdx.x;
    float s = 0.f;
    for (int64_t i = 0; i < steps + 2; ++i) {
        if (i < steps)  // statistics: read and sum
            tile_rounds(
                g, layout, i, b, P, [&](int64_t k) { return x[k]; },
                [&](const uint4& v, int64_t) { s += __uint_as_float(v.x) + __uint_as_float(v.w); });
        if (sync) __syncthreads();
        if (i >= 2)  // apply of step i - 2: re-read evict-first, write
            tile_rounds(
                g, layout, i - 2, b, P, [&](int64_t k) { return __ldcs(x + k); },
                [&](uint4 v, int64_t k) {
                    v.x ^= 1u;
                    __stcs(y + k, v);
                });
    }
    if (s == 12345.f) out[0] = s;
}

int main() {
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int64_t P = 2LL * sms, n = 128, c = 256, hw = 56 * 56;
    uint4 *x, *y;
    float* out;
    const size_t maxb = static_cast<size_t>(n * c * hw) * 4;
    CK(cudaMalloc(&x, maxb));
    CK(cudaMalloc(&y, maxb));
    CK(cudaMalloc(&out, 4));
    CK(cudaMemset(x, 0, maxb));
    CK(cudaMemset(y, 0, maxb));
    for (int esize : {4, 2}) {
        Geo g;
        g.n = n;
        g.c = c;
        g.s = hw * esize / 16;
        g.q = odnn::cuda::fused_tiles(c, n * g.s, 1792, P, 0, 1024);
        const int64_t tiles = c * g.q, steps = (tiles + P - 1) / P;
        g.per_step = tiles % P == 0 && P % g.q == 0 ? P / g.q : 0;
        const int64_t nv = n * c * g.s;
        const double T = double(nv) * 16;
        const float tc = time_ms([&] { copyk<<<sms * 8, 256>>>(x, y, nv); });
        printf("%s: T %.0f MB, Q %lld, %lld steps of %lld channels; copy %.4f ms (%.2f TB/s, 2T)\n",
               esize == 4 ? "f32" : "bf16", T / 1e6, (long long)g.q, (long long)steps, (long long)g.per_step, tc,
               2 * T / tc / 1e9);
        for (int layout : {0, 1}) {
            if (layout == 1 && g.per_step == 0) continue;  // steps of whole channels only
            for (int sync : {0, 1}) {
                const float t = time_ms([&] { pattern<<<P, kThreads>>>(x, y, out, g, steps, layout, sync); });
                printf("  layout %s, sync %d: %.4f ms, %.0f%% of copy\n", layout ? "images" : "channels", sync, t,
                       100 * tc / t);
            }
        }
        CK(cudaGetLastError());
    }
    return 0;
}
