// Adv-library descriptors (CTC loss, RNN, RNN data, sequence data, attention) and the
// RNN / attention size queries: odnn vs NVIDIA, one experiment per trace line with what
// the descriptor reads back appended to it.
//
// Not tested here, because NVIDIA's library crashes or answers differently on purpose
// (tests/api/test_adv_desc.cpp covers odnn's answers):
//  - cudnnSetSeqDataDescriptor with a NULL dimA / axes / seqLengthArray (NVIDIA crashes);
//  - cudnnSetSeqDataDescriptor with a defined data type other than FLOAT, DOUBLE, HALF,
//    BFLOAT16 (NVIDIA: INTERNAL_ERROR, and the descriptor keeps the rejected values;
//    odnn: NOT_SUPPORTED, descriptor unchanged);
//  - cudnnGetSeqDataDescriptor of a BFLOAT16 descriptor with a paddingFill pointer
//    (NVIDIA: INTERNAL_ERROR; odnn returns the fill);
//  - cudnnGetRNNWeightParams with mDesc but a NULL mAddr (NVIDIA crashes);
//  - garbage or destroyed descriptor pointers (NVIDIA crashes).
// The experiments that need a cudnnHandle_t run only where both libraries create one
// (the GPU machine); the workspace and reserve sizes are odnn's own layout, so only
// their statuses are compared.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "oracle/oracle.hpp"

namespace {

using oracle::Lib;
using oracle::Trace;

// Appends r's lines to the last line of t.
void append(Trace& t, const Trace& r) {
    for (const std::string& l : r.lines) t.lines.back() += " |" + l;
}

std::string hex(const void* p, size_t n) {
    static const char* d = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        const unsigned char c = static_cast<const unsigned char*>(p)[i];
        s += d[c >> 4];
        s += d[c & 15];
    }
    return s;
}

// A dropout descriptor made through the library under test, when it offers one (the
// decision is taken on odnn's library so that both traces make the same calls).
bool dropout_available() {
    static const int ok = [] {
        cudnnDropoutDescriptor_t d = nullptr;
        if (OCALL(oracle::ours(), cudnnCreateDropoutDescriptor, &d) != CUDNN_STATUS_SUCCESS) return 0;
        OCALL(oracle::ours(), cudnnDestroyDropoutDescriptor, d);
        return 1;
    }();
    return ok != 0;
}

// Handles: both libraries must create one (NVIDIA's needs a GPU).
bool handles_available() {
    static const int ok = [] {
        for (const Lib* lib : {&oracle::ours(), &oracle::nvidia()}) {
            if (!lib->loaded()) return 0;
            cudnnHandle_t h = nullptr;
            if (OCALL(*lib, cudnnCreate, &h) != CUDNN_STATUS_SUCCESS) return 0;
            OCALL(*lib, cudnnDestroy, h);
        }
        return 1;
    }();
    return ok != 0;
}

// ---------------------------------------------------------------------------
// CTC loss
// ---------------------------------------------------------------------------

void read_ctc(const Lib& lib, Trace& t, cudnnCTCLossDescriptor_t d) {
    Trace r;
    cudnnDataType_t ct = static_cast<cudnnDataType_t>(-7);
    cudnnStatus_t s = OCALL(lib, cudnnGetCTCLossDescriptor, d, &ct);
    r.add("get %d: %d", s, ct);
    cudnnLossNormalizationMode_t nm = static_cast<cudnnLossNormalizationMode_t>(-7);
    cudnnNanPropagation_t gm = static_cast<cudnnNanPropagation_t>(-7);
    ct = static_cast<cudnnDataType_t>(-7);
    s = OCALL(lib, cudnnGetCTCLossDescriptorEx, d, &ct, &nm, &gm);
    r.add("getEx %d: %d %d %d", s, ct, nm, gm);
    int ml = -7;
    ct = static_cast<cudnnDataType_t>(-7);
    nm = static_cast<cudnnLossNormalizationMode_t>(-7);
    gm = static_cast<cudnnNanPropagation_t>(-7);
    s = OCALL(lib, cudnnGetCTCLossDescriptor_v8, d, &ct, &nm, &gm, &ml);
    r.add("get8 %d: %d %d %d %d", s, ct, nm, gm, ml);
    cudnnCTCGradMode_t cg = static_cast<cudnnCTCGradMode_t>(-7);
    ct = static_cast<cudnnDataType_t>(-7);
    nm = static_cast<cudnnLossNormalizationMode_t>(-7);
    ml = -7;
    s = OCALL(lib, cudnnGetCTCLossDescriptor_v9, d, &ct, &nm, &cg, &ml);
    r.add("get9 %d: %d %d %d %d", s, ct, nm, cg, ml);
    append(t, r);
}

// A descriptor already holding values unlike the defaults, so that a failed set shows.
cudnnCTCLossDescriptor_t make_ctc(const Lib& lib) {
    cudnnCTCLossDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateCTCLossDescriptor, &d);
    OCALL(lib, cudnnSetCTCLossDescriptor_v9, d, CUDNN_DATA_DOUBLE, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
          CUDNN_CTC_SKIP_OOB_GRADIENTS, 255);
    return d;
}

void ctc_loss(const Lib& lib, Trace& t) {
    cudnnCTCLossDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateCTCLossDescriptor, &d);
    t.add("fresh");
    read_ctc(lib, t, d);
    OCALL(lib, cudnnDestroyCTCLossDescriptor, d);

    std::vector<int> dts;
    for (int dt = -1; dt <= 22; ++dt) dts.push_back(dt);
    for (int dt : {100, -100, 1 << 30}) dts.push_back(dt);
    for (int dt : dts) {
        d = make_ctc(lib);
        t.add("set7 dt=%d -> %d", dt, OCALL(lib, cudnnSetCTCLossDescriptor, d, static_cast<cudnnDataType_t>(dt)));
        read_ctc(lib, t, d);
        OCALL(lib, cudnnDestroyCTCLossDescriptor, d);
    }
    for (int dt : {0, 1, 2, -1})
        for (int nm = -1; nm <= 2; ++nm)
            for (int gm = -1; gm <= 2; ++gm) {
                d = make_ctc(lib);
                t.add("setEx dt=%d nm=%d gm=%d -> %d", dt, nm, gm,
                      OCALL(lib, cudnnSetCTCLossDescriptorEx, d, static_cast<cudnnDataType_t>(dt),
                            static_cast<cudnnLossNormalizationMode_t>(nm), static_cast<cudnnNanPropagation_t>(gm)));
                read_ctc(lib, t, d);
                OCALL(lib, cudnnDestroyCTCLossDescriptor, d);
            }
    for (int dt : {0, 1, 9})
        for (int nm : {0, 1, 5})
            for (int gm : {0, 1, 7})
                for (int ml : {-5, 0, 1, 255, 256, 1 << 30}) {
                    d = make_ctc(lib);
                    t.add("set8 dt=%d nm=%d gm=%d ml=%d -> %d", dt, nm, gm, ml,
                          OCALL(lib, cudnnSetCTCLossDescriptor_v8, d, static_cast<cudnnDataType_t>(dt),
                                static_cast<cudnnLossNormalizationMode_t>(nm), static_cast<cudnnNanPropagation_t>(gm),
                                ml));
                    read_ctc(lib, t, d);
                    OCALL(lib, cudnnDestroyCTCLossDescriptor, d);
                }
    for (int dt : {0, 1, 2})
        for (int nm = -1; nm <= 2; ++nm)
            for (int cg = -1; cg <= 2; ++cg)
                for (int ml : {-1, 0, 255}) {
                    OCALL(lib, cudnnCreateCTCLossDescriptor, &d);
                    OCALL(lib, cudnnSetCTCLossDescriptor_v8, d, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE,
                          CUDNN_PROPAGATE_NAN, 77);
                    t.add(
                        "set9 dt=%d nm=%d cg=%d ml=%d -> %d", dt, nm, cg, ml,
                        OCALL(lib, cudnnSetCTCLossDescriptor_v9, d, static_cast<cudnnDataType_t>(dt),
                              static_cast<cudnnLossNormalizationMode_t>(nm), static_cast<cudnnCTCGradMode_t>(cg), ml));
                    read_ctc(lib, t, d);
                    OCALL(lib, cudnnDestroyCTCLossDescriptor, d);
                }

    // Older setters reset what they do not take.
    d = make_ctc(lib);
    OSTATUS(t, lib, cudnnSetCTCLossDescriptor, d, CUDNN_DATA_FLOAT);
    read_ctc(lib, t, d);
    OCALL(lib, cudnnSetCTCLossDescriptor_v9, d, CUDNN_DATA_DOUBLE, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
          CUDNN_CTC_SKIP_OOB_GRADIENTS, 255);
    OSTATUS(t, lib, cudnnSetCTCLossDescriptorEx, d, CUDNN_DATA_DOUBLE, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
            CUDNN_PROPAGATE_NAN);
    read_ctc(lib, t, d);
    OSTATUS(t, lib, cudnnSetCTCLossDescriptor_v8, d, CUDNN_DATA_HALF, CUDNN_LOSS_NORMALIZATION_NONE,
            CUDNN_NOT_PROPAGATE_NAN, 3);
    read_ctc(lib, t, d);

    // Getters skip NULL outputs.
    {
        cudnnDataType_t ct = static_cast<cudnnDataType_t>(-7);
        cudnnLossNormalizationMode_t nm = static_cast<cudnnLossNormalizationMode_t>(-7);
        cudnnNanPropagation_t gm = static_cast<cudnnNanPropagation_t>(-7);
        cudnnCTCGradMode_t cg = static_cast<cudnnCTCGradMode_t>(-7);
        int ml = -7;
        OSTATUS(t, lib, cudnnGetCTCLossDescriptor, d, nullptr);
        t.add("getEx ct=NULL %d: %d %d", OCALL(lib, cudnnGetCTCLossDescriptorEx, d, nullptr, &nm, &gm), nm, gm);
        t.add("getEx nm,gm=NULL %d: %d", OCALL(lib, cudnnGetCTCLossDescriptorEx, d, &ct, nullptr, nullptr), ct);
        ct = static_cast<cudnnDataType_t>(-7);
        nm = static_cast<cudnnLossNormalizationMode_t>(-7);
        t.add("get8 gm=NULL %d: %d %d %d", OCALL(lib, cudnnGetCTCLossDescriptor_v8, d, &ct, &nm, nullptr, &ml), ct, nm,
              ml);
        ml = -7;
        t.add("get9 nm=NULL %d: %d %d", OCALL(lib, cudnnGetCTCLossDescriptor_v9, d, nullptr, nullptr, &cg, &ml), cg,
              ml);
        OSTATUS(t, lib, cudnnGetCTCLossDescriptor_v9, d, nullptr, nullptr, nullptr, nullptr);
    }
    OCALL(lib, cudnnDestroyCTCLossDescriptor, d);

    // NULL descriptors.
    cudnnDataType_t ct;
    cudnnLossNormalizationMode_t nm;
    cudnnNanPropagation_t gm;
    cudnnCTCGradMode_t cg;
    int ml;
    OSTATUS(t, lib, cudnnSetCTCLossDescriptor, nullptr, CUDNN_DATA_FLOAT);
    OSTATUS(t, lib, cudnnSetCTCLossDescriptor, nullptr, CUDNN_DATA_HALF);
    OSTATUS(t, lib, cudnnSetCTCLossDescriptorEx, nullptr, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
            CUDNN_PROPAGATE_NAN);
    OSTATUS(t, lib, cudnnSetCTCLossDescriptor_v8, nullptr, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
            CUDNN_PROPAGATE_NAN, 1);
    OSTATUS(t, lib, cudnnSetCTCLossDescriptor_v9, nullptr, CUDNN_DATA_HALF, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
            CUDNN_CTC_ZERO_OOB_GRADIENTS, 1);
    OSTATUS(t, lib, cudnnGetCTCLossDescriptor, nullptr, &ct);
    OSTATUS(t, lib, cudnnGetCTCLossDescriptorEx, nullptr, &ct, &nm, &gm);
    OSTATUS(t, lib, cudnnGetCTCLossDescriptor_v8, nullptr, &ct, &nm, &gm, &ml);
    OSTATUS(t, lib, cudnnGetCTCLossDescriptor_v9, nullptr, &ct, &nm, &cg, &ml);
    OSTATUS(t, lib, cudnnDestroyCTCLossDescriptor, nullptr);
    OSTATUS(t, lib, cudnnCreateCTCLossDescriptor, nullptr);
}

