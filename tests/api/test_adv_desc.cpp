// Adv-library descriptors against odnn alone: what NVIDIA's library cannot be asked
// (NULL arguments it crashes on, garbage and destroyed descriptors), round trips, and
// the RNN weight-space layout (sizes and offsets read from NVIDIA's cuDNN 9.19 on an
// H200, plus the contiguity PyTorch asserts) and temp-space sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/test_util.hpp"

namespace {

// A pointer that was never a descriptor (points at a local object).
template <class T>
T garbage() {
    static unsigned char block[256];
    std::memset(block, 0xA5, sizeof block);
    return reinterpret_cast<T>(block);
}

class Handle {
public:
    Handle() { EXPECT_EQ(cudnnCreate(&h_), CUDNN_STATUS_SUCCESS); }
    ~Handle() { cudnnDestroy(h_); }
    cudnnHandle_t get() const { return h_; }

private:
    cudnnHandle_t h_ = nullptr;
};

// ---------------------------------------------------------------------------
// CTC loss
// ---------------------------------------------------------------------------

TEST(CtcLossDesc, RoundTripsThroughEveryVersion) {
    cudnnCTCLossDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateCTCLossDescriptor(&d));
    cudnnDataType_t ct = CUDNN_DATA_HALF;
    cudnnLossNormalizationMode_t nm = CUDNN_LOSS_NORMALIZATION_SOFTMAX;
    cudnnNanPropagation_t gm = CUDNN_PROPAGATE_NAN;
    cudnnCTCGradMode_t cg = CUDNN_CTC_SKIP_OOB_GRADIENTS;
    int ml = -1;
    ASSERT_OK(cudnnGetCTCLossDescriptor_v8(d, &ct, &nm, &gm, &ml));  // defaults
    EXPECT_EQ(ct, CUDNN_DATA_FLOAT);
    EXPECT_EQ(nm, CUDNN_LOSS_NORMALIZATION_NONE);
    EXPECT_EQ(gm, CUDNN_NOT_PROPAGATE_NAN);
    EXPECT_EQ(ml, 0);

    ASSERT_OK(cudnnSetCTCLossDescriptor_v9(d, CUDNN_DATA_DOUBLE, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                           CUDNN_CTC_SKIP_OOB_GRADIENTS, 255));
    ASSERT_OK(cudnnGetCTCLossDescriptor_v9(d, &ct, &nm, &cg, &ml));
    EXPECT_EQ(ct, CUDNN_DATA_DOUBLE);
    EXPECT_EQ(nm, CUDNN_LOSS_NORMALIZATION_SOFTMAX);
    EXPECT_EQ(cg, CUDNN_CTC_SKIP_OOB_GRADIENTS);
    EXPECT_EQ(ml, 255);
    ASSERT_OK(cudnnGetCTCLossDescriptorEx(d, &ct, &nm, &gm));
    EXPECT_EQ(gm, CUDNN_PROPAGATE_NAN);  // SKIP_OOB reads as PROPAGATE_NAN

    // The v7 setter resets what it does not take; a failed set changes nothing.
    ASSERT_OK(cudnnSetCTCLossDescriptor(d, CUDNN_DATA_FLOAT));
    ASSERT_OK(cudnnGetCTCLossDescriptor_v8(d, &ct, &nm, &gm, &ml));
    EXPECT_EQ(nm, CUDNN_LOSS_NORMALIZATION_NONE);
    EXPECT_EQ(ml, 0);
    ASSERT_OK(
        cudnnSetCTCLossDescriptor_v8(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_PROPAGATE_NAN, 17));
    EXPECT_STATUS(
        CUDNN_STATUS_NOT_SUPPORTED,
        cudnnSetCTCLossDescriptor_v8(d, CUDNN_DATA_HALF, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_NOT_PROPAGATE_NAN, 3));
    ASSERT_OK(cudnnGetCTCLossDescriptor_v9(d, &ct, &nm, &cg, &ml));
    EXPECT_EQ(ct, CUDNN_DATA_FLOAT);
    EXPECT_EQ(nm, CUDNN_LOSS_NORMALIZATION_SOFTMAX);
    EXPECT_EQ(cg, CUDNN_CTC_SKIP_OOB_GRADIENTS);
    EXPECT_EQ(ml, 17);
    // Getters skip NULL outputs.
    ml = -1;
    ASSERT_OK(cudnnGetCTCLossDescriptor_v9(d, nullptr, nullptr, nullptr, &ml));
    EXPECT_EQ(ml, 17);
    ASSERT_OK(cudnnDestroyCTCLossDescriptor(d));
}

TEST(CtcLossDesc, BadDescriptorsGiveBadParam) {
    cudnnCTCLossDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateCTCLossDescriptor(&dead));
    ASSERT_OK(cudnnDestroyCTCLossDescriptor(dead));
    cudnnRNNDescriptor_t other = nullptr;
    ASSERT_OK(cudnnCreateRNNDescriptor(&other));
    const cudnnCTCLossDescriptor_t bad[] = {nullptr, garbage<cudnnCTCLossDescriptor_t>(), dead,
                                            reinterpret_cast<cudnnCTCLossDescriptor_t>(other)};
    cudnnDataType_t ct;
    cudnnLossNormalizationMode_t nm;
    cudnnNanPropagation_t gm;
    cudnnCTCGradMode_t cg;
    int ml;
    for (cudnnCTCLossDescriptor_t d : bad) {
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnSetCTCLossDescriptor(d, CUDNN_DATA_FLOAT));
        EXPECT_STATUS(
            CUDNN_STATUS_BAD_PARAM,
            cudnnSetCTCLossDescriptorEx(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_PROPAGATE_NAN));
        EXPECT_STATUS(
            CUDNN_STATUS_BAD_PARAM,
            cudnnSetCTCLossDescriptor_v8(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_PROPAGATE_NAN, 1));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                      cudnnSetCTCLossDescriptor_v9(d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE,
                                                   CUDNN_CTC_ZERO_OOB_GRADIENTS, 1));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetCTCLossDescriptor(d, &ct));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetCTCLossDescriptorEx(d, &ct, &nm, &gm));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetCTCLossDescriptor_v8(d, &ct, &nm, &gm, &ml));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetCTCLossDescriptor_v9(d, &ct, &nm, &cg, &ml));
        if (d) EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDestroyCTCLossDescriptor(d));
    }
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnDestroyCTCLossDescriptor(nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnCreateCTCLossDescriptor(nullptr));
    ASSERT_OK(cudnnDestroyRNNDescriptor(other));
}

