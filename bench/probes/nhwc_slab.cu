// Probe (not part of the library): how fast the GPU reads and re-reads a packed NHWC
// tensor a group of channels at a time, the memory pattern any fused NHWC batch norm
// would need (a channel's statistics need every row, so a fused kernel must read a
// slab of channels across all rows, then apply it from the L2 before it is evicted).
// rows x row bytes (1024: f32 C = 256; 512: bf16), 128x56x56 rows; groups of 16-128
// bytes of a row; mode 0 reads each group's slab once (the statistics); mode 1 reads
// step i and re-reads + writes step i - lag (a step = one of h parts of a slab), with
// no synchronisation, so it bounds any such kernel from above. Results:
// docs/PERFORMANCE.md. Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90a -o /tmp/nhwc_slab bench/probes/nhwc_slab.cu && /tmp/nhwc_slab

#include "probe_common.cuh"

__global__ void readk(const uint4* __restrict__ x, float* out, int64_t n) {
    float s = 0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint4 v = x[i];
        s += __uint_as_float(v.x) + __uint_as_float(v.w);
    }
    if (s == 12345.f) out[0] = s;
}
// rows x rowvec (16-byte vectors a row); groups of k vectors, each cut into h parts of the
// block's rows (a step = one part); mode 0: statistics reads only; 1: fused pattern (read
// step i, re-read + write step i - lag).
__global__ void slabk(const uint4* __restrict__ x, uint4* __restrict__ y, float* out, int64_t rows, int rowvec, int k,
                      int h, int lag, int mode) {
    const int ng = rowvec / k;
    const int P = gridDim.x, b = blockIdx.x;
    const int64_t r0 = rows * b / P, r1 = rows * (b + 1) / P;
    const int col = threadIdx.x % k, rstep = blockDim.x / k;
    const int steps = ng * h;
    float s = 0;
    for (int i = 0; i < steps + (mode ? lag : 0); ++i) {
        if (i < steps) {
            const int c = (i / h) * k + col, part = i % h;
            const int64_t a0 = r0 + (r1 - r0) * part / h, a1 = r0 + (r1 - r0) * (part + 1) / h;
#pragma unroll 4
            for (int64_t r = a0 + threadIdx.x / k; r < a1; r += rstep) {
                uint4 v = x[r * rowvec + c];
                s += __uint_as_float(v.x) + __uint_as_float(v.w);
            }
        }
        if (mode && i >= lag) {
            const int j = i - lag;
            const int c = (j / h) * k + col, part = j % h;
            const int64_t a0 = r0 + (r1 - r0) * part / h, a1 = r0 + (r1 - r0) * (part + 1) / h;
#pragma unroll 4
            for (int64_t r = a0 + threadIdx.x / k; r < a1; r += rstep) {
                uint4 v = __ldcs(x + r * rowvec + c);
                v.x ^= 1;
                __stcs(y + r * rowvec + c, v);
            }
        }
    }
    if (s == 12345.f) out[0] = s;
}
int main() {
    int sms;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const int64_t rows = 128LL * 3136;
    uint4 *x, *y;
    float* out;
    const size_t maxb = rows * 1024;
    CK(cudaMalloc(&x, maxb));
    CK(cudaMalloc(&y, maxb));
    CK(cudaMalloc(&out, 4));
    CK(cudaMemset(x, 0, maxb));
    CK(cudaMemset(y, 0, maxb));
    for (int rb : {1024, 512}) {
        const int rowvec = rb / 16;
        const int64_t n = rows * rowvec;
        const double T = double(n) * 16;
        float tc = time_ms([&] { copyk<<<sms * 8, 256>>>(x, y, n); });
        float tr = time_ms([&] { readk<<<sms * 8, 256>>>(x, out, n); });
        printf(
            "rowbytes %d T %.0f MB: copy %.4f ms (%.2f TB/s, 2T)  read %.4f ms (%.2f TB/s)  3-pass ideal at copy rate "
            "%.4f\n",
            rb, T / 1e6, tc, 2 * T / tc / 1e9, tr, T / tr / 1e9, tc * 1.5);
        for (int k : {1, 2, 4, 8}) {
            const int bpsm = 2;
            float ts = time_ms([&] { slabk<<<sms * bpsm, 256>>>(x, y, out, rows, rowvec, k, 1, 1, 0); });
            printf("  group %3d B (slab %.1f MB): stats-read %.4f ms (%.0f%% of read rate)\n", k * 16,
                   T / (rowvec / k) / 1e6, ts, 100 * tr / ts);
            for (int h : {1, 2, 4}) {
                printf("    h %d:", h);
                for (int lag : {1, 2, 3, 5}) {
                    if (lag > h + 1) continue;
                    float tf = time_ms([&] { slabk<<<sms * bpsm, 256>>>(x, y, out, rows, rowvec, k, h, lag, 1); });
                    printf("  lag %d %.4f ms (%.0f%% of copy, held %.1f MB)", lag, tf, 100 * tc / tf,
                           T / (rowvec / k) / h * (lag + 1) / 1e6);
                }
                printf("\n");
            }
        }
    }
    CK(cudaGetLastError());
    return 0;
}