// ---------------------------------------------------------------------------
// RNN descriptor
// ---------------------------------------------------------------------------

struct RnnArgs {
    int algo = CUDNN_RNN_ALGO_STANDARD, cell = CUDNN_LSTM, bias = CUDNN_RNN_DOUBLE_BIAS, dir = CUDNN_UNIDIRECTIONAL;
    int in_mode = CUDNN_LINEAR_INPUT, dt = CUDNN_DATA_FLOAT, mp = CUDNN_DATA_FLOAT, mt = CUDNN_DEFAULT_MATH;
    int in = 10, hid = 20, proj = 20, layers = 2;
    cudnnDropoutDescriptor_t drop = nullptr;
    unsigned aux = 0;
};

cudnnStatus_t set_rnn(const Lib& lib, cudnnRNNDescriptor_t d, const RnnArgs& a) {
    return OCALL(lib, cudnnSetRNNDescriptor_v8, d, static_cast<cudnnRNNAlgo_t>(a.algo),
                 static_cast<cudnnRNNMode_t>(a.cell), static_cast<cudnnRNNBiasMode_t>(a.bias),
                 static_cast<cudnnDirectionMode_t>(a.dir), static_cast<cudnnRNNInputMode_t>(a.in_mode),
                 static_cast<cudnnDataType_t>(a.dt), static_cast<cudnnDataType_t>(a.mp),
                 static_cast<cudnnMathType_t>(a.mt), a.in, a.hid, a.proj, a.layers, a.drop, a.aux);
}

std::string args_text(const RnnArgs& a) {
    char b[200];
    std::snprintf(b, sizeof b,
                  "algo=%d cell=%d bias=%d dir=%d im=%d dt=%d mp=%d mt=%d in=%d hid=%d proj=%d nl=%d aux=%u", a.algo,
                  a.cell, a.bias, a.dir, a.in_mode, a.dt, a.mp, a.mt, a.in, a.hid, a.proj, a.layers, a.aux);
    return b;
}

void read_rnn(const Lib& lib, Trace& t, cudnnRNNDescriptor_t d, cudnnDropoutDescriptor_t known = nullptr) {
    Trace r;
    cudnnRNNAlgo_t algo = static_cast<cudnnRNNAlgo_t>(-7);
    cudnnRNNMode_t cell = static_cast<cudnnRNNMode_t>(-7);
    cudnnRNNBiasMode_t bias = static_cast<cudnnRNNBiasMode_t>(-7);
    cudnnDirectionMode_t dir = static_cast<cudnnDirectionMode_t>(-7);
    cudnnRNNInputMode_t im = static_cast<cudnnRNNInputMode_t>(-7);
    cudnnDataType_t dt = static_cast<cudnnDataType_t>(-7), mp = static_cast<cudnnDataType_t>(-7);
    cudnnMathType_t mt = static_cast<cudnnMathType_t>(-7);
    int32_t in = -7, hid = -7, proj = -7, nl = -7;
    cudnnDropoutDescriptor_t drop = reinterpret_cast<cudnnDropoutDescriptor_t>(uintptr_t{8});
    uint32_t aux = 77;
    cudnnStatus_t s = OCALL(lib, cudnnGetRNNDescriptor_v8, d, &algo, &cell, &bias, &dir, &im, &dt, &mp, &mt, &in, &hid,
                            &proj, &nl, &drop, &aux);
    const char* dn = drop == nullptr ? "null" : (known && drop == known) ? "dd" : "other";
    r.add("get %d: %d %d %d %d %d %d %d %d %d %d %d %d %s %u", s, algo, cell, bias, dir, im, dt, mp, mt, in, hid, proj,
          nl, dn, aux);
    cudnnRNNClipMode_t cm = static_cast<cudnnRNNClipMode_t>(-7);
    cudnnNanPropagation_t np = static_cast<cudnnNanPropagation_t>(-7);
    double l = -7, rr = -7;
    s = OCALL(lib, cudnnRNNGetClip_v8, d, &cm, &np, &l, &rr);
    r.add("clip8 %d: %d %d %g %g", s, cm, np, l, rr);
    cm = static_cast<cudnnRNNClipMode_t>(-7);
    l = rr = -7;
    s = OCALL(lib, cudnnRNNGetClip_v9, d, &cm, &l, &rr);
    r.add("clip9 %d: %d %g %g", s, cm, l, rr);
    append(t, r);
}

// Sets `a` on a descriptor that holds another valid configuration (and a clip range).
void rnn_experiment(const Lib& lib, Trace& t, const char* tag, const RnnArgs& a) {
    cudnnRNNDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateRNNDescriptor, &d);
    RnnArgs base;
    base.in = 9;
    base.cell = CUDNN_GRU;
    set_rnn(lib, d, base);
    OCALL(lib, cudnnRNNSetClip_v8, d, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, -2.0, 3.0);
    t.add("%s [%s] -> %d", tag, args_text(a).c_str(), set_rnn(lib, d, a));
    read_rnn(lib, t, d, a.drop);
    OCALL(lib, cudnnDestroyRNNDescriptor, d);
}