// ---------------------------------------------------------------------------
// RNN descriptor
// ---------------------------------------------------------------------------

struct Rnn {
    cudnnRNNAlgo_t algo = CUDNN_RNN_ALGO_STANDARD;
    cudnnRNNMode_t cell = CUDNN_LSTM;
    cudnnRNNBiasMode_t bias = CUDNN_RNN_DOUBLE_BIAS;
    cudnnDirectionMode_t dir = CUDNN_UNIDIRECTIONAL;
    cudnnRNNInputMode_t in_mode = CUDNN_LINEAR_INPUT;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT, mp = CUDNN_DATA_FLOAT;
    int in = 10, hid = 20, proj = 20, layers = 2;
    cudnnDropoutDescriptor_t drop = nullptr;
    unsigned aux = 0;

    cudnnStatus_t set(cudnnRNNDescriptor_t d) const {
        return cudnnSetRNNDescriptor_v8(d, algo, cell, bias, dir, in_mode, dt, mp, CUDNN_DEFAULT_MATH, in, hid, proj,
                                        layers, drop, aux);
    }
};

class RnnDesc {
public:
    RnnDesc() { EXPECT_EQ(cudnnCreateRNNDescriptor(&d_), CUDNN_STATUS_SUCCESS); }
    ~RnnDesc() { cudnnDestroyRNNDescriptor(d_); }
    cudnnRNNDescriptor_t get() const { return d_; }

private:
    cudnnRNNDescriptor_t d_ = nullptr;
};

TEST(RnnDescV8, RoundTripAndNotInitialized) {
    RnnDesc d;
    cudnnRNNAlgo_t algo;
    cudnnRNNMode_t cell;
    cudnnRNNBiasMode_t bias;
    cudnnDirectionMode_t dir;
    cudnnRNNInputMode_t im;
    cudnnDataType_t dt, mp;
    cudnnMathType_t mt;
    int32_t in, hid, proj, nl;
    cudnnDropoutDescriptor_t drop;
    uint32_t aux;
    EXPECT_STATUS(CUDNN_STATUS_NOT_INITIALIZED, cudnnGetRNNDescriptor_v8(d.get(), &algo, &cell, &bias, &dir, &im, &dt,
                                                                         &mp, &mt, &in, &hid, &proj, &nl, &drop, &aux));
    Rnn r;
    r.cell = CUDNN_GRU;
    r.dir = CUDNN_BIDIRECTIONAL;
    r.dt = CUDNN_DATA_HALF;
    r.aux = CUDNN_RNN_PADDED_IO_ENABLED;
    ASSERT_OK(r.set(d.get()));
    ASSERT_OK(cudnnGetRNNDescriptor_v8(d.get(), &algo, &cell, &bias, &dir, &im, &dt, &mp, &mt, &in, &hid, &proj, &nl,
                                       &drop, &aux));
    EXPECT_EQ(cell, CUDNN_GRU);
    EXPECT_EQ(dir, CUDNN_BIDIRECTIONAL);
    EXPECT_EQ(dt, CUDNN_DATA_HALF);
    EXPECT_EQ(mp, CUDNN_DATA_FLOAT);
    EXPECT_EQ(in, 10);
    EXPECT_EQ(hid, 20);
    EXPECT_EQ(proj, 20);
    EXPECT_EQ(nl, 2);
    EXPECT_EQ(drop, nullptr);
    EXPECT_EQ(aux, CUDNN_RNN_PADDED_IO_ENABLED);
    // A failed set leaves everything as it was.
    Rnn bad = r;
    bad.hid = 0;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, bad.set(d.get()));
    bad = r;
    bad.proj = 10;  // GRU has no projection
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, bad.set(d.get()));
    ASSERT_OK(cudnnGetRNNDescriptor_v8(d.get(), nullptr, &cell, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                       nullptr, &hid, &proj, nullptr, nullptr, nullptr));
    EXPECT_EQ(cell, CUDNN_GRU);
    EXPECT_EQ(hid, 20);
    EXPECT_EQ(proj, 20);
}

TEST(RnnDescV8, ClipRoundTripAndReset) {
    RnnDesc d;
    cudnnRNNClipMode_t cm;
    cudnnNanPropagation_t np;
    double l = 1, r = 1;
    ASSERT_OK(cudnnRNNGetClip_v8(d.get(), &cm, &np, &l, &r));
    EXPECT_EQ(cm, CUDNN_RNN_CLIP_NONE);
    EXPECT_EQ(l, 0.0);
    ASSERT_OK(cudnnRNNSetClip_v9(d.get(), CUDNN_RNN_CLIP_MINMAX, -2.5, 3.5));
    ASSERT_OK(cudnnRNNGetClip_v8(d.get(), &cm, &np, &l, &r));
    EXPECT_EQ(cm, CUDNN_RNN_CLIP_MINMAX);
    EXPECT_EQ(np, CUDNN_PROPAGATE_NAN);
    EXPECT_EQ(l, -2.5);
    EXPECT_EQ(r, 3.5);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnRNNSetClip_v9(d.get(), CUDNN_RNN_CLIP_MINMAX, 1.0, -1.0));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnRNNSetClip_v8(d.get(), CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, NAN, 1));
    ASSERT_OK(cudnnRNNGetClip_v9(d.get(), &cm, &l, &r));
    EXPECT_EQ(l, -2.5);
    ASSERT_OK(Rnn().set(d.get()));  // a successful set resets the clip
    ASSERT_OK(cudnnRNNGetClip_v9(d.get(), &cm, &l, &r));
    EXPECT_EQ(cm, CUDNN_RNN_CLIP_NONE);
    EXPECT_EQ(r, 0.0);
}

