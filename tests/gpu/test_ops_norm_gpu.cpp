// Batch normalization, pooling, dropout, LRN, divisive normalization and the spatial
// transformer on the CUDA backend, compared with the CPU backend on identical inputs:
// the case files of tests/ops_norm/cases (plus the GPU-sized ones there), run through
// the same runners as the CPU numerics tests.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "common/test_util.hpp"
#include "odnn/odnn.h"
#include "ops_norm/bn_runner.hpp"
#include "ops_norm/misc_runners.hpp"
#include "ops_norm/pool_runner.hpp"

#ifndef ODNN_OPS_NORM_CASES_DIR
#include <filesystem>
// The GPU tests' CMake does not pass the directory: find it from this file's path.
static const std::string kCasesDir =
    (std::filesystem::path(__FILE__).parent_path().parent_path() / "ops_norm" / "cases").string();
#define ODNN_OPS_NORM_CASES_DIR kCasesDir
#endif

namespace normtest {
namespace {

cudnnHandle_t make_handle(const char* backend) {
    setenv("ODNN_BACKEND", backend, 1);
    cudnnHandle_t h = nullptr;
    EXPECT_EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS) << odnn_test::last_error();
    setenv("ODNN_BACKEND", "cuda", 1);
    return h;
}

// Device copies of host tensors, made on first use.
class DeviceMemory final : public Memory {
public:
    ~DeviceMemory() override {
        for (auto& [t, p] : map_) cudaFree(p);
        for (void* p : blocks_) cudaFree(p);
    }
    void* ptr(Tensor& t) override {
        auto it = map_.find(&t);
        if (it != map_.end()) return it->second;
        void* p = nullptr;
        EXPECT_EQ(cudaMalloc(&p, t.bytes()), cudaSuccess);
        EXPECT_EQ(cudaMemcpy(p, t.data(), t.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
        map_[&t] = p;
        return p;
    }
    void push(Tensor& t) override {
        EXPECT_EQ(cudaMemcpy(ptr(t), t.data(), t.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    void pull(Tensor& t) override {
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        EXPECT_EQ(cudaMemcpy(t.data(), ptr(t), t.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    void* scratch(size_t bytes) override {
        if (bytes == 0) return nullptr;
        void* p = nullptr;
        EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess);
        EXPECT_EQ(cudaMemset(p, 0, bytes), cudaSuccess);
        blocks_.push_back(p);
        return p;
    }

private:
    std::map<Tensor*, void*> map_;
    std::vector<void*> blocks_;
};

struct Backends {
    cudnnHandle_t gpu = nullptr, cpu = nullptr;
    cudaStream_t stream = nullptr;
    Backends() {
        gpu = make_handle("cuda");
        cpu = make_handle("cpu");
        EXPECT_STREQ(odnnGetHandleBackend(gpu), "cuda");
        EXPECT_STREQ(odnnGetHandleBackend(cpu), "cpu");
        EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
        EXPECT_EQ(cudnnSetStream(gpu, stream), CUDNN_STATUS_SUCCESS);
    }
    ~Backends() {
        cudnnDestroy(gpu);
        cudnnDestroy(cpu);
        cudaStreamDestroy(stream);
    }
};

// The GPU computes in float for FLOAT / HALF / BFLOAT16 (double for DOUBLE) and
// reduces in another order: its results differ from the CPU's double-precision
// reference by a few units of the compute precision, relative to the output's size.
double gpu_rtol(cudnnDataType_t dt) {
    switch (dt) {
        case CUDNN_DATA_DOUBLE: return 1e-10;
        case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 3 * dt_eps(dt);
        default: return 3e-5;
    }
}

void expect_match(const Tensor& gpu, const Tensor& cpu, const char* what, double rtol_scale = 1.0) {
    const std::vector<double> g = gpu.values(), c = cpu.values();
    const double rtol = gpu_rtol(gpu.dt) * rtol_scale;
    NORMTEST_EXPECT_CLOSE(g, c, rtol, rtol * (max_abs(c) + 1e-30), what);
    // Bytes outside the view: as the CPU backend left them (both started equal).
    std::vector<unsigned char> cb = cpu.buf;
    EXPECT_EQ(gpu.changed_outside_view(cb), 0u) << what << ": bytes outside the view differ";
}

// ---- Batch normalization ----

class GpuBn : public ::testing::TestWithParam<Case> {};

TEST_P(GpuBn, MatchesCpu) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where() + "  (seed " + std::to_string(c.seed()) + ")");
    Backends b;
    BnData on_gpu, on_cpu;
    bn_setup(on_gpu, c);
    bn_setup(on_cpu, c);
    {
        DeviceMemory mem;
        bn_run(on_gpu, b.gpu, mem);
    }
    HostMemory host;
    bn_run(on_cpu, b.cpu, host);
    if (HasFatalFailure()) return;
    EXPECT_EQ(on_gpu.y->nan_count(), 0);
    expect_match(*on_gpu.y, *on_cpu.y, "y");
    expect_match(*on_gpu.smean, *on_cpu.smean, "saved mean", 10);
    expect_match(*on_gpu.sistd, *on_cpu.sistd, "saved inverse std", 10);
    expect_match(*on_gpu.rmean, *on_cpu.rmean, "running mean", 10);
    expect_match(*on_gpu.rvar, *on_cpu.rvar, "running variance", 10);
    if (on_cpu.api == "norm" || on_cpu.ops == 0) expect_match(*on_gpu.yinf, *on_cpu.yinf, "inference y");
    expect_match(*on_gpu.dx, *on_cpu.dx, "dx", 10);
    expect_match(*on_gpu.dscale, *on_cpu.dscale, "dscale", 10);
    expect_match(*on_gpu.dbias, *on_cpu.dbias, "dbias", 10);
    expect_match(*on_gpu.dx2, *on_cpu.dx2, "dx (recomputed statistics)", 10);
    expect_match(*on_gpu.dscale2, *on_cpu.dscale2, "dscale (recomputed statistics)", 10);
    if (on_cpu.ops == 2) expect_match(*on_gpu.dz, *on_cpu.dz, "dz");
}

std::vector<Case> gpu_bn_cases() {
    std::vector<Case> v = load_cases(ODNN_OPS_NORM_CASES_DIR, "batchnorm.txt", "bn");
    for (const Case& c : load_cases(ODNN_OPS_NORM_CASES_DIR, "gpu_sized.txt", "bn")) v.push_back(c);
    return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuBn, ::testing::ValuesIn(gpu_bn_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name(); });

// ---- Pooling ----

class GpuPool : public ::testing::TestWithParam<Case> {};

TEST_P(GpuPool, MatchesCpu) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where() + "  (seed " + std::to_string(c.seed()) + ")");
    Backends b;
    PoolData on_gpu, on_cpu;
    pool_setup(on_gpu, c);
    pool_setup(on_cpu, c);
    {
        DeviceMemory mem;
        pool_run(on_gpu, b.gpu, mem);
    }
    HostMemory host;
    pool_run(on_cpu, b.cpu, host);
    if (HasFatalFailure()) return;
    expect_match(*on_gpu.y, *on_cpu.y, "y");
    if (on_gpu.dx) expect_match(*on_gpu.dx, *on_cpu.dx, "dx", 10);
}

std::vector<Case> gpu_pool_cases() {
    std::vector<Case> v = load_cases(ODNN_OPS_NORM_CASES_DIR, "pooling.txt", "pool");
    for (const Case& c : load_cases(ODNN_OPS_NORM_CASES_DIR, "gpu_sized.txt", "pool")) v.push_back(c);
    return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuPool, ::testing::ValuesIn(gpu_pool_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name(); });

// ---- Dropout: masks, outputs and the advanced offset bit-identical to the CPU ----

class GpuDropout : public ::testing::TestWithParam<Case> {};

TEST_P(GpuDropout, BitIdenticalToCpu) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where());
    Backends b;
    DropData on_gpu, on_cpu;
    drop_setup(on_gpu, c);
    drop_setup(on_cpu, c);
    {
        DeviceMemory mem;
        drop_run(on_gpu, b.gpu, mem);
    }
    HostMemory host;
    drop_run(on_cpu, b.cpu, host);
    if (HasFatalFailure()) return;
    ASSERT_EQ(on_gpu.reserve_runs.size(), on_cpu.reserve_runs.size());
    for (size_t r = 0; r < on_cpu.reserve_runs.size(); ++r) {
        EXPECT_TRUE(on_gpu.reserve_runs[r] == on_cpu.reserve_runs[r]) << "mask of call " << r;
        EXPECT_TRUE(on_gpu.y_runs[r] == on_cpu.y_runs[r]) << "y of call " << r;
    }
    EXPECT_TRUE(on_gpu.grad().buf == on_cpu.grad().buf) << "dx";
    EXPECT_EQ(on_gpu.offset_after, on_cpu.offset_after);
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuDropout,
                         ::testing::ValuesIn(load_cases(ODNN_OPS_NORM_CASES_DIR, "dropout.txt", "drop")),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name(); });

// ---- LRN and divisive normalization ----

class GpuLrn : public ::testing::TestWithParam<Case> {};

TEST_P(GpuLrn, MatchesCpu) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where());
    Backends b;
    LrnData on_gpu, on_cpu;
    lrn_setup(on_gpu, c);
    lrn_setup(on_cpu, c);
    {
        DeviceMemory mem;
        lrn_run(on_gpu, b.gpu, mem);
    }
    HostMemory host;
    lrn_run(on_cpu, b.cpu, host);
    if (HasFatalFailure()) return;
    expect_match(*on_gpu.y, *on_cpu.y, "y");
    expect_match(*on_gpu.dx, *on_cpu.dx, "dx", 10);
    if (on_cpu.dmeans) expect_match(*on_gpu.dmeans, *on_cpu.dmeans, "dMeans", 10);
}