void rnn_descriptor(const Lib& lib, Trace& t) {
    cudnnRNNDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateRNNDescriptor, &d);
    t.add("fresh");
    read_rnn(lib, t, d);
    OSTATUS(t, lib, cudnnGetRNNDescriptor_v8, d, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    OCALL(lib, cudnnDestroyRNNDescriptor, d);

    rnn_experiment(lib, t, "base", RnnArgs());
    for (int v = -1; v <= 5; ++v) {
        RnnArgs a;
        a.algo = v;
        rnn_experiment(lib, t, "algo", a);
        a = RnnArgs();
        a.cell = v;
        rnn_experiment(lib, t, "cell", a);
        a = RnnArgs();
        a.bias = v;
        rnn_experiment(lib, t, "bias", a);
        a = RnnArgs();
        a.dir = v;
        rnn_experiment(lib, t, "dir", a);
        a = RnnArgs();
        a.in_mode = v;
        rnn_experiment(lib, t, "inputMode", a);
        a.in = a.hid;
        rnn_experiment(lib, t, "inputMode in=hid", a);
        a = RnnArgs();
        a.mt = v;
        rnn_experiment(lib, t, "mathType", a);
    }
    // Data type x math precision x math type.
    for (int dt = -1; dt <= 22; ++dt)
        for (int mp : {-1, 0, 1, 2, 9, 3}) {
            RnnArgs a;
            a.dt = dt;
            a.mp = mp;
            rnn_experiment(lib, t, "types", a);
        }
    for (int dt : {0, 1, 2, 9, 100})
        for (int mp : {0, 1, 2, 9})
            for (int mt = -1; mt <= 4; ++mt) {
                RnnArgs a;
                a.dt = dt;
                a.mp = mp;
                a.mt = mt;
                rnn_experiment(lib, t, "types+math", a);
            }
    // Sizes.
    for (int v : {-1, 0, 1, 2, 19, 20, 21, 100, 1 << 20, 1 << 30, 0x7fffffff}) {
        RnnArgs a;
        a.in = v;
        rnn_experiment(lib, t, "inputSize", a);
        a = RnnArgs();
        a.hid = a.proj = v;
        rnn_experiment(lib, t, "hidden=proj", a);
        a = RnnArgs();
        a.proj = v;
        rnn_experiment(lib, t, "projSize", a);
        a = RnnArgs();
        a.layers = v;
        rnn_experiment(lib, t, "numLayers", a);
    }
    for (int cell = -1; cell <= 4; ++cell)
        for (int proj : {-1, 0, 1, 10, 20, 21}) {
            RnnArgs a;
            a.cell = cell;
            a.proj = proj;
            rnn_experiment(lib, t, "cell x proj", a);
        }
    for (unsigned aux : {0u, 1u, 2u, 3u, 4u, 0x80000000u, 0xffffffffu}) {
        RnnArgs a;
        a.aux = aux;
        rnn_experiment(lib, t, "auxFlags", a);
    }
    // Persistent algorithms: what they accept at set time.
    for (int algo = 0; algo <= 3; ++algo)
        for (int cell = 0; cell <= 3; ++cell)
            for (int dt : {0, 1, 2, 9})
                for (int dir = 0; dir <= 1; ++dir)
                    for (int proj : {20, 7}) {
                        if (proj != 20 && cell != CUDNN_LSTM) continue;
                        RnnArgs a;
                        a.algo = algo;
                        a.cell = cell;
                        a.dt = dt;
                        a.mp = dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
                        a.dir = dir;
                        a.proj = proj;
                        rnn_experiment(lib, t, "persist", a);
                    }
    for (int algo = 0; algo <= 3; ++algo) {
        for (int mt = 0; mt <= 3; ++mt)
            for (int dt : {0, 2})
                for (int mp : {0, 2}) {
                    RnnArgs a;
                    a.algo = algo;
                    a.mt = mt;
                    a.dt = dt;
                    a.mp = mp;
                    rnn_experiment(lib, t, "persist types", a);
                }
        for (unsigned aux = 0; aux <= 1; ++aux)
            for (int im = 0; im <= 1; ++im)
                for (int bias = 0; bias <= 3; ++bias) {
                    RnnArgs a;
                    a.algo = algo;
                    a.aux = aux;
                    a.in_mode = im;
                    a.bias = bias;
                    rnn_experiment(lib, t, "persist modes", a);
                }
        for (int hid : {1, 64, 512, 4096, 1 << 20}) {
            RnnArgs a;
            a.algo = algo;
            a.hid = a.proj = hid;
            rnn_experiment(lib, t, "persist hidden", a);
        }
    }
    // Precedence: one BAD_PARAM problem together with one NOT_SUPPORTED problem.
    {
        using Mod = void (*)(RnnArgs&);
        const std::pair<const char*, Mod> bad[] = {
            {"algo", [](RnnArgs& a) { a.algo = 7; }},         {"cell", [](RnnArgs& a) { a.cell = 7; }},
            {"bias", [](RnnArgs& a) { a.bias = 7; }},         {"dir", [](RnnArgs& a) { a.dir = 7; }},
            {"inputMode", [](RnnArgs& a) { a.in_mode = 7; }}, {"mathType", [](RnnArgs& a) { a.mt = 7; }},
            {"in=0", [](RnnArgs& a) { a.in = 0; }},           {"hid=0", [](RnnArgs& a) { a.hid = 0; }},
            {"proj=0", [](RnnArgs& a) { a.proj = 0; }},       {"layers=0", [](RnnArgs& a) { a.layers = 0; }},
            {"aux=2", [](RnnArgs& a) { a.aux = 2; }}};
        const std::pair<const char*, Mod> unsupported[] = {
            {"dt=-1", [](RnnArgs& a) { a.dt = -1; }},
            {"dt=DOUBLE", [](RnnArgs& a) { a.dt = 1; }},
            {"dt=INT8x4", [](RnnArgs& a) { a.dt = 5; }},
            {"mp=HALF", [](RnnArgs& a) { a.mp = 2; }},
            {"proj>hid", [](RnnArgs& a) { a.hid = 20, a.proj = 30; }},
            {"GRU proj<hid", [](RnnArgs& a) { a.cell = CUDNN_GRU, a.proj = 10; }},
            {"persist no bias", [](RnnArgs& a) { a.algo = 1, a.bias = 0; }}};
        for (const auto& b : bad)
            for (const auto& u : unsupported) {
                RnnArgs a;
                u.second(a);
                b.second(a);
                const std::string tag = std::string("precedence ") + b.first + " + " + u.first;
                rnn_experiment(lib, t, tag.c_str(), a);
            }
    }
    // A dropout descriptor is kept as given (an unset one too).
    if (dropout_available()) {
        cudnnDropoutDescriptor_t dd = nullptr;
        OCALL(lib, cudnnCreateDropoutDescriptor, &dd);
        RnnArgs a;
        a.drop = dd;
        rnn_experiment(lib, t, "dropout", a);
        OCALL(lib, cudnnDestroyDropoutDescriptor, dd);
    }

    // Clipping.
    const double vals[][2] = {{-1, 1},  {1, -1}, {0, 0},          {-INFINITY, INFINITY}, {NAN, 1},
                              {1, NAN}, {5, 5},  {-1e300, 1e300}, {-INFINITY, -INFINITY}};
    for (int state = 0; state <= 1; ++state)
        for (int cm = -1; cm <= 2; ++cm)
            for (const auto& v : vals) {
                for (int np = -1; np <= 2; ++np) {
                    OCALL(lib, cudnnCreateRNNDescriptor, &d);
                    if (state) set_rnn(lib, d, RnnArgs());
                    OCALL(lib, cudnnRNNSetClip_v8, d, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, -4.0, 4.0);
                    t.add("st=%d clip8 cm=%d np=%d %g %g -> %d", state, cm, np, v[0], v[1],
                          OCALL(lib, cudnnRNNSetClip_v8, d, static_cast<cudnnRNNClipMode_t>(cm),
                                static_cast<cudnnNanPropagation_t>(np), v[0], v[1]));
                    read_rnn(lib, t, d);
                    OCALL(lib, cudnnDestroyRNNDescriptor, d);
                }
                OCALL(lib, cudnnCreateRNNDescriptor, &d);
                if (state) set_rnn(lib, d, RnnArgs());
                t.add("st=%d clip9 cm=%d %g %g -> %d", state, cm, v[0], v[1],
                      OCALL(lib, cudnnRNNSetClip_v9, d, static_cast<cudnnRNNClipMode_t>(cm), v[0], v[1]));
                read_rnn(lib, t, d);
                OCALL(lib, cudnnDestroyRNNDescriptor, d);
            }
    // A successful set resets the clip; a failed one keeps it.
    OCALL(lib, cudnnCreateRNNDescriptor, &d);
    OSTATUS(t, lib, cudnnRNNSetClip_v9, d, CUDNN_RNN_CLIP_MINMAX, -2.0, 3.0);
    read_rnn(lib, t, d);
    RnnArgs bad;
    bad.layers = 0;
    t.add("failed set -> %d", set_rnn(lib, d, bad));
    read_rnn(lib, t, d);
    t.add("set -> %d", set_rnn(lib, d, RnnArgs()));
    read_rnn(lib, t, d);
    OSTATUS(t, lib, cudnnRNNSetClip_v8, d, CUDNN_RNN_CLIP_MINMAX, CUDNN_NOT_PROPAGATE_NAN, -1.0, 1.0);
    t.add("set again -> %d", set_rnn(lib, d, RnnArgs()));
    read_rnn(lib, t, d);

    // Getters skip NULL outputs.
    {
        cudnnRNNAlgo_t algo = static_cast<cudnnRNNAlgo_t>(-7);
        int32_t nl = -7, hid = -7;
        uint32_t aux = 77;
        t.add("get partial %d: %d %d %d %u",
              OCALL(lib, cudnnGetRNNDescriptor_v8, d, &algo, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                    nullptr, nullptr, &hid, nullptr, &nl, nullptr, &aux),
              algo, hid, nl, aux);
        OSTATUS(t, lib, cudnnGetRNNDescriptor_v8, d, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
        double l = -7;
        t.add("clip8 partial %d: %g", OCALL(lib, cudnnRNNGetClip_v8, d, nullptr, nullptr, &l, nullptr), l);
        OSTATUS(t, lib, cudnnRNNGetClip_v9, d, nullptr, nullptr, nullptr);
    }
    OCALL(lib, cudnnDestroyRNNDescriptor, d);

    // NULL descriptors.
    RnnArgs a;
    t.add("set NULL -> %d", set_rnn(lib, nullptr, a));
    a.dt = CUDNN_DATA_INT8;
    t.add("set NULL bad -> %d", set_rnn(lib, nullptr, a));
    OSTATUS(t, lib, cudnnGetRNNDescriptor_v8, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    OSTATUS(t, lib, cudnnRNNSetClip_v8, nullptr, CUDNN_RNN_CLIP_NONE, CUDNN_PROPAGATE_NAN, 0.0, 0.0);
    OSTATUS(t, lib, cudnnRNNSetClip_v9, nullptr, CUDNN_RNN_CLIP_NONE, 0.0, 0.0);
    OSTATUS(t, lib, cudnnRNNSetClip_v9, nullptr, CUDNN_RNN_CLIP_NONE, 1.0, 0.0);
    OSTATUS(t, lib, cudnnRNNGetClip_v8, nullptr, nullptr, nullptr, nullptr, nullptr);
    OSTATUS(t, lib, cudnnRNNGetClip_v9, nullptr, nullptr, nullptr, nullptr);
    OSTATUS(t, lib, cudnnDestroyRNNDescriptor, nullptr);
    OSTATUS(t, lib, cudnnCreateRNNDescriptor, nullptr);
}

// ---------------------------------------------------------------------------
// RNN data descriptor
// ---------------------------------------------------------------------------

void read_rnn_data(const Lib& lib, Trace& t, cudnnRNNDataDescriptor_t d, int req = 8) {
    Trace r;
    cudnnDataType_t dt = static_cast<cudnnDataType_t>(-7);
    cudnnRNNDataLayout_t l = static_cast<cudnnRNNDataLayout_t>(-7);
    int ms = -7, bs = -7, vs = -7;
    std::vector<int> sl(128, -9);
    unsigned char pf[12];
    std::memset(pf, 0xab, sizeof pf);
    const cudnnStatus_t s =
        OCALL(lib, cudnnGetRNNDataDescriptor, d, &dt, &l, &ms, &bs, &vs, req, sl.data(), static_cast<void*>(pf));
    std::string seq;
    for (int i = 0; i < (req > 10 ? req + 2 : 10) && i < 128; ++i) seq += std::to_string(sl[i]) + ",";
    r.add("get(%d) %d: dt=%d l=%d ms=%d bs=%d vs=%d sl=%s pf=%s", req, s, dt, l, ms, bs, vs, seq.c_str(),
          hex(pf, sizeof pf).c_str());
    append(t, r);
}

// The fill pattern: 8 distinct bytes, so the read-back shows how many were copied.
const unsigned char kFill[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x3f};

void rnn_data_experiment(const Lib& lib, Trace& t, const char* tag, int dt, int layout, int ms, int bs, int vs,
                         const int* seq, const void* fill = kFill) {
    cudnnRNNDataDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateRNNDataDescriptor, &d);
    const int base_seq[2] = {4, 2};
    const double base_fill = -1.5;
    OCALL(lib, cudnnSetRNNDataDescriptor, d, CUDNN_DATA_DOUBLE, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, 6, 2, 3,
          base_seq, const_cast<double*>(&base_fill));
    t.add("%s dt=%d l=%d ms=%d bs=%d vs=%d -> %d", tag, dt, layout, ms, bs, vs,
          OCALL(lib, cudnnSetRNNDataDescriptor, d, static_cast<cudnnDataType_t>(dt),
                static_cast<cudnnRNNDataLayout_t>(layout), ms, bs, vs, seq, const_cast<void*>(fill)));
    read_rnn_data(lib, t, d);
    OCALL(lib, cudnnDestroyRNNDataDescriptor, d);
}

void rnn_data_descriptor(const Lib& lib, Trace& t) {
    cudnnRNNDataDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateRNNDataDescriptor, &d);
    t.add("fresh");
    read_rnn_data(lib, t, d);
    OCALL(lib, cudnnDestroyRNNDataDescriptor, d);

    const int sl[8] = {3, 1, 2, 3, 0, 3, 2, 1};
    for (int dt :
         {-100, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 100})
        rnn_data_experiment(lib, t, "dataType", dt, 0, 3, 4, 5, sl);
    for (int l = -1; l <= 4; ++l) {
        rnn_data_experiment(lib, t, "layout", 0, l, 3, 4, 5, sl);
        const int full[4] = {3, 3, 3, 3};
        rnn_data_experiment(lib, t, "layout full", 0, l, 3, 4, 5, full);
    }
    std::vector<int> ones(1 << 16, 1);
    for (int ms : {-1, 0, 1, 2, 3, 4, 1000, 65535, 65536, 1 << 20, 0x7fffffff})
        rnn_data_experiment(lib, t, "maxSeqLength", 0, 0, ms, 4, 5, sl);
    for (int bs : {-1, 0, 1, 2, 3, 4, 8, 1000, 65536})
        rnn_data_experiment(lib, t, "batchSize", 0, 0, 3, bs, 5, ones.data());
    for (int vs : {-1, 0, 1, 2, 1 << 20, 0x7fffffff}) rnn_data_experiment(lib, t, "vectorSize", 0, 0, 3, 4, vs, sl);
    const int seqs[][4] = {{3, 3, 3, 3}, {1, 2, 3, 2}, {0, 1, 2, 3}, {-1, 1, 2, 3}, {4, 1, 1, 1},
                           {3, 2, 2, 1}, {1, 2, 3, 3}, {0, 0, 0, 0}, {2, 2, 1, 1},  {3, 2, 1, 0},
                           {3, 2, 1, 1}, {1, 1, 1, 1}, {3, 3, 3, 0}, {3, 1, 2, 1}};
    for (int l = 0; l <= 2; ++l)
        for (const auto& q : seqs) {
            char tag[64];
            std::snprintf(tag, sizeof tag, "seq %d,%d,%d,%d", q[0], q[1], q[2], q[3]);
            rnn_data_experiment(lib, t, tag, 0, l, 3, 4, 5, q);
        }
    for (int l = 0; l <= 2; ++l)
        for (int ms : {1, 100, 65536})
            for (int bs : {1, 100, 65536})
                for (int vs : {1, 1000, 0x7fffffff})
                    rnn_data_experiment(lib, t, "sizes", 0, l, ms, bs, vs, ones.data());
    rnn_data_experiment(lib, t, "seq NULL", 0, 0, 3, 4, 5, nullptr);
    for (int dt : {0, 1, 2, 9}) {
        rnn_data_experiment(lib, t, "fill", dt, 0, 3, 4, 5, sl);
        rnn_data_experiment(lib, t, "fill NULL", dt, 0, 3, 4, 5, sl, nullptr);
    }
    // Precedence.
    const int neg[4] = {-1, 1, 1, 1}, big[4] = {9, 1, 1, 1};
    rnn_data_experiment(lib, t, "dt5+layout9", 5, 9, 3, 4, 5, sl);
    rnn_data_experiment(lib, t, "dt5+ms0", 5, 0, 0, 4, 5, sl);
    rnn_data_experiment(lib, t, "dt5+bs0", 5, 0, 3, 0, 5, sl);
    rnn_data_experiment(lib, t, "dt5+vs0", 5, 0, 3, 4, 0, sl);
    rnn_data_experiment(lib, t, "dt5+seqNULL", 5, 0, 3, 4, 5, nullptr);
    rnn_data_experiment(lib, t, "dt-1+seqNULL", -1, 0, 3, 4, 5, nullptr);
    rnn_data_experiment(lib, t, "dt5+seqneg", 5, 0, 3, 4, 5, neg);
    rnn_data_experiment(lib, t, "dt5+seqbig", 5, 0, 3, 4, 5, big);
    rnn_data_experiment(lib, t, "dt-1+ms0", -1, 0, 0, 4, 5, sl);
    rnn_data_experiment(lib, t, "dt5+msbig", 5, 0, 1 << 20, 4, 5, sl);
    rnn_data_experiment(lib, t, "layout9+msbig", 0, 9, 1 << 20, 4, 5, sl);
    rnn_data_experiment(lib, t, "bs0+msbig", 0, 0, 1 << 20, 0, 5, sl);
    rnn_data_experiment(lib, t, "vs0+msbig", 0, 0, 1 << 20, 4, 0, sl);
    rnn_data_experiment(lib, t, "msbig+seqneg", 0, 0, 1 << 20, 4, 5, neg);
    rnn_data_experiment(lib, t, "msbig+seqNULL", 0, 0, 1 << 20, 4, 5, nullptr);
    rnn_data_experiment(lib, t, "packed+seqbig", 0, 1, 3, 4, 5, big);

    // Get: partial read-backs, NULL outputs.
    OCALL(lib, cudnnCreateRNNDataDescriptor, &d);
    const float ff = 2.5f;
    OCALL(lib, cudnnSetRNNDataDescriptor, d, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 3, 4, 5, sl,
          const_cast<float*>(&ff));
    for (int req : {-1, 0, 1, 3, 4, 5, 100}) {
        t.add("read req=%d", req);
        read_rnn_data(lib, t, d, req);
    }
    {
        cudnnDataType_t dt;
        cudnnRNNDataLayout_t l;
        int ms, bs, vs, s[8];
        float pf;
        OSTATUS(t, lib, cudnnGetRNNDataDescriptor, d, nullptr, &l, &ms, &bs, &vs, 0, s, &pf);
        OSTATUS(t, lib, cudnnGetRNNDataDescriptor, d, &dt, nullptr, &ms, &bs, &vs, 0, s, &pf);
        OSTATUS(t, lib, cudnnGetRNNDataDescriptor, d, &dt, &l, nullptr, &bs, &vs, 0, s, &pf);
        OSTATUS(t, lib, cudnnGetRNNDataDescriptor, d, &dt, &l, &ms, nullptr, &vs, 0, s, &pf);
        OSTATUS(t, lib, cudnnGetRNNDataDescriptor, d, &dt, &l, &ms, &bs, nullptr, 0, s, &pf);
        OSTATUS(t, lib, cudnnGetRNNDataDescriptor, d, &dt, &l, &ms, &bs, &vs, 0, s, nullptr);
        OSTATUS(t, lib, cudnnGetRNNDataDescriptor, d, &dt, &l, &ms, &bs, &vs, 0, nullptr, &pf);
        OSTATUS(t, lib, cudnnGetRNNDataDescriptor, d, &dt, &l, &ms, &bs, &vs, 1, nullptr, &pf);
        OSTATUS(t, lib, cudnnGetRNNDataDescriptor, d, &dt, &l, &ms, &bs, &vs, -1, nullptr, &pf);
        OSTATUS(t, lib, cudnnGetRNNDataDescriptor, nullptr, &dt, &l, &ms, &bs, &vs, 0, s, &pf);
        OSTATUS(t, lib, cudnnSetRNNDataDescriptor, nullptr, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                3, 4, 5, sl, nullptr);
    }
    OCALL(lib, cudnnDestroyRNNDataDescriptor, d);
    OSTATUS(t, lib, cudnnDestroyRNNDataDescriptor, nullptr);
    OSTATUS(t, lib, cudnnCreateRNNDataDescriptor, nullptr);
}