TEST(RnnDescV8, DropoutMustBeADropoutDescriptor) {
    RnnDesc d;
    Rnn r;
    r.drop = garbage<cudnnDropoutDescriptor_t>();
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, r.set(d.get()));
    cudnnTensorDescriptor_t t = nullptr;
    ASSERT_OK(cudnnCreateTensorDescriptor(&t));
    r.drop = reinterpret_cast<cudnnDropoutDescriptor_t>(t);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, r.set(d.get()));
    ASSERT_OK(cudnnDestroyTensorDescriptor(t));
    cudnnDropoutDescriptor_t dd = nullptr;
    if (cudnnCreateDropoutDescriptor(&dd) == CUDNN_STATUS_SUCCESS) {
        r.drop = dd;
        ASSERT_OK(r.set(d.get()));
        cudnnDropoutDescriptor_t back = nullptr;
        ASSERT_OK(cudnnGetRNNDescriptor_v8(d.get(), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                           nullptr, nullptr, nullptr, nullptr, nullptr, &back, nullptr));
        EXPECT_EQ(back, dd);
        ASSERT_OK(cudnnDestroyDropoutDescriptor(dd));
    }
}

TEST(RnnDescV8, BadDescriptorsGiveBadParam) {
    Handle h;
    cudnnRNNDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateRNNDescriptor(&dead));
    ASSERT_OK(cudnnDestroyRNNDescriptor(dead));
    cudnnCTCLossDescriptor_t other = nullptr;
    ASSERT_OK(cudnnCreateCTCLossDescriptor(&other));
    cudnnRNNDataDescriptor_t x = nullptr;
    ASSERT_OK(cudnnCreateRNNDataDescriptor(&x));
    const int sl[3] = {5, 5, 5};
    ASSERT_OK(cudnnSetRNNDataDescriptor(x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 5, 3, 10, sl,
                                        nullptr));
    const cudnnRNNDescriptor_t bad[] = {nullptr, garbage<cudnnRNNDescriptor_t>(), dead,
                                        reinterpret_cast<cudnnRNNDescriptor_t>(other)};
    cudnnRNNClipMode_t cm;
    double l, r;
    size_t ws, rs;
    void* a;
    for (cudnnRNNDescriptor_t d : bad) {
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, Rnn().set(d));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                      cudnnGetRNNDescriptor_v8(d, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                               nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnRNNSetClip_v8(d, CUDNN_RNN_CLIP_NONE, CUDNN_PROPAGATE_NAN, 0, 0));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnRNNSetClip_v9(d, CUDNN_RNN_CLIP_NONE, 0, 0));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnRNNGetClip_v8(d, &cm, nullptr, &l, &r));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnRNNGetClip_v9(d, &cm, &l, &r));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetRNNWeightSpaceSize(h.get(), d, &ws));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                      cudnnGetRNNWeightParams(h.get(), d, 0, 1 << 20, nullptr, 0, nullptr, &a, nullptr, nullptr));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                      cudnnGetRNNTempSpaceSizes(h.get(), d, CUDNN_FWD_MODE_TRAINING, x, &ws, &rs));
        if (d) EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDestroyRNNDescriptor(d));
    }
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnDestroyRNNDescriptor(nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnCreateRNNDescriptor(nullptr));
    // Bad handles and bad data descriptors in the size queries.
    RnnDesc d;
    ASSERT_OK(Rnn().set(d.get()));
    const cudnnHandle_t bad_handles[] = {nullptr, garbage<cudnnHandle_t>()};
    for (cudnnHandle_t bh : bad_handles) {
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetRNNWeightSpaceSize(bh, d.get(), &ws));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                      cudnnGetRNNWeightParams(bh, d.get(), 0, 1 << 20, nullptr, 0, nullptr, &a, nullptr, nullptr));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                      cudnnGetRNNTempSpaceSizes(bh, d.get(), CUDNN_FWD_MODE_TRAINING, x, &ws, &rs));
    }
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetRNNWeightSpaceSize(h.get(), d.get(), nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNTempSpaceSizes(h.get(), d.get(), CUDNN_FWD_MODE_TRAINING, nullptr, &ws, &rs));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetRNNTempSpaceSizes(h.get(), d.get(), CUDNN_FWD_MODE_TRAINING,
                                                                    garbage<cudnnRNNDataDescriptor_t>(), &ws, &rs));
    // A descriptor without an address to return it with (NVIDIA's library crashes).
    cudnnTensorDescriptor_t m = nullptr;
    ASSERT_OK(cudnnCreateTensorDescriptor(&m));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNWeightParams(h.get(), d.get(), 0, 1 << 20, nullptr, 0, m, nullptr, nullptr, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNWeightParams(h.get(), d.get(), 0, 1 << 20, nullptr, 0, nullptr, nullptr, m, nullptr));
    // ... and an address pointer without a descriptor (as in cuDNN).
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNWeightParams(h.get(), d.get(), 0, 1 << 20, nullptr, 0, nullptr, &a, nullptr, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNWeightParams(h.get(), d.get(), 0, 1 << 20, nullptr, 0, nullptr, nullptr, nullptr, &a));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNWeightParams(h.get(), d.get(), 0, 1 << 20, nullptr, 0, garbage<cudnnTensorDescriptor_t>(),
                                          &a, nullptr, nullptr));
    ASSERT_OK(cudnnDestroyTensorDescriptor(m));
    // An unset RNN descriptor has no weights and needs no temp space (cuDNN answers
    // SUCCESS too), but its weights cannot be located.
    RnnDesc unset;
    ws = rs = 7;
    ASSERT_OK(cudnnGetRNNWeightSpaceSize(h.get(), unset.get(), &ws));
    EXPECT_EQ(ws, 0u);
    ws = 7;
    ASSERT_OK(cudnnGetRNNTempSpaceSizes(h.get(), unset.get(), CUDNN_FWD_MODE_TRAINING, x, &ws, &rs));
    EXPECT_EQ(ws, 0u);
    EXPECT_EQ(rs, 0u);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetRNNWeightParams(h.get(), unset.get(), 0, 1 << 20, nullptr, 0, nullptr,
                                                                  nullptr, nullptr, nullptr));
    ASSERT_OK(cudnnDestroyRNNDataDescriptor(x));
    ASSERT_OK(cudnnDestroyCTCLossDescriptor(other));
}