std::vector<Case> gpu_lrn_cases() {
    std::vector<Case> v = load_cases(ODNN_OPS_NORM_CASES_DIR, "lrn.txt", "lrn");
    for (const Case& c : load_cases(ODNN_OPS_NORM_CASES_DIR, "lrn.txt", "divnorm")) v.push_back(c);
    for (const char* op : {"lrn", "divnorm"})
        for (const Case& c : load_cases(ODNN_OPS_NORM_CASES_DIR, "gpu_sized.txt", op)) v.push_back(c);
    return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuLrn, ::testing::ValuesIn(gpu_lrn_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name(); });

// ---- Spatial transformer ----

class GpuStf : public ::testing::TestWithParam<Case> {};

TEST_P(GpuStf, MatchesCpu) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where());
    Backends b;
    StfData on_gpu, on_cpu;
    stf_setup(on_gpu, c);
    stf_setup(on_cpu, c);
    {
        DeviceMemory mem;
        stf_run(on_gpu, b.gpu, mem);
    }
    HostMemory host;
    stf_run(on_cpu, b.cpu, host);
    if (HasFatalFailure()) return;
    expect_match(*on_gpu.grid, *on_cpu.grid, "grid");
    expect_match(*on_gpu.y, *on_cpu.y, "y");
    expect_match(*on_gpu.dx, *on_cpu.dx, "dx", 10);
    expect_match(*on_gpu.dgrid, *on_cpu.dgrid, "dgrid", 10);
    expect_match(*on_gpu.dtheta, *on_cpu.dtheta, "dtheta", 10);
}

std::vector<Case> gpu_stf_cases() {
    std::vector<Case> v = load_cases(ODNN_OPS_NORM_CASES_DIR, "spatial_tf.txt", "stf");
    for (const Case& c : load_cases(ODNN_OPS_NORM_CASES_DIR, "gpu_sized.txt", "stf")) v.push_back(c);
    return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuStf, ::testing::ValuesIn(gpu_stf_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name(); });

}  // namespace
}  // namespace normtest