// ---------------------------------------------------------------------------
// Sequence data descriptor
// ---------------------------------------------------------------------------

void read_seq(const Lib& lib, Trace& t, cudnnSeqDataDescriptor_t d, int nb_req = 4, size_t sl_req = 16) {
    Trace r;
    cudnnDataType_t dt = static_cast<cudnnDataType_t>(-7);
    int nb = -7, dims[6];
    cudnnSeqDataAxis_t ax[6];
    for (int i = 0; i < 6; ++i) {
        dims[i] = -7;
        ax[i] = static_cast<cudnnSeqDataAxis_t>(-7);
    }
    size_t sls = 777;
    int sl[20];
    for (int& x : sl) x = -9;
    // paddingFill separately: NVIDIA answers INTERNAL_ERROR for a BFLOAT16 fill.
    cudnnStatus_t s = OCALL(lib, cudnnGetSeqDataDescriptor, d, &dt, &nb, nb_req, dims, ax, &sls, sl_req, sl, nullptr);
    std::string seq;
    for (int i = 0; i < 18; ++i) seq += std::to_string(sl[i]) + ",";
    r.add("get(%d,%zu) %d: dt=%d nb=%d dims=%d,%d,%d,%d,%d axes=%d,%d,%d,%d,%d sls=%zu sl=%s", nb_req, sl_req, s, dt,
          nb, dims[0], dims[1], dims[2], dims[3], dims[4], ax[0], ax[1], ax[2], ax[3], ax[4], sls, seq.c_str());
    if (s == CUDNN_STATUS_SUCCESS && dt != CUDNN_DATA_BFLOAT16) {
        unsigned char pf[12];
        std::memset(pf, 0xab, sizeof pf);
        s = OCALL(lib, cudnnGetSeqDataDescriptor, d, nullptr, nullptr, 0, nullptr, nullptr, nullptr, 0, nullptr, pf);
        r.add("fill %d: %s", s, hex(pf, sizeof pf).c_str());
    }
    append(t, r);
}