// Sizes and offsets NVIDIA's cuDNN 9.19 reported on an H200 (float unless noted).
TEST(RnnWeightSpace, MatchesNvidiasSizes) {
    Handle h;
    struct Case {
        cudnnRNNMode_t cell;
        cudnnRNNBiasMode_t bias;
        cudnnDirectionMode_t dir;
        cudnnRNNInputMode_t im;
        cudnnDataType_t dt;
        int in, hid, proj, layers;
        size_t bytes;
    };
    const Case cases[] = {
        {CUDNN_RNN_RELU, CUDNN_RNN_NO_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, 10, 20, 20, 2,
         5600},
        {CUDNN_RNN_RELU, CUDNN_RNN_NO_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_SKIP_INPUT, CUDNN_DATA_FLOAT, 10, 20, 20, 2,
         4800},
        {CUDNN_RNN_RELU, CUDNN_RNN_NO_BIAS, CUDNN_BIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, 10, 20, 20, 2,
         14400},
        {CUDNN_RNN_TANH, CUDNN_RNN_SINGLE_INP_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, 10, 20,
         20, 2, 5760},
        {CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, 10, 20, 20, 2,
         23680},
        {CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_SKIP_INPUT, CUDNN_DATA_FLOAT, 10, 20, 20, 2,
         20480},
        {CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_BIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, 10, 20, 20, 2,
         60160},
        {CUDNN_LSTM, CUDNN_RNN_SINGLE_REC_BIAS, CUDNN_BIDIRECTIONAL, CUDNN_SKIP_INPUT, CUDNN_DATA_FLOAT, 10, 20, 20, 2,
         52480},
        {CUDNN_LSTM, CUDNN_RNN_NO_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, 10, 20, 7, 1, 6000},
        {CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_BIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, 10, 20, 7, 3,
         44960},
        {CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_BIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, 1000, 1024, 20,
         4, 40239104},
        {CUDNN_GRU, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, 10, 20, 20, 2,
         17760},
        {CUDNN_GRU, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_SKIP_INPUT, CUDNN_DATA_FLOAT, 30, 20, 20, 2,
         15360},
        {CUDNN_GRU, CUDNN_RNN_DOUBLE_BIAS, CUDNN_BIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_DOUBLE, 10, 20, 20, 2,
         90240},
        {CUDNN_GRU, CUDNN_RNN_DOUBLE_BIAS, CUDNN_BIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_HALF, 10, 20, 20, 2,
         22560},
        {CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_BIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_BFLOAT16, 10, 20, 20, 2,
         30080},
        {CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, 1, 1, 1, 1, 64},
    };
    for (const Case& c : cases) {
        RnnDesc d;
        Rnn r;
        r.cell = c.cell;
        r.bias = c.bias;
        r.dir = c.dir;
        r.in_mode = c.im;
        r.dt = c.dt;
        r.mp = c.dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
        r.in = c.in;
        r.hid = c.hid;
        r.proj = c.proj;
        r.layers = c.layers;
        ASSERT_OK(r.set(d.get()));
        size_t bytes = 0;
        ASSERT_OK(cudnnGetRNNWeightSpaceSize(h.get(), d.get(), &bytes));
        EXPECT_EQ(bytes, c.bytes) << "cell " << c.cell << " bias " << c.bias << " dir " << c.dir << " in " << c.in
                                  << " proj " << c.proj << " layers " << c.layers << " dt " << c.dt;
    }
}

struct Region {
    int64_t offset;  // bytes
    int64_t bytes;
    int rows, cols;
    bool present;
};

Region region(cudnnHandle_t h, cudnnRNNDescriptor_t d, size_t wsize, int p, int id, bool bias) {
    cudnnTensorDescriptor_t t = nullptr;
    EXPECT_EQ(cudnnCreateTensorDescriptor(&t), CUDNN_STATUS_SUCCESS);
    char* const base = reinterpret_cast<char*>(uintptr_t{0x10000});
    void* addr = reinterpret_cast<void*>(uintptr_t{1});
    const cudnnStatus_t s = bias ? cudnnGetRNNWeightParams(h, d, p, wsize, base, id, nullptr, nullptr, t, &addr)
                                 : cudnnGetRNNWeightParams(h, d, p, wsize, base, id, t, &addr, nullptr, nullptr);
    EXPECT_EQ(s, CUDNN_STATUS_SUCCESS) << odnn_test::last_error();
    Region r{0, 0, 0, 0, addr != nullptr};
    if (r.present) {
        cudnnDataType_t dt;
        int nb = 0, dims[3] = {}, strides[3] = {};
        EXPECT_EQ(cudnnGetTensorNdDescriptor(t, 3, &dt, &nb, dims, strides), CUDNN_STATUS_SUCCESS);
        EXPECT_EQ(nb, 3);
        EXPECT_EQ(dims[0], 1);
        EXPECT_EQ(strides[0], dims[1] * dims[2]);
        EXPECT_EQ(strides[1], dims[2]);
        EXPECT_EQ(strides[2], 1);
        size_t es = 0;
        EXPECT_EQ(cudnnGetTensorSizeInBytes(t, &es), CUDNN_STATUS_SUCCESS);
        r.offset = static_cast<char*>(addr) - base;
        r.bytes = static_cast<int64_t>(es);
        r.rows = dims[1];
        r.cols = dims[2];
    }
    cudnnDestroyTensorDescriptor(t);
    return r;
}

