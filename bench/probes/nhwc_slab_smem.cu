// Probe (not part of the library): the best a fused NHWC batch-norm training forward
// could do holding each slab of channels on chip in shared memory and the L2 together.
// A slab is a 128-byte group of every row (64 bf16 or 32 f32 channels; 51 MB at
// 128x56x56 rows), more than the L2 alone holds (nhwc_slab.cu). One block an SM owns a
// run of rows; for each slab it reads its rows' groups (the first `smem rows` into shared
// memory, the rest left in the L2), sums them, publishes 128 partial sums, meets the
// grid at a barrier, sums every block's partials, then writes its rows out: the L2 part
// re-read first, then the shared part. No slab overlaps the next, so the traffic is 2T
// plus the L2 re-reads that miss. % of copy is the copy kernel's time over this one's.
// Results (H100: 71% of cudaMemcpy's copy at best): docs/PERFORMANCE.md.
// Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90a -o /tmp/nhwc_slab_smem bench/probes/nhwc_slab_smem.cu && /tmp/nhwc_slab_smem
#include <cooperative_groups.h>

#include "probe_common.cuh"

constexpr int kThreads = 512, kK = 8, kU = 8;  // threads; 16-byte vectors a group; loads in flight a thread
constexpr int kRowStep = kThreads / kK;        // rows a pass of the block

__device__ __forceinline__ float fsum(const uint4& v) {
    return __uint_as_float(v.x) + __uint_as_float(v.y) + __uint_as_float(v.z) + __uint_as_float(v.w);
}

__global__ void __launch_bounds__(kThreads, 1)
    slab_smem(const uint4* __restrict__ x, uint4* __restrict__ y, double* __restrict__ part, int64_t rows, int rowvec,
              int smem_rows) {
    extern __shared__ uint4 sh[];
    __shared__ double red[kThreads / 32][kK];
    __shared__ float coef[128];
    auto grid = cooperative_groups::this_grid();
    const int P = gridDim.x, b = blockIdx.x;
    const int64_t r0 = rows * b / P, nr = rows * (b + 1) / P - r0;
    const int hs = static_cast<int>(nr < smem_rows ? nr : smem_rows);
    const int col = threadIdx.x % kK, rl = threadIdx.x / kK, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int ng = rowvec / kK;
    for (int g = 0; g < ng; ++g) {
        const uint4* xg = x + r0 * rowvec + g * kK + col;
        uint4* yg = y + r0 * rowvec + g * kK + col;
        float s = 0.f;
        // Statistics: the shared part first, then the part left in the L2 (read last, so
        // the most recent there when the grid meets).
        for (int64_t r = rl; r < nr; r += kRowStep * kU) {
            uint4 v[kU];
#pragma unroll
            for (int u = 0; u < kU; ++u) {
                const int64_t rr = r + u * kRowStep;
                if (rr < nr) v[u] = __ldg(xg + rr * rowvec);
            }
#pragma unroll
            for (int u = 0; u < kU; ++u) {
                const int64_t rr = r + u * kRowStep;
                if (rr < nr) {
                    s += fsum(v[u]);
                    if (rr < hs) sh[rr * kK + col] = v[u];
                }
            }
        }
        double d = s;
        d += __shfl_xor_sync(~0u, d, 8);
        d += __shfl_xor_sync(~0u, d, 16);
        if (lane < kK) red[warp][lane] = d;
        __syncthreads();
        if (threadIdx.x < 128) {
            double a = 0;
            for (int w = 0; w < kThreads / 32; ++w) a += red[w][threadIdx.x % kK];
            part[(static_cast<int64_t>(g) * P + b) * 128 + threadIdx.x] = a * (1 + threadIdx.x / kK);
        }
        grid.sync();
        if (threadIdx.x < 128) {
            double a = 0;
            for (int p = 0; p < P; ++p) a += __ldcg(part + (static_cast<int64_t>(g) * P + p) * 128 + threadIdx.x);
            coef[threadIdx.x] = static_cast<float>(a * 1e-30);
        }
        __syncthreads();
        const float k0 = coef[col];
        auto apply = [&](uint4 v) {
            v.x = __float_as_uint(__uint_as_float(v.x) * 0.5f + k0);
            v.y = __float_as_uint(__uint_as_float(v.y) * 0.5f + k0);
            v.z = __float_as_uint(__uint_as_float(v.z) * 0.5f + k0);
            v.w = __float_as_uint(__uint_as_float(v.w) * 0.5f + k0);
            return v;
        };
        // Apply: the L2 part (re-read, last use), then the shared part.
        for (int64_t r = hs + rl; r < nr; r += kRowStep * kU) {
            uint4 v[kU];
#pragma unroll
            for (int u = 0; u < kU; ++u) {
                const int64_t rr = r + u * kRowStep;
                if (rr < nr) v[u] = __ldcs(xg + rr * rowvec);
            }
#pragma unroll
            for (int u = 0; u < kU; ++u) {
                const int64_t rr = r + u * kRowStep;
                if (rr < nr) __stcs(yg + rr * rowvec, apply(v[u]));
            }
        }
        for (int r = rl; r < hs; r += kRowStep) __stcs(yg + static_cast<int64_t>(r) * rowvec, apply(sh[r * kK + col]));
        __syncthreads();
    }
}

int main() {
    int sms, maxsh;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&maxsh, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
    const int64_t rows = 128LL * 3136;
    uint4 *x, *y;
    double* part;
    const size_t maxb = rows * 1024;
    CK(cudaMalloc(&x, maxb));
    CK(cudaMalloc(&y, maxb));
    CK(cudaMalloc(&part, size_t{8} * sms * 128 * sizeof(double)));
    CK(cudaMemset(x, 0, maxb));
    CK(cudaMemset(y, 0, maxb));
    const int static_sh = (kThreads / 32) * kK * 8 + 128 * 4;
    const int max_rows = (maxsh - static_sh - 1024) / (kK * 16);
    CK(cudaFuncSetAttribute(slab_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, max_rows * kK * 16));
    printf("%d SMs, %d KB shared a block at most: up to %d rows of a group a block (%lld rows a block)\n", sms,
           maxsh / 1024, max_rows, static_cast<long long>(rows / sms));
    for (int rb : {1024, 512}) {
        const int rowvec = rb / 16;
        const int64_t n = rows * rowvec;
        const double T = double(n) * 16;
        const float tc = time_ms([&] { copyk<<<sms * 8, 256>>>(x, y, n); });
        printf("row bytes %d, T %.0f MB: copy %.4f ms (%.2f TB/s over 2T)\n", rb, T / 1e6, tc, 2 * T / tc / 1e9);
        for (int sr : {0, max_rows / 2, max_rows * 3 / 4, max_rows}) {
            int64_t rows_arg = rows;
            void* args[] = {&x, &y, &part, &rows_arg, const_cast<int*>(&rowvec), &sr};
            const float t = time_ms([&] {
                cudaLaunchCooperativeKernel((void*)slab_smem, sms, kThreads, args, size_t(sr) * kK * 16, 0);
            });
            CK(cudaGetLastError());
            printf("  shared rows %4d (%.1f MB on chip a slab, %.1f MB left in the L2): %.4f ms, %.0f%% of copy\n", sr,
                   double(sms) * sr * 128 / 1e6, (double(rows) - double(sms) * sr) * 128 / 1e6, t, 100 * tc / t);
        }
    }
    CK(cudaGetLastError());
    return 0;
}