struct SeqArgs {
    int dt = CUDNN_DATA_FLOAT, nb = 4;
    int dims[4] = {5, 3, 2, 8};  // by axis: time, batch, beam, vect
    int axes[4] = {CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_VECT_DIM};
    size_t sls = 6;
    std::vector<int> seq = {5, 4, 3, 2, 1, 1};
    const void* fill = kFill;
};

void seq_experiment(const Lib& lib, Trace& t, const char* tag, const SeqArgs& a) {
    cudnnSeqDataDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateSeqDataDescriptor, &d);
    const int bdims[4] = {4, 1, 3, 2};
    const cudnnSeqDataAxis_t baxes[4] = {CUDNN_SEQDATA_TIME_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_BEAM_DIM,
                                         CUDNN_SEQDATA_VECT_DIM};
    const int bseq[3] = {4, 2, 1};
    const double bfill = -1.5;
    OCALL(lib, cudnnSetSeqDataDescriptor, d, CUDNN_DATA_DOUBLE, 4, bdims, baxes, 3, bseq, const_cast<double*>(&bfill));
    cudnnSeqDataAxis_t axes[8];
    int dims[8];
    for (int i = 0; i < 8; ++i) {
        axes[i] = static_cast<cudnnSeqDataAxis_t>(i < 4 ? a.axes[i] : 0);
        dims[i] = i < 4 ? a.dims[i] : 1;
    }
    t.add("%s dt=%d nb=%d dims=%d,%d,%d,%d axes=%d,%d,%d,%d sls=%zu -> %d", tag, a.dt, a.nb, a.dims[0], a.dims[1],
          a.dims[2], a.dims[3], a.axes[0], a.axes[1], a.axes[2], a.axes[3], a.sls,
          OCALL(lib, cudnnSetSeqDataDescriptor, d, static_cast<cudnnDataType_t>(a.dt), a.nb, dims, axes, a.sls,
                a.seq.data(), const_cast<void*>(a.fill)));
    read_seq(lib, t, d);
    OCALL(lib, cudnnDestroySeqDataDescriptor, d);
}

// Data types cuDNN's sequence data supports, plus the undefined ones (BAD_PARAM).
bool seq_dt_comparable(int dt) { return dt < 0 || dt > 21 || dt == 0 || dt == 1 || dt == 2 || dt == 9; }

void seq_data_descriptor(const Lib& lib, Trace& t) {
    cudnnSeqDataDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateSeqDataDescriptor, &d);
    t.add("fresh");
    read_seq(lib, t, d);
    OCALL(lib, cudnnDestroySeqDataDescriptor, d);

    seq_experiment(lib, t, "base", SeqArgs());
    for (int dt = -2; dt <= 23; ++dt) {
        if (!seq_dt_comparable(dt)) continue;
        SeqArgs a;
        a.dt = dt;
        seq_experiment(lib, t, "dataType", a);
        a.fill = nullptr;
        seq_experiment(lib, t, "dataType fill NULL", a);
    }
    for (int nb : {-1, 0, 1, 3, 5, 8, 9}) {
        SeqArgs a;
        a.nb = nb;
        seq_experiment(lib, t, "nbDims", a);
    }
    for (int i = 0; i < 4; ++i)
        for (int v : {-1, 0, 1, 2, 100, 0x7fffffff}) {
            SeqArgs a;
            a.dims[i] = v;
            if (v > 0 && v <= 100 && (i == CUDNN_SEQDATA_BATCH_DIM || i == CUDNN_SEQDATA_BEAM_DIM)) {
                a.sls = static_cast<size_t>(a.dims[1]) * a.dims[2];
                a.seq.assign(a.sls, 1);
            } else if (i == CUDNN_SEQDATA_TIME_DIM) {
                a.seq.assign(6, 1);
            }
            seq_experiment(lib, t, "dim", a);
        }
    {
        // Every order of the three outer axes, the vector axis anywhere, and bad values.
        int perm[4] = {0, 1, 2, 3};
        do {
            SeqArgs a;
            for (int i = 0; i < 4; ++i) a.axes[i] = perm[i];
            seq_experiment(lib, t, "axes", a);
        } while (std::next_permutation(perm, perm + 4));
        const int bad[][4] = {{0, 0, 2, 3}, {0, 1, 2, 4}, {-1, 1, 2, 3}, {3, 3, 3, 3}, {1, 2, 0, 0}};
        for (const auto& b : bad) {
            SeqArgs a;
            for (int i = 0; i < 4; ++i) a.axes[i] = b[i];
            seq_experiment(lib, t, "bad axes", a);
        }
    }
    for (size_t n : {0, 1, 5, 6, 7, 12}) {
        SeqArgs a;
        a.sls = n;
        a.seq.assign(12, 1);
        seq_experiment(lib, t, "seqLengthArraySize", a);
    }
    const std::vector<int> seqs[] = {{5, 5, 5, 5, 5, 5},  {0, 0, 0, 0, 0, 0}, {6, 1, 1, 1, 1, 1},
                                     {-1, 1, 1, 1, 1, 1}, {1, 2, 3, 4, 5, 5}, {1, 1, 1, 1, 1, 0}};
    for (const auto& q : seqs) {
        SeqArgs a;
        a.seq = q;
        seq_experiment(lib, t, "seq", a);
    }
    for (int dt : {0, 1, 2, 9}) {
        SeqArgs a;
        a.dt = dt;
        seq_experiment(lib, t, "fill", a);
    }
    {
        SeqArgs a;
        a.dims[1] = 1 << 14;
        a.dims[2] = 4;
        a.sls = size_t{1} << 16;
        a.seq.assign(a.sls, 2);
        seq_experiment(lib, t, "big batch", a);
        a = SeqArgs();
        a.dims[1] = 1 << 16;
        a.dims[2] = 1 << 16;
        a.sls = 0;
        seq_experiment(lib, t, "batch x beam overflows int", a);
        a = SeqArgs();
        a.dims[0] = a.dims[3] = 0x7fffffff;
        seq_experiment(lib, t, "huge time and vector", a);
    }
    // Precedence.
    {
        SeqArgs a;
        a.dt = 22;
        a.nb = 3;
        seq_experiment(lib, t, "dt22+nb3", a);
        a = SeqArgs();
        a.nb = 3;
        a.dims[0] = 0;
        seq_experiment(lib, t, "nb3+dim0", a);
        a.nb = 0;
        seq_experiment(lib, t, "nb0+dim0", a);
        a = SeqArgs();
        a.dims[0] = 0;
        a.axes[0] = a.axes[1];
        seq_experiment(lib, t, "dim0+axes", a);
        a = SeqArgs();
        a.axes[0] = a.axes[1];
        a.sls = 5;
        seq_experiment(lib, t, "axes+sls", a);
        a = SeqArgs();
        a.sls = 5;
        a.seq.assign(6, 0);
        seq_experiment(lib, t, "sls+seq", a);
    }

    // Get: partial read-backs, NULL outputs.
    OCALL(lib, cudnnCreateSeqDataDescriptor, &d);
    {
        SeqArgs a;
        cudnnSeqDataAxis_t axes[4];
        for (int i = 0; i < 4; ++i) axes[i] = static_cast<cudnnSeqDataAxis_t>(a.axes[i]);
        OCALL(lib, cudnnSetSeqDataDescriptor, d, CUDNN_DATA_FLOAT, 4, a.dims, axes, a.sls, a.seq.data(),
              const_cast<void*>(a.fill));
    }
    for (int nb_req : {-1, 0, 1, 2, 3, 4, 5}) {
        t.add("read nbDimsRequested=%d", nb_req);
        read_seq(lib, t, d, nb_req, 16);
    }
    for (size_t sl_req : {0, 1, 5, 6, 7, 16}) {
        t.add("read seqLengthSizeRequested=%zu", sl_req);
        read_seq(lib, t, d, 4, sl_req);
    }
    {
        cudnnDataType_t dt = static_cast<cudnnDataType_t>(-7);
        int nb = -7, dims[4] = {-7, -7, -7, -7}, s[6] = {-9, -9, -9, -9, -9, -9};
        cudnnSeqDataAxis_t ax[4];
        size_t sls = 777;
        float pf = -7;
        t.add("get all NULL %d", OCALL(lib, cudnnGetSeqDataDescriptor, d, nullptr, nullptr, 4, nullptr, nullptr,
                                       nullptr, 6, nullptr, nullptr));
        t.add(
            "get dims only %d: %d %d %d %d",
            OCALL(lib, cudnnGetSeqDataDescriptor, d, nullptr, nullptr, 4, dims, nullptr, nullptr, 6, nullptr, nullptr),
            dims[0], dims[1], dims[2], dims[3]);
        t.add("get seq only %d: %d %d %zu",
              OCALL(lib, cudnnGetSeqDataDescriptor, d, &dt, nullptr, 4, nullptr, ax, &sls, 6, s, nullptr), dt, s[5],
              sls);
        t.add("get nb,fill %d: %d %g",
              OCALL(lib, cudnnGetSeqDataDescriptor, d, nullptr, &nb, 0, nullptr, nullptr, nullptr, 0, nullptr, &pf), nb,
              pf);
        OSTATUS(t, lib, cudnnGetSeqDataDescriptor, nullptr, &dt, &nb, 4, dims, ax, &sls, 6, s, &pf);
        SeqArgs a;
        cudnnSeqDataAxis_t axes[4];
        for (int i = 0; i < 4; ++i) axes[i] = static_cast<cudnnSeqDataAxis_t>(a.axes[i]);
        OSTATUS(t, lib, cudnnSetSeqDataDescriptor, nullptr, CUDNN_DATA_FLOAT, 4, a.dims, axes, a.sls, a.seq.data(),
                nullptr);
        OSTATUS(t, lib, cudnnSetSeqDataDescriptor, nullptr, CUDNN_DATA_INT8, 4, a.dims, axes, a.sls, a.seq.data(),
                nullptr);
    }
    OCALL(lib, cudnnDestroySeqDataDescriptor, d);
    OSTATUS(t, lib, cudnnDestroySeqDataDescriptor, nullptr);
    OSTATUS(t, lib, cudnnCreateSeqDataDescriptor, nullptr);
}