// The offsets of one configuration, as NVIDIA's library reported them.
TEST(RnnWeightSpace, MatchesNvidiasOffsets) {
    Handle h;
    RnnDesc d;
    Rnn r;
    r.dir = CUDNN_BIDIRECTIONAL;
    ASSERT_OK(r.set(d.get()));
    size_t w = 0;
    ASSERT_OK(cudnnGetRNNWeightSpaceSize(h.get(), d.get(), &w));
    ASSERT_EQ(w, 60160u);
    struct Expect {
        int p, id;
        int64_t m, b;
        int rows, cols;
    };
    const Expect ex[] = {{0, 0, 0, 57600, 20, 10},     {0, 3, 2400, 57840, 20, 10},  {0, 4, 3200, 57920, 20, 20},
                         {0, 7, 8000, 58160, 20, 20},  {1, 0, 9600, 58240, 20, 10},  {1, 4, 12800, 58560, 20, 20},
                         {2, 0, 19200, 58880, 20, 40}, {2, 3, 28800, 59120, 20, 40}, {2, 4, 32000, 59200, 20, 20},
                         {3, 0, 38400, 59520, 20, 40}, {3, 7, 56000, 60080, 20, 20}};
    for (const Expect& e : ex) {
        const Region m = region(h.get(), d.get(), w, e.p, e.id, false);
        const Region b = region(h.get(), d.get(), w, e.p, e.id, true);
        EXPECT_EQ(m.offset, e.m) << e.p << "/" << e.id;
        EXPECT_EQ(b.offset, e.b) << e.p << "/" << e.id;
        EXPECT_EQ(m.rows, e.rows);
        EXPECT_EQ(m.cols, e.cols);
        EXPECT_EQ(b.rows, 20);
        EXPECT_EQ(b.cols, 1);
    }
    // linLayerID 8 is the projection slot: nothing without a projection.
    EXPECT_FALSE(region(h.get(), d.get(), w, 0, 8, false).present);
    EXPECT_FALSE(region(h.get(), d.get(), w, 0, 8, true).present);
    // With a projection (LSTM, proj 7 < hidden 20): R is hidden x proj, P is proj x hidden.
    RnnDesc dp;
    Rnn rp;
    rp.bias = CUDNN_RNN_NO_BIAS;
    rp.proj = 7;
    rp.layers = 1;
    ASSERT_OK(rp.set(dp.get()));
    ASSERT_OK(cudnnGetRNNWeightSpaceSize(h.get(), dp.get(), &w));
    const Region rm = region(h.get(), dp.get(), w, 0, 5, false);
    EXPECT_EQ(rm.offset, 3760);
    EXPECT_EQ(rm.rows, 20);
    EXPECT_EQ(rm.cols, 7);
    const Region pm = region(h.get(), dp.get(), w, 0, 8, false);
    EXPECT_EQ(pm.offset, 5440);
    EXPECT_EQ(pm.rows, 7);
    EXPECT_EQ(pm.cols, 20);
}

// Every region is inside the space, none overlap, together they fill it, and each
// half of the gate matrices / biases is contiguous in linLayerID order (what
// PyTorch's RNN.cpp asserts when it views the buffer as w_ih, w_hh, b_ih, b_hh).
TEST(RnnWeightSpace, RegionsTileTheSpaceAndHalvesAreContiguous) {
    Handle h;
    for (cudnnRNNMode_t cell : {CUDNN_RNN_RELU, CUDNN_RNN_TANH, CUDNN_LSTM, CUDNN_GRU})
        for (cudnnRNNBiasMode_t bias :
             {CUDNN_RNN_NO_BIAS, CUDNN_RNN_SINGLE_INP_BIAS, CUDNN_RNN_DOUBLE_BIAS, CUDNN_RNN_SINGLE_REC_BIAS})
            for (cudnnDirectionMode_t dir : {CUDNN_UNIDIRECTIONAL, CUDNN_BIDIRECTIONAL})
                for (cudnnRNNInputMode_t im : {CUDNN_LINEAR_INPUT, CUDNN_SKIP_INPUT})
                    for (int proj : {20, 7}) {
                        if (proj != 20 && cell != CUDNN_LSTM) continue;
                        RnnDesc d;
                        Rnn r;
                        r.cell = cell;
                        r.bias = bias;
                        r.dir = dir;
                        r.in_mode = im;
                        r.proj = proj;
                        r.layers = 3;
                        r.dt = CUDNN_DATA_HALF;
                        ASSERT_OK(r.set(d.get()));
                        size_t w = 0;
                        ASSERT_OK(cudnnGetRNNWeightSpaceSize(h.get(), d.get(), &w));
                        const int gates = cell == CUDNN_LSTM ? 4 : cell == CUDNN_GRU ? 3 : 1;
                        const int pseudo = r.layers * (dir == CUDNN_BIDIRECTIONAL ? 2 : 1);
                        std::vector<std::pair<int64_t, int64_t>> all;
                        for (int p = 0; p < pseudo; ++p) {
                            for (bool bias_half : {false, true})
                                for (int half = 0; half < 2; ++half) {
                                    int64_t next = -1;
                                    for (int g = 0; g < gates; ++g) {
                                        const Region x = region(h.get(), d.get(), w, p, half * gates + g, bias_half);
                                        if (!x.present) continue;
                                        if (next >= 0)
                                            EXPECT_EQ(x.offset, next) << "pl " << p << " id " << half * gates + g;
                                        next = x.offset + x.bytes;
                                        all.emplace_back(x.offset, x.bytes);
                                    }
                                }
                            const Region pm = region(h.get(), d.get(), w, p, 2 * gates, false);
                            EXPECT_EQ(pm.present, cell == CUDNN_LSTM && proj < r.hid);
                            if (pm.present) all.emplace_back(pm.offset, pm.bytes);
                        }
                        std::sort(all.begin(), all.end());
                        int64_t end = 0;
                        for (const auto& [off, bytes] : all) {
                            EXPECT_EQ(off, end) << "gap or overlap, cell " << cell << " bias " << bias;
                            end = off + bytes;
                        }
                        EXPECT_EQ(end, static_cast<int64_t>(w));
                    }
}