// ---------------------------------------------------------------------------
// Attention descriptor
// ---------------------------------------------------------------------------

struct AttnArgs {
    unsigned mode = CUDNN_ATTN_ENABLE_PROJ_BIASES;
    int nh = 2;
    double sm = 0.5;
    int dt = CUDNN_DATA_FLOAT, cp = CUDNN_DATA_FLOAT, mt = CUDNN_DEFAULT_MATH;
    cudnnDropoutDescriptor_t ad = nullptr, pd = nullptr;
    int q = 8, k = 6, v = 4, qp = 4, kp = 4, vp = 2, op = 3, qo = 5, kv = 7, b = 3, bm = 2;
};

cudnnStatus_t set_attn(const Lib& lib, cudnnAttnDescriptor_t d, const AttnArgs& a) {
    return OCALL(lib, cudnnSetAttnDescriptor, d, a.mode, a.nh, a.sm, static_cast<cudnnDataType_t>(a.dt),
                 static_cast<cudnnDataType_t>(a.cp), static_cast<cudnnMathType_t>(a.mt), a.ad, a.pd, a.q, a.k, a.v,
                 a.qp, a.kp, a.vp, a.op, a.qo, a.kv, a.b, a.bm);
}

std::string attn_text(const AttnArgs& a) {
    char b[256];
    std::snprintf(b, sizeof b,
                  "mode=%u nh=%d sm=%g dt=%d cp=%d mt=%d q=%d k=%d v=%d qp=%d kp=%d vp=%d op=%d qo=%d "
                  "kv=%d b=%d bm=%d",
                  a.mode, a.nh, a.sm, a.dt, a.cp, a.mt, a.q, a.k, a.v, a.qp, a.kp, a.vp, a.op, a.qo, a.kv, a.b, a.bm);
    return b;
}

void read_attn(const Lib& lib, Trace& t, cudnnAttnDescriptor_t d, cudnnDropoutDescriptor_t k1 = nullptr,
               cudnnDropoutDescriptor_t k2 = nullptr) {
    Trace r;
    unsigned mode = 77;
    int nh = -7;
    double sm = -7;
    cudnnDataType_t dt = static_cast<cudnnDataType_t>(-7), cp = static_cast<cudnnDataType_t>(-7);
    cudnnMathType_t mt = static_cast<cudnnMathType_t>(-7);
    cudnnDropoutDescriptor_t ad = reinterpret_cast<cudnnDropoutDescriptor_t>(uintptr_t{8}), pd = ad;
    int v[11];
    for (int& x : v) x = -7;
    const cudnnStatus_t s = OCALL(lib, cudnnGetAttnDescriptor, d, &mode, &nh, &sm, &dt, &cp, &mt, &ad, &pd, &v[0],
                                  &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]);
    auto name = [&](cudnnDropoutDescriptor_t p) {
        return p == nullptr ? "null" : (k1 && p == k1) ? "d1" : (k2 && p == k2) ? "d2" : "other";
    };
    r.add("get %d: mode=%u nh=%d sm=%g dt=%d cp=%d mt=%d ad=%s pd=%s sizes=%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", s, mode,
          nh, sm, dt, cp, mt, name(ad), name(pd), v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]);
    append(t, r);
}

void attn_experiment(const Lib& lib, Trace& t, const char* tag, const AttnArgs& a) {
    cudnnAttnDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateAttnDescriptor, &d);
    AttnArgs base;
    base.q = 9;
    base.sm = 0.25;
    set_attn(lib, d, base);
    t.add("%s [%s] -> %d", tag, attn_text(a).c_str(), set_attn(lib, d, a));
    read_attn(lib, t, d, a.ad, a.pd);
    OCALL(lib, cudnnDestroyAttnDescriptor, d);
}

void attn_descriptor(const Lib& lib, Trace& t) {
    cudnnAttnDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateAttnDescriptor, &d);
    t.add("fresh");
    read_attn(lib, t, d);
    OCALL(lib, cudnnDestroyAttnDescriptor, d);

    attn_experiment(lib, t, "base", AttnArgs());
    for (unsigned m : {0u, 1u, 2u, 3u, 4u, 5u, 8u, 0x80000000u, 0xffffffffu}) {
        AttnArgs a;
        a.mode = m;
        attn_experiment(lib, t, "attnMode", a);
    }
    for (int v : {-1, 0, 1, 3, 1000}) {
        AttnArgs a;
        a.nh = v;
        attn_experiment(lib, t, "nHeads", a);
    }
    for (double v : std::initializer_list<double>{-1.0, -0.0, 0.0, 1e-30, 1.0, 1e30, INFINITY, -INFINITY, NAN}) {
        AttnArgs a;
        a.sm = v;
        attn_experiment(lib, t, "smScaler", a);
    }
    for (int dt = -1; dt <= 22; ++dt)
        for (int cp : {-1, 0, 1, 2, 3, 9}) {
            AttnArgs a;
            a.dt = dt;
            a.cp = cp;
            attn_experiment(lib, t, "types", a);
        }
    for (int mt = -1; mt <= 5; ++mt)
        for (int dt : {0, 2}) {
            AttnArgs a;
            a.mt = mt;
            a.dt = a.cp = dt;
            attn_experiment(lib, t, "mathType", a);
        }
    for (int i = 0; i < 11; ++i)
        for (int v : {-1, 0, 1, 2, 3, 4, 5, 6, 8, 65536, 0x7fffffff}) {
            AttnArgs a;
            int* f[] = {&a.q, &a.k, &a.v, &a.qp, &a.kp, &a.vp, &a.op, &a.qo, &a.kv, &a.b, &a.bm};
            *f[i] = v;
            attn_experiment(lib, t, "size", a);
        }
    for (int qp : {0, 4, 6})
        for (int kp : {0, 4, 3, 6})
            for (int q : {4, 6})
                for (int k : {4, 6}) {
                    AttnArgs a;
                    a.qp = qp;
                    a.kp = kp;
                    a.q = q;
                    a.k = k;
                    attn_experiment(lib, t, "projections", a);
                }
    for (int vp : {0, 2})
        for (int op : {0, 3}) {
            AttnArgs a;
            a.vp = vp;
            a.op = op;
            attn_experiment(lib, t, "v/o projections", a);
        }
    // Precedence.
    {
        using Mod = void (*)(AttnArgs&);
        const std::pair<const char*, Mod> bad[] = {
            {"mode4", [](AttnArgs& a) { a.mode = 4; }}, {"nh0", [](AttnArgs& a) { a.nh = 0; }},
            {"sm-1", [](AttnArgs& a) { a.sm = -1; }},   {"dt3", [](AttnArgs& a) { a.dt = 3; }},
            {"cp9", [](AttnArgs& a) { a.cp = 9; }},     {"mt9", [](AttnArgs& a) { a.mt = 9; }},
            {"q0", [](AttnArgs& a) { a.q = 0; }},       {"k0", [](AttnArgs& a) { a.k = 0; }},
            {"v0", [](AttnArgs& a) { a.v = 0; }},       {"qp-1", [](AttnArgs& a) { a.qp = -1; }},
            {"kp-1", [](AttnArgs& a) { a.kp = -1; }},   {"qp!=kp", [](AttnArgs& a) { a.qp = 3; }},
            {"vp-1", [](AttnArgs& a) { a.vp = -1; }},   {"op-1", [](AttnArgs& a) { a.op = -1; }},
            {"qo0", [](AttnArgs& a) { a.qo = 0; }},     {"kv0", [](AttnArgs& a) { a.kv = 0; }},
            {"b0", [](AttnArgs& a) { a.b = 0; }},       {"bm0", [](AttnArgs& a) { a.bm = 0; }}};
        const std::pair<const char*, Mod> unsupported[] = {{"one-to-one", [](AttnArgs& a) { a.mode |= 1; }},
                                                           {"FLOAT/HALF", [](AttnArgs& a) { a.cp = 2; }},
                                                           {"DOUBLE/FLOAT", [](AttnArgs& a) { a.dt = 1; }},
                                                           {"BFLOAT16/HALF", [](AttnArgs& a) { a.dt = 9, a.cp = 2; }}};
        for (const auto& b : bad)
            for (const auto& u : unsupported) {
                AttnArgs a;
                u.second(a);
                b.second(a);
                const std::string tag = std::string("precedence ") + b.first + " + " + u.first;
                attn_experiment(lib, t, tag.c_str(), a);
            }
    }
    if (dropout_available()) {
        cudnnDropoutDescriptor_t d1 = nullptr, d2 = nullptr;
        OCALL(lib, cudnnCreateDropoutDescriptor, &d1);
        OCALL(lib, cudnnCreateDropoutDescriptor, &d2);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                AttnArgs a;
                a.ad = i == 0 ? nullptr : i == 1 ? d1 : d2;
                a.pd = j == 0 ? nullptr : j == 1 ? d1 : d2;
                attn_experiment(lib, t, "dropout", a);
            }
        OCALL(lib, cudnnDestroyDropoutDescriptor, d1);
        OCALL(lib, cudnnDestroyDropoutDescriptor, d2);
    }

    // Getters skip NULL outputs, one at a time.
    OCALL(lib, cudnnCreateAttnDescriptor, &d);
    AttnArgs a;
    a.dt = CUDNN_DATA_HALF;
    a.mt = CUDNN_TENSOR_OP_MATH;
    set_attn(lib, d, a);
    for (int null_at = 0; null_at < 19; ++null_at) {
        unsigned mode = 77;
        int nh = -7;
        double sm = -7;
        cudnnDataType_t dt = static_cast<cudnnDataType_t>(-7), cp = dt;
        cudnnMathType_t mt = static_cast<cudnnMathType_t>(-7);
        cudnnDropoutDescriptor_t ad = reinterpret_cast<cudnnDropoutDescriptor_t>(uintptr_t{8}), pd = ad;
        int v[11];
        for (int& x : v) x = -7;
        void* p[19] = {&mode, &nh,   &sm,   &dt,   &cp,   &mt,   &ad,   &pd,   &v[0], &v[1],
                       &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]};
        p[null_at] = nullptr;
        const cudnnStatus_t s =
            OCALL(lib, cudnnGetAttnDescriptor, d, static_cast<unsigned*>(p[0]), static_cast<int*>(p[1]),
                  static_cast<double*>(p[2]), static_cast<cudnnDataType_t*>(p[3]), static_cast<cudnnDataType_t*>(p[4]),
                  static_cast<cudnnMathType_t*>(p[5]), static_cast<cudnnDropoutDescriptor_t*>(p[6]),
                  static_cast<cudnnDropoutDescriptor_t*>(p[7]), static_cast<int*>(p[8]), static_cast<int*>(p[9]),
                  static_cast<int*>(p[10]), static_cast<int*>(p[11]), static_cast<int*>(p[12]),
                  static_cast<int*>(p[13]), static_cast<int*>(p[14]), static_cast<int*>(p[15]),
                  static_cast<int*>(p[16]), static_cast<int*>(p[17]), static_cast<int*>(p[18]));
        t.add("get NULL #%d %d: %u %d %g %d %d %d %d %d sizes=%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", null_at, s, mode, nh,
              sm, dt, cp, mt, ad == nullptr, pd == nullptr, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
              v[10]);
    }
    OCALL(lib, cudnnDestroyAttnDescriptor, d);
    t.add("set NULL -> %d", set_attn(lib, nullptr, AttnArgs()));
    AttnArgs bad;
    bad.nh = 0;
    t.add("set NULL bad -> %d", set_attn(lib, nullptr, bad));
    OSTATUS(t, lib, cudnnGetAttnDescriptor, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    OSTATUS(t, lib, cudnnDestroyAttnDescriptor, nullptr);
    OSTATUS(t, lib, cudnnCreateAttnDescriptor, nullptr);
}