TEST(RnnWeightSpace, ArgumentChecks) {
    Handle h;
    RnnDesc d;
    ASSERT_OK(Rnn().set(d.get()));
    size_t w = 0;
    ASSERT_OK(cudnnGetRNNWeightSpaceSize(h.get(), d.get(), &w));
    cudnnTensorDescriptor_t m = nullptr;
    ASSERT_OK(cudnnCreateTensorDescriptor(&m));
    void* a = nullptr;
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNWeightParams(h.get(), d.get(), -1, w, nullptr, 0, m, &a, nullptr, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNWeightParams(h.get(), d.get(), 2, w, nullptr, 0, m, &a, nullptr, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNWeightParams(h.get(), d.get(), 0, w, nullptr, -1, m, &a, nullptr, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNWeightParams(h.get(), d.get(), 0, w, nullptr, 9, m, &a, nullptr, nullptr));
    // Too small a space for the region asked for.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNWeightParams(h.get(), d.get(), 0, 799, nullptr, 0, m, &a, nullptr, nullptr));
    ASSERT_OK(cudnnGetRNNWeightParams(h.get(), d.get(), 0, 800, nullptr, 0, m, &a, nullptr, nullptr));
    EXPECT_EQ(a, nullptr);  // offset 0 from a NULL space
    ASSERT_OK(cudnnGetRNNWeightParams(h.get(), d.get(), 0, w, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
    // A region that does not exist: NULL, and the descriptor reads as unset (as in cuDNN).
    a = reinterpret_cast<void*>(uintptr_t{1});
    ASSERT_OK(cudnnGetRNNWeightParams(h.get(), d.get(), 0, w, nullptr, 8, m, &a, nullptr, nullptr));
    EXPECT_EQ(a, nullptr);
    cudnnDataType_t dt;
    int nb = -1, dims[3], strides[3];
    ASSERT_OK(cudnnGetTensorNdDescriptor(m, 3, &dt, &nb, dims, strides));
    EXPECT_EQ(nb, 0);
    ASSERT_OK(cudnnDestroyTensorDescriptor(m));
}

// ---------------------------------------------------------------------------
// RNN temp space
// ---------------------------------------------------------------------------

TEST(RnnTempSpace, SizesAreDeterministicAndScale) {
    Handle h;
    RnnDesc d;
    ASSERT_OK(Rnn().set(d.get()));
    cudnnRNNDataDescriptor_t x = nullptr;
    ASSERT_OK(cudnnCreateRNNDataDescriptor(&x));
    std::vector<int> sl(64, 1);
    auto sizes = [&](int t, int n, cudnnForwardMode_t mode, size_t* ws, size_t* rs) {
        std::fill(sl.begin(), sl.end(), t);
        ASSERT_OK(cudnnSetRNNDataDescriptor(x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, t, n, 10,
                                            sl.data(), nullptr));
        ASSERT_OK(cudnnGetRNNTempSpaceSizes(h.get(), d.get(), mode, x, ws, rs));
    };
    size_t ws1, rs1, ws2, rs2, ws3, rs3, wsi, rsi = 7;
    sizes(5, 3, CUDNN_FWD_MODE_TRAINING, &ws1, &rs1);
    sizes(5, 3, CUDNN_FWD_MODE_TRAINING, &ws2, &rs2);
    EXPECT_EQ(ws1, ws2);
    EXPECT_EQ(rs1, rs2);
    EXPECT_GT(ws1, 0u);
    EXPECT_GT(rs1, 0u);
    EXPECT_EQ(ws1 % 256, 0u);
    EXPECT_EQ(rs1 % 256, 0u);
    sizes(5, 3, CUDNN_FWD_MODE_INFERENCE, &wsi, &rsi);
    EXPECT_EQ(wsi, ws1);
    EXPECT_EQ(rsi, 0u);
    sizes(50, 64, CUDNN_FWD_MODE_TRAINING, &ws3, &rs3);
    EXPECT_GT(ws3, ws1);
    EXPECT_GT(rs3, rs1);
    // The reserve holds at least every layer's output and gate activations.
    EXPECT_GE(rs3, size_t{2} * (50 * 64 * 20 * 4 + 50 * 64 * 4 * 20 * 4));
    // Either output may be NULL.
    ASSERT_OK(cudnnGetRNNTempSpaceSizes(h.get(), d.get(), CUDNN_FWD_MODE_TRAINING, x, nullptr, &rs2));
    EXPECT_EQ(rs2, rs3);
    // x must match the RNN.
    std::fill(sl.begin(), sl.end(), 5);
    ASSERT_OK(cudnnSetRNNDataDescriptor(x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 5, 3, 11,
                                        sl.data(), nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNTempSpaceSizes(h.get(), d.get(), CUDNN_FWD_MODE_TRAINING, x, &ws1, &rs1));
    ASSERT_OK(cudnnSetRNNDataDescriptor(x, CUDNN_DATA_HALF, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 5, 3, 10,
                                        sl.data(), nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNTempSpaceSizes(h.get(), d.get(), CUDNN_FWD_MODE_TRAINING, x, &ws1, &rs1));
    ASSERT_OK(cudnnSetRNNDataDescriptor(x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 5, 3, 10,
                                        sl.data(), nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetRNNTempSpaceSizes(h.get(), d.get(), static_cast<cudnnForwardMode_t>(2), x, &ws1, &rs1));
    ASSERT_OK(cudnnDestroyRNNDataDescriptor(x));
}

// ---------------------------------------------------------------------------
// RNN data
// ---------------------------------------------------------------------------

TEST(RnnDataDesc, RoundTripWithPaddingFill) {
    cudnnRNNDataDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateRNNDataDescriptor(&d));
    const int sl[4] = {4, 4, 2, 1};
    const double dfill = -2.25;
    ASSERT_OK(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_DOUBLE, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 4, 4, 7, sl,
                                        const_cast<double*>(&dfill)));
    cudnnDataType_t dt;
    cudnnRNNDataLayout_t l;
    int ms, bs, vs, out[6] = {-1, -1, -1, -1, -1, -1};
    double back = 0;
    ASSERT_OK(cudnnGetRNNDataDescriptor(d, &dt, &l, &ms, &bs, &vs, 6, out, &back));
    EXPECT_EQ(dt, CUDNN_DATA_DOUBLE);
    EXPECT_EQ(l, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED);
    EXPECT_EQ(ms, 4);
    EXPECT_EQ(bs, 4);
    EXPECT_EQ(vs, 7);
    EXPECT_EQ(out[0], 4);
    EXPECT_EQ(out[3], 1);
    EXPECT_EQ(out[4], 0);  // past the batch: zeros
    EXPECT_EQ(out[5], 0);
    EXPECT_EQ(back, dfill);
    // HALF copies two bytes of the fill.
    const uint16_t hfill = 0x3c00;
    ASSERT_OK(cudnnSetRNNDataDescriptor(d, CUDNN_DATA_HALF, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, 4, 4, 7, sl,
                                        const_cast<uint16_t*>(&hfill)));
    unsigned char raw[8];
    std::memset(raw, 0xee, sizeof raw);
    ASSERT_OK(cudnnGetRNNDataDescriptor(d, &dt, &l, &ms, &bs, &vs, 0, nullptr, raw));
    EXPECT_EQ(raw[0], 0x00);
    EXPECT_EQ(raw[1], 0x3c);
    EXPECT_EQ(raw[2], 0xee);
    // Packed sequences must start at maxSeqLength and not increase; failures change nothing.
    const int rising[4] = {1, 2, 3, 4};
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, 4, 4, 7,
                                            rising, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 65536, 4, 7,
                                            sl, nullptr));
    ASSERT_OK(cudnnGetRNNDataDescriptor(d, &dt, &l, &ms, &bs, &vs, 0, nullptr, raw));
    EXPECT_EQ(dt, CUDNN_DATA_HALF);
    ASSERT_OK(cudnnDestroyRNNDataDescriptor(d));
}

TEST(RnnDataDesc, BadArgumentsGiveBadParam) {
    cudnnRNNDataDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateRNNDataDescriptor(&dead));
    ASSERT_OK(cudnnDestroyRNNDataDescriptor(dead));
    const int sl[2] = {1, 1};
    cudnnDataType_t dt;
    cudnnRNNDataLayout_t l;
    int ms, bs, vs, s[2];
    float pf;
    for (cudnnRNNDataDescriptor_t d :
         {static_cast<cudnnRNNDataDescriptor_t>(nullptr), garbage<cudnnRNNDataDescriptor_t>(), dead}) {
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                      cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 1, 2, 3,
                                                sl, nullptr));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetRNNDataDescriptor(d, &dt, &l, &ms, &bs, &vs, 2, s, &pf));
        if (d) EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDestroyRNNDataDescriptor(d));
    }
    cudnnRNNDataDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateRNNDataDescriptor(&d));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 1, 2, 3,
                                            nullptr, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetRNNDataDescriptor(d, &dt, &l, &ms, &bs, &vs, 2, s, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetRNNDataDescriptor(d, &dt, &l, &ms, &bs, &vs, 1, nullptr, &pf));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetRNNDataDescriptor(d, &dt, &l, &ms, &bs, &vs, -1, s, &pf));
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnDestroyRNNDataDescriptor(nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnCreateRNNDataDescriptor(nullptr));
    ASSERT_OK(cudnnDestroyRNNDataDescriptor(d));
}