// ---------------------------------------------------------------------------
// Size queries that need a handle (both libraries must create one)
// ---------------------------------------------------------------------------

char* const kBase = reinterpret_cast<char*>(uintptr_t{0x10000000});

std::string offset_text(const void* p) {
    if (p == nullptr) return "NULL";
    if (p == reinterpret_cast<void*>(uintptr_t{1})) return "untouched";
    return std::to_string(static_cast<const char*>(p) - kBase);
}

std::string tensor_text(const Lib& lib, cudnnTensorDescriptor_t d) {
    cudnnDataType_t dt = static_cast<cudnnDataType_t>(-1);
    int nb = -1, dims[8] = {}, strides[8] = {};
    const cudnnStatus_t s = OCALL(lib, cudnnGetTensorNdDescriptor, d, 8, &dt, &nb, dims, strides);
    char b[160];
    std::snprintf(b, sizeof b, "[%d dt=%d nb=%d %d,%d,%d / %d,%d,%d]", s, dt, nb, dims[0], dims[1], dims[2], strides[0],
                  strides[1], strides[2]);
    return b;
}

void weights_of(const Lib& lib, Trace& t, cudnnHandle_t h, const RnnArgs& a) {
    cudnnRNNDescriptor_t r = nullptr;
    OCALL(lib, cudnnCreateRNNDescriptor, &r);
    const cudnnStatus_t s = set_rnn(lib, r, a);
    size_t w = 99;
    const cudnnStatus_t sw = OCALL(lib, cudnnGetRNNWeightSpaceSize, h, r, &w);
    t.add("weights [%s]: set %d, size %d %zu", args_text(a).c_str(), s, sw, w);
    if (s == CUDNN_STATUS_SUCCESS && sw == CUDNN_STATUS_SUCCESS) {
        const int pseudo = a.layers * (a.dir == CUDNN_BIDIRECTIONAL ? 2 : 1);
        cudnnTensorDescriptor_t m = nullptr, b = nullptr;
        OCALL(lib, cudnnCreateTensorDescriptor, &m);
        OCALL(lib, cudnnCreateTensorDescriptor, &b);
        for (int p = -1; p <= pseudo; ++p)
            for (int id = -1; id <= 10; ++id) {
                void* ma = reinterpret_cast<void*>(uintptr_t{1});
                void* ba = ma;
                const cudnnStatus_t st = OCALL(lib, cudnnGetRNNWeightParams, h, r, p, w, kBase, id, m, &ma, b, &ba);
                std::string line = "  p=" + std::to_string(p) + " id=" + std::to_string(id) + ": " +
                                   std::to_string(st) + " m=" + offset_text(ma);
                if (st == CUDNN_STATUS_SUCCESS && ma) line += " " + tensor_text(lib, m);
                line += " b=" + offset_text(ba);
                if (st == CUDNN_STATUS_SUCCESS && ba) line += " " + tensor_text(lib, b);
                t.lines.push_back(line);
            }
        OCALL(lib, cudnnDestroyTensorDescriptor, m);
        OCALL(lib, cudnnDestroyTensorDescriptor, b);
    }
    OCALL(lib, cudnnDestroyRNNDescriptor, r);
}

void rnn_weight_space(const Lib& lib, Trace& t) {
    if (!handles_available()) {
        t.add("no handle from both libraries: weight-space experiments skipped");
        return;
    }
    cudnnHandle_t h = nullptr;
    OCALL(lib, cudnnCreate, &h);
    for (int cell = 0; cell <= 3; ++cell)
        for (int bias = 0; bias <= 3; ++bias)
            for (int dir = 0; dir <= 1; ++dir)
                for (int im = 0; im <= 1; ++im) {
                    RnnArgs a;
                    a.cell = cell;
                    a.bias = bias;
                    a.dir = dir;
                    a.in_mode = im;
                    weights_of(lib, t, h, a);
                }
    for (int dir = 0; dir <= 1; ++dir)
        for (int bias : {0, 1, 2, 3})
            for (int layers : {1, 3})
                for (int im = 0; im <= 1; ++im) {
                    RnnArgs a;
                    a.proj = 7;
                    a.dir = dir;
                    a.bias = bias;
                    a.layers = layers;
                    a.in_mode = im;
                    weights_of(lib, t, h, a);
                }
    for (int dt : {1, 2, 9})
        for (int cell = 0; cell <= 3; ++cell) {
            RnnArgs a;
            a.dt = dt;
            a.mp = dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
            a.cell = cell;
            a.dir = CUDNN_BIDIRECTIONAL;
            a.in = 3;
            a.hid = a.proj = 5;
            weights_of(lib, t, h, a);
        }
    for (int algo = 1; algo <= 3; ++algo) {
        RnnArgs a;
        a.algo = algo;
        weights_of(lib, t, h, a);
    }
    {
        RnnArgs a;
        a.in = a.hid = a.proj = a.layers = 1;
        weights_of(lib, t, h, a);
        a = RnnArgs();
        a.cell = CUDNN_GRU;
        a.in = 30;
        a.in_mode = CUDNN_SKIP_INPUT;
        weights_of(lib, t, h, a);
        a = RnnArgs();
        a.dt = a.mp = CUDNN_DATA_HALF;
        a.cell = CUDNN_RNN_TANH;
        a.in = 3;
        a.hid = a.proj = 5;
        a.layers = 1;
        weights_of(lib, t, h, a);
    }

    // Argument checks.
    cudnnRNNDescriptor_t r = nullptr;
    OCALL(lib, cudnnCreateRNNDescriptor, &r);
    size_t w = 99;
    t.add("size of unset %d", OCALL(lib, cudnnGetRNNWeightSpaceSize, h, r, &w));
    cudnnTensorDescriptor_t m = nullptr, b = nullptr;
    OCALL(lib, cudnnCreateTensorDescriptor, &m);
    OCALL(lib, cudnnCreateTensorDescriptor, &b);
    void* ma = nullptr;
    void* ba = nullptr;
    t.add("params of unset %d", OCALL(lib, cudnnGetRNNWeightParams, h, r, 0, 1000, kBase, 0, m, &ma, nullptr, nullptr));
    set_rnn(lib, r, RnnArgs());
    OSTATUS(t, lib, cudnnGetRNNWeightSpaceSize, nullptr, r, &w);
    OSTATUS(t, lib, cudnnGetRNNWeightSpaceSize, h, nullptr, &w);
    OSTATUS(t, lib, cudnnGetRNNWeightSpaceSize, h, r, nullptr);
    OCALL(lib, cudnnGetRNNWeightSpaceSize, h, r, &w);
    // Bounds: (pseudo-layer 0, id 0) is the first matrix, (1, 7) the last bias.
    for (int which = 0; which < 2; ++which) {
        const int p = which ? 1 : 0, id = which ? 7 : 0;
        for (size_t size :
             {size_t{0}, size_t{1}, size_t{799}, size_t{800}, w - 81, w - 80, w - 1, w, w + 1, size_t{1} << 40})
            for (int null_w = 0; null_w <= 1; ++null_w) {
                ma = ba = reinterpret_cast<void*>(uintptr_t{1});
                const cudnnStatus_t st =
                    OCALL(lib, cudnnGetRNNWeightParams, h, r, p, size, null_w ? nullptr : kBase, id, m, &ma, b, &ba);
                t.add("bounds p=%d id=%d size=%zu null=%d: %d m=%s b=%s", p, id, size, null_w, st,
                      null_w ? (ma ? "set" : "NULL") : offset_text(ma).c_str(),
                      null_w ? (ba ? "set" : "NULL") : offset_text(ba).c_str());
            }
    }
    // Which of (mDesc, mAddr, bDesc, bAddr) may be NULL (not mDesc without mAddr:
    // NVIDIA's library crashes on that).
    const int combos[][4] = {{1, 1, 1, 1}, {0, 1, 1, 1}, {0, 0, 1, 1}, {1, 1, 0, 1},
                             {1, 1, 0, 0}, {0, 0, 0, 0}, {0, 1, 0, 1}};
    for (const auto& k : combos) {
        ma = ba = reinterpret_cast<void*>(uintptr_t{1});
        const cudnnStatus_t st = OCALL(lib, cudnnGetRNNWeightParams, h, r, 1, w, kBase, 2, k[0] ? m : nullptr,
                                       k[1] ? &ma : nullptr, k[2] ? b : nullptr, k[3] ? &ba : nullptr);
        t.add("params mDesc=%d mAddr=%d bDesc=%d bAddr=%d: %d m=%s b=%s", k[0], k[1], k[2], k[3], st,
              offset_text(ma).c_str(), offset_text(ba).c_str());
    }
    // A region that does not exist: what the descriptor and address read.
    {
        RnnArgs a;
        a.in_mode = CUDNN_SKIP_INPUT;
        a.bias = CUDNN_RNN_NO_BIAS;
        cudnnRNNDescriptor_t r2 = nullptr;
        OCALL(lib, cudnnCreateRNNDescriptor, &r2);
        set_rnn(lib, r2, a);
        size_t w2 = 0;
        OCALL(lib, cudnnGetRNNWeightSpaceSize, h, r2, &w2);
        const int dims[3] = {2, 3, 4}, strides[3] = {12, 4, 1};
        OCALL(lib, cudnnSetTensorNdDescriptor, m, CUDNN_DATA_HALF, 3, dims, strides);
        OCALL(lib, cudnnSetTensorNdDescriptor, b, CUDNN_DATA_HALF, 3, dims, strides);
        ma = ba = reinterpret_cast<void*>(uintptr_t{1});
        const cudnnStatus_t st = OCALL(lib, cudnnGetRNNWeightParams, h, r2, 0, w2, kBase, 0, m, &ma, b, &ba);
        t.add("absent regions %d: m=%s %s b=%s %s", st, offset_text(ma).c_str(), tensor_text(lib, m).c_str(),
              offset_text(ba).c_str(), tensor_text(lib, b).c_str());
        OCALL(lib, cudnnDestroyRNNDescriptor, r2);
    }
    OSTATUS(t, lib, cudnnGetRNNWeightParams, nullptr, r, 1, w, kBase, 2, m, &ma, b, &ba);
    OSTATUS(t, lib, cudnnGetRNNWeightParams, h, nullptr, 1, w, kBase, 2, m, &ma, b, &ba);
    OCALL(lib, cudnnDestroyTensorDescriptor, m);
    OCALL(lib, cudnnDestroyTensorDescriptor, b);
    OCALL(lib, cudnnDestroyRNNDescriptor, r);
    OCALL(lib, cudnnDestroy, h);
}