// ---------------------------------------------------------------------------
// Sequence data
// ---------------------------------------------------------------------------

TEST(SeqDataDesc, RoundTripAndNullArrays) {
    cudnnSeqDataDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateSeqDataDescriptor(&d));
    const int dims[4] = {5, 3, 2, 8};
    const cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM,
                                        CUDNN_SEQDATA_VECT_DIM};
    const int sl[6] = {5, 4, 3, 2, 1, 1};
    const float fill = 1.5f;
    // NVIDIA's library crashes on these NULLs.
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, nullptr, axes, 6, sl, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, nullptr, 6, sl, nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 6, nullptr, nullptr));
    ASSERT_OK(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 6, sl, const_cast<float*>(&fill)));
    cudnnDataType_t dt;
    int nb, odims[4];
    cudnnSeqDataAxis_t oaxes[4];
    size_t n = 0;
    int osl[8] = {};
    float ofill = 0;
    ASSERT_OK(cudnnGetSeqDataDescriptor(d, &dt, &nb, 4, odims, oaxes, &n, 8, osl, &ofill));
    EXPECT_EQ(dt, CUDNN_DATA_FLOAT);
    EXPECT_EQ(nb, 4);
    for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(odims[i], dims[i]);
        EXPECT_EQ(oaxes[i], axes[i]);
    }
    EXPECT_EQ(n, 6u);
    EXPECT_EQ(osl[1], 4);
    EXPECT_EQ(osl[6], 0);  // not written
    EXPECT_EQ(ofill, 1.5f);
    // Divergence: a defined but unsupported type is NOT_SUPPORTED and changes nothing
    // (NVIDIA: INTERNAL_ERROR, keeping the new values).
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED,
                  cudnnSetSeqDataDescriptor(d, CUDNN_DATA_INT8, 4, dims, axes, 6, sl, nullptr));
    ASSERT_OK(cudnnGetSeqDataDescriptor(d, &dt, nullptr, 0, nullptr, nullptr, nullptr, 0, nullptr, nullptr));
    EXPECT_EQ(dt, CUDNN_DATA_FLOAT);
    // Divergence: a BFLOAT16 fill reads back (NVIDIA: INTERNAL_ERROR).
    const uint16_t bfill = 0x3f80;
    ASSERT_OK(cudnnSetSeqDataDescriptor(d, CUDNN_DATA_BFLOAT16, 4, dims, axes, 6, sl, const_cast<uint16_t*>(&bfill)));
    uint16_t obfill = 0;
    ASSERT_OK(cudnnGetSeqDataDescriptor(d, nullptr, nullptr, 0, nullptr, nullptr, nullptr, 0, nullptr, &obfill));
    EXPECT_EQ(obfill, bfill);
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                  cudnnGetSeqDataDescriptor(d, &dt, &nb, -1, odims, oaxes, &n, 8, osl, nullptr));
    ASSERT_OK(cudnnDestroySeqDataDescriptor(d));
}

TEST(SeqDataDesc, BadDescriptorsGiveBadParam) {
    cudnnSeqDataDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateSeqDataDescriptor(&dead));
    ASSERT_OK(cudnnDestroySeqDataDescriptor(dead));
    const int dims[4] = {5, 1, 1, 8};
    const cudnnSeqDataAxis_t axes[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM,
                                        CUDNN_SEQDATA_VECT_DIM};
    const int sl[1] = {5};
    for (cudnnSeqDataDescriptor_t d :
         {static_cast<cudnnSeqDataDescriptor_t>(nullptr), garbage<cudnnSeqDataDescriptor_t>(), dead}) {
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                      cudnnSetSeqDataDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, axes, 1, sl, nullptr));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetSeqDataDescriptor(d, nullptr, nullptr, 0, nullptr, nullptr,
                                                                        nullptr, 0, nullptr, nullptr));
        if (d) EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDestroySeqDataDescriptor(d));
    }
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnDestroySeqDataDescriptor(nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnCreateSeqDataDescriptor(nullptr));
}

// ---------------------------------------------------------------------------
// Attention
// ---------------------------------------------------------------------------

cudnnStatus_t set_attn(cudnnAttnDescriptor_t d, unsigned mode, int nh, cudnnDataType_t dt, cudnnDataType_t cp,
                       cudnnDropoutDescriptor_t ad, int qp, int kp, int vp, int op) {
    return cudnnSetAttnDescriptor(d, mode, nh, 0.5, dt, cp, CUDNN_DEFAULT_MATH, ad, nullptr, 8, 6, 4, qp, kp, vp, op, 5,
                                  7, 3, 2);
}

TEST(AttnDesc, RoundTripAndBadArguments) {
    cudnnAttnDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateAttnDescriptor(&d));
    ASSERT_OK(set_attn(d, CUDNN_ATTN_ENABLE_PROJ_BIASES, 2, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, nullptr, 4, 4, 2, 3));
    unsigned mode = 0;
    int nh = 0, q = 0, bm = 0;
    double sm = 0;
    cudnnDataType_t dt, cp;
    ASSERT_OK(cudnnGetAttnDescriptor(d, &mode, &nh, &sm, &dt, &cp, nullptr, nullptr, nullptr, &q, nullptr, nullptr,
                                     nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &bm));
    EXPECT_EQ(mode, CUDNN_ATTN_ENABLE_PROJ_BIASES);
    EXPECT_EQ(nh, 2);
    EXPECT_EQ(sm, 0.5);
    EXPECT_EQ(dt, CUDNN_DATA_HALF);
    EXPECT_EQ(cp, CUDNN_DATA_FLOAT);
    EXPECT_EQ(q, 8);
    EXPECT_EQ(bm, 2);
    EXPECT_STATUS(CUDNN_STATUS_NOT_SUPPORTED, set_attn(d, CUDNN_ATTN_QUERYMAP_ONE_TO_ONE, 2, CUDNN_DATA_FLOAT,
                                                       CUDNN_DATA_FLOAT, nullptr, 4, 4, 2, 3));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, set_attn(d, 0, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, nullptr, 4, 3, 2, 3));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, set_attn(d, 0, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                                   garbage<cudnnDropoutDescriptor_t>(), 4, 4, 2, 3));
    ASSERT_OK(cudnnGetAttnDescriptor(d, nullptr, &nh, nullptr, &dt, nullptr, nullptr, nullptr, nullptr, nullptr,
                                     nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                     nullptr));
    EXPECT_EQ(dt, CUDNN_DATA_HALF);  // failed sets changed nothing
    ASSERT_OK(cudnnDestroyAttnDescriptor(d));

    cudnnAttnDescriptor_t dead = nullptr;
    ASSERT_OK(cudnnCreateAttnDescriptor(&dead));
    ASSERT_OK(cudnnDestroyAttnDescriptor(dead));
    Handle h;
    size_t w, ws, rs;
    for (cudnnAttnDescriptor_t bad :
         {static_cast<cudnnAttnDescriptor_t>(nullptr), garbage<cudnnAttnDescriptor_t>(), dead}) {
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                      set_attn(bad, 0, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, nullptr, 4, 4, 2, 3));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM,
                      cudnnGetAttnDescriptor(bad, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                             nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                             nullptr, nullptr, nullptr, nullptr));
        EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetMultiHeadAttnBuffers(h.get(), bad, &w, &ws, &rs));
        if (bad) EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnDestroyAttnDescriptor(bad));
    }
    EXPECT_STATUS(CUDNN_STATUS_SUCCESS, cudnnDestroyAttnDescriptor(nullptr));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnCreateAttnDescriptor(nullptr));
}

// Weight sizes NVIDIA's cuDNN 9.19 reported on an H200; odnn's own workspace layout.
TEST(AttnDesc, Buffers) {
    Handle h;
    cudnnAttnDescriptor_t d = nullptr;
    ASSERT_OK(cudnnCreateAttnDescriptor(&d));
    size_t w = 0, ws = 0, rs = 0;
    w = ws = rs = 7;
    ASSERT_OK(cudnnGetMultiHeadAttnBuffers(h.get(), d, &w, &ws, &rs));  // unset: nothing to hold
    EXPECT_EQ(w, 0u);
    EXPECT_EQ(ws, 0u);
    EXPECT_EQ(rs, 0u);
    struct Case {
        unsigned mode;
        int nh;
        cudnnDataType_t dt, cp;
        int qp, kp, vp, op;
        size_t bytes;
    };
    const Case cases[] = {{2, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 4, 4, 2, 3, 652},
                          {0, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 4, 4, 2, 3, 560},
                          {0, 2, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, 4, 4, 2, 3, 1120},
                          {2, 2, CUDNN_DATA_HALF, CUDNN_DATA_HALF, 4, 4, 2, 3, 326},
                          {2, 2, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, 4, 4, 2, 3, 326},
                          {2, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 4, 4, 0, 0, 512},
                          {2, 2, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 4, 4, 0, 5, 692},
                          {2, 4, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, 4, 4, 2, 3, 1292}};
    for (const Case& c : cases) {
        ASSERT_OK(set_attn(d, c.mode, c.nh, c.dt, c.cp, nullptr, c.qp, c.kp, c.vp, c.op));
        ASSERT_OK(cudnnGetMultiHeadAttnBuffers(h.get(), d, &w, &ws, &rs));
        EXPECT_EQ(w, c.bytes) << "mode " << c.mode << " nh " << c.nh << " dt " << c.dt;
        EXPECT_GT(ws, 0u);
        EXPECT_GT(rs, 0u);
        size_t wsi = 0, rsi = 7;
        ASSERT_OK(cudnnGetMultiHeadAttnBuffers(h.get(), d, &w, &wsi, nullptr));  // inference
        EXPECT_GT(wsi, 0u);
        EXPECT_EQ(rsi, 7u);
    }
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetMultiHeadAttnBuffers(h.get(), d, nullptr, &ws, &rs));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetMultiHeadAttnBuffers(h.get(), d, &w, nullptr, &rs));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetMultiHeadAttnBuffers(nullptr, d, &w, &ws, &rs));
    EXPECT_STATUS(CUDNN_STATUS_BAD_PARAM, cudnnGetMultiHeadAttnBuffers(garbage<cudnnHandle_t>(), d, &w, &ws, &rs));
    ASSERT_OK(cudnnDestroyAttnDescriptor(d));
}

}  // namespace