void rnn_temp_space(const Lib& lib, Trace& t) {
    if (!handles_available()) {
        t.add("no handle from both libraries: temp-space experiments skipped");
        return;
    }
    cudnnHandle_t h = nullptr;
    OCALL(lib, cudnnCreate, &h);
    cudnnRNNDescriptor_t r = nullptr;
    OCALL(lib, cudnnCreateRNNDescriptor, &r);
    cudnnRNNDataDescriptor_t x = nullptr;
    OCALL(lib, cudnnCreateRNNDataDescriptor, &x);
    const int sl[64] = {5, 5, 5, 5, 5, 5, 5, 5};
    size_t ws = 7, rs = 7;
    OCALL(lib, cudnnSetRNNDataDescriptor, x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 5, 3, 10, sl,
          nullptr);
    t.add("unset rnn %d", OCALL(lib, cudnnGetRNNTempSpaceSizes, h, r, CUDNN_FWD_MODE_TRAINING, x, &ws, &rs));
    set_rnn(lib, r, RnnArgs());
    cudnnRNNDataDescriptor_t unset = nullptr;
    OCALL(lib, cudnnCreateRNNDataDescriptor, &unset);
    t.add("unset x %d", OCALL(lib, cudnnGetRNNTempSpaceSizes, h, r, CUDNN_FWD_MODE_TRAINING, unset, &ws, &rs));
    OCALL(lib, cudnnDestroyRNNDataDescriptor, unset);
    for (int fwd : {-1, 0, 1, 2})
        for (int xdt : {0, 1, 2})
            for (int vs : {9, 10, 11})
                for (int lay : {0, 1, 2}) {
                    OCALL(lib, cudnnSetRNNDataDescriptor, x, static_cast<cudnnDataType_t>(xdt),
                          static_cast<cudnnRNNDataLayout_t>(lay), 5, 3, vs, sl, nullptr);
                    ws = rs = 7;
                    const cudnnStatus_t s =
                        OCALL(lib, cudnnGetRNNTempSpaceSizes, h, r, static_cast<cudnnForwardMode_t>(fwd), x, &ws, &rs);
                    t.add("temp fwd=%d x dt=%d vs=%d layout=%d: %d%s", fwd, xdt, vs, lay, s,
                          s == CUDNN_STATUS_SUCCESS && fwd == CUDNN_FWD_MODE_INFERENCE ? (rs == 0 ? " rs=0" : " rs!=0")
                                                                                       : "");
                }
    OCALL(lib, cudnnSetRNNDataDescriptor, x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 5, 3, 10, sl,
          nullptr);
    ws = rs = 7;
    t.add("ws NULL %d", OCALL(lib, cudnnGetRNNTempSpaceSizes, h, r, CUDNN_FWD_MODE_TRAINING, x, nullptr, &rs));
    t.add("rs NULL %d", OCALL(lib, cudnnGetRNNTempSpaceSizes, h, r, CUDNN_FWD_MODE_TRAINING, x, &ws, nullptr));
    t.add("both NULL %d", OCALL(lib, cudnnGetRNNTempSpaceSizes, h, r, CUDNN_FWD_MODE_INFERENCE, x, nullptr, nullptr));
    OSTATUS(t, lib, cudnnGetRNNTempSpaceSizes, nullptr, r, CUDNN_FWD_MODE_TRAINING, x, &ws, &rs);
    OSTATUS(t, lib, cudnnGetRNNTempSpaceSizes, h, nullptr, CUDNN_FWD_MODE_TRAINING, x, &ws, &rs);
    OSTATUS(t, lib, cudnnGetRNNTempSpaceSizes, h, r, CUDNN_FWD_MODE_TRAINING, nullptr, &ws, &rs);
    OCALL(lib, cudnnDestroyRNNDataDescriptor, x);
    OCALL(lib, cudnnDestroyRNNDescriptor, r);
    OCALL(lib, cudnnDestroy, h);
}

void attn_buffers(const Lib& lib, Trace& t) {
    if (!handles_available()) {
        t.add("no handle from both libraries: attention-buffer experiments skipped");
        return;
    }
    cudnnHandle_t h = nullptr;
    OCALL(lib, cudnnCreate, &h);
    cudnnAttnDescriptor_t d = nullptr;
    OCALL(lib, cudnnCreateAttnDescriptor, &d);
    size_t w = 7, ws = 7, rs = 7;
    t.add("unset %d", OCALL(lib, cudnnGetMultiHeadAttnBuffers, h, d, &w, &ws, &rs));
    std::vector<AttnArgs> configs;
    configs.emplace_back();
    for (unsigned mode : {0u, 2u})
        for (int dt : {0, 1, 2, 9}) {
            AttnArgs a;
            a.mode = mode;
            a.dt = dt;
            a.cp = dt == 9 ? 0 : dt;
            configs.push_back(a);
        }
    for (int nh : {1, 4})
        for (int qp : {0, 4})
            for (int vp : {0, 2})
                for (int op : {0, 5}) {
                    AttnArgs a;
                    a.nh = nh;
                    a.qp = a.kp = qp;
                    a.q = a.k = 6;
                    a.vp = vp;
                    a.op = op;
                    configs.push_back(a);
                }
    for (const AttnArgs& a : configs) {
        set_attn(lib, d, a);
        w = ws = rs = 7;
        const cudnnStatus_t s = OCALL(lib, cudnnGetMultiHeadAttnBuffers, h, d, &w, &ws, &rs);
        t.add("buffers [%s]: %d weights %zu", attn_text(a).c_str(), s, w);
    }
    set_attn(lib, d, AttnArgs());
    t.add("w NULL %d", OCALL(lib, cudnnGetMultiHeadAttnBuffers, h, d, nullptr, &ws, &rs));
    t.add("ws NULL %d", OCALL(lib, cudnnGetMultiHeadAttnBuffers, h, d, &w, nullptr, &rs));
    t.add("rs NULL %d", OCALL(lib, cudnnGetMultiHeadAttnBuffers, h, d, &w, &ws, nullptr));
    t.add("ws,rs NULL %d", OCALL(lib, cudnnGetMultiHeadAttnBuffers, h, d, &w, nullptr, nullptr));
    OSTATUS(t, lib, cudnnGetMultiHeadAttnBuffers, nullptr, d, &w, &ws, &rs);
    OSTATUS(t, lib, cudnnGetMultiHeadAttnBuffers, h, nullptr, &w, &ws, &rs);
    OCALL(lib, cudnnDestroyAttnDescriptor, d);
    OCALL(lib, cudnnDestroy, h);
}

TEST(Oracle, CtcLossDescriptor) { oracle::expect_same("ctc_loss", ctc_loss); }
TEST(Oracle, RnnDescriptor) { oracle::expect_same("rnn_descriptor", rnn_descriptor); }
TEST(Oracle, RnnDataDescriptor) { oracle::expect_same("rnn_data_descriptor", rnn_data_descriptor); }
TEST(Oracle, SeqDataDescriptor) { oracle::expect_same("seq_data_descriptor", seq_data_descriptor); }
TEST(Oracle, AttnDescriptor) { oracle::expect_same("attn_descriptor", attn_descriptor); }
TEST(Oracle, RnnWeightSpace) { oracle::expect_same("rnn_weight_space", rnn_weight_space); }
TEST(Oracle, RnnTempSpace) { oracle::expect_same("rnn_temp_space", rnn_temp_space); }
TEST(Oracle, AttnBuffers) { oracle::expect_same("attn_buffers", attn_buffers); }

}  // namespace
