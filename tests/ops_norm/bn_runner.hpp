// Runs one batch-normalization case (tests/ops_norm/cases/batchnorm.txt) through the
// public API on a handle: forward training, forward inference with the updated
// running statistics, backward with the saved statistics and backward recomputing
// them. Inputs come from the case's seed, so two backends get identical data.
//
// Case keys: dt (f32 f64 f16 bf16), layout (nchw nhwc strided), n c [d] h w,
// mode (spatial persistent per_act), ops (bn act add_act), act (relu clipped sigmoid
// tanh elu identity), coef, api (ex plain norm), alpha beta (y), dalpha dbeta (dx, dz),
// palpha pbeta (dscale, dbias), eps, factor, shift (added to x, a large mean), nan
// (propagate NaN in the activation).
#pragma once

#include "ops_norm/bn_oracle.hpp"
#include "ops_norm/norm_testlib.hpp"

namespace normtest {

inline int parse_act(const std::string& s) {
    if (s == "sigmoid") return CUDNN_ACTIVATION_SIGMOID;
    if (s == "relu") return CUDNN_ACTIVATION_RELU;
    if (s == "tanh") return CUDNN_ACTIVATION_TANH;
    if (s == "clipped") return CUDNN_ACTIVATION_CLIPPED_RELU;
    if (s == "elu") return CUDNN_ACTIVATION_ELU;
    return CUDNN_ACTIVATION_IDENTITY;
}

struct BnData {
    Case c;
    BnShape g;
    cudnnDataType_t dt = CUDNN_DATA_FLOAT, pdt = CUDNN_DATA_FLOAT;
    int mode = CUDNN_BATCHNORM_SPATIAL;
    int ops = 0;
    Act act;
    std::string api = "ex";
    double alpha = 1, beta = 0, dalpha = 1, dbeta = 0, palpha = 1, pbeta = 0, eps = 1e-5, factor = 0.1;
    std::vector<int> dims, pdims;
    TensorPtr x, z, y, scale, bias, rmean, rvar, smean, sistd, yinf, dy, dx, dz, dscale, dbias;
    TensorPtr dx2, dz2, dscale2, dbias2;  // backward recomputing the statistics
    // Values before the calls (blending and the outside-the-view check).
    std::vector<double> y0, yinf0, dx0, dz0, dscale0, dbias0, rmean0, rvar0;
    std::vector<unsigned char> ybytes0, dxbytes0;
    std::vector<double> rmean_mid, rvar_mid;  // running stats after training (inference input)
};

inline void fill_or_poison(Tensor& t, bool blend, std::mt19937_64& rng, std::vector<double>* prior) {
    if (blend)
        t.fill_uniform(rng, -1.0, 1.0);
    else
        t.poison();
    *prior = t.values();
}

inline void bn_setup(BnData& d, const Case& c) {
    d.c = c;
    d.dt = parse_dt(c.get("dt", "f32"));
    d.pdt = d.dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    const std::string mode = c.get("mode", "spatial");
    d.mode = mode == "per_act"      ? CUDNN_BATCHNORM_PER_ACTIVATION
             : mode == "persistent" ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT
                                    : CUDNN_BATCHNORM_SPATIAL;
    const std::string ops = c.get("ops", "bn");
    d.ops = ops == "act" ? 1 : ops == "add_act" ? 2 : 0;
    d.act.mode = parse_act(c.get("act", "relu"));
    d.act.coef = c.getd("coef", d.act.mode == CUDNN_ACTIVATION_CLIPPED_RELU ? 1.5 : 1.0);
    d.api = c.get("api", "ex");
    d.alpha = c.getd("alpha", 1);
    d.beta = c.getd("beta", 0);
    d.dalpha = c.getd("dalpha", 1);
    d.dbeta = c.getd("dbeta", 0);
    d.palpha = c.getd("palpha", 1);
    d.pbeta = c.getd("pbeta", 0);
    d.eps = c.getd("eps", 1e-5);
    d.factor = c.getd("factor", 0.1);
    d.dims = c.dims();
    d.g.n = d.dims[0];
    d.g.c = d.dims[1];
    d.g.s = 1;
    for (size_t i = 2; i < d.dims.size(); ++i) d.g.s *= d.dims[i];
    d.g.per_channel = d.mode != CUDNN_BATCHNORM_PER_ACTIVATION;
    d.pdims.assign(d.dims.size(), 1);
    d.pdims[1] = d.dims[1];
    if (!d.g.per_channel)
        for (size_t i = 2; i < d.dims.size(); ++i) d.pdims[i] = d.dims[i];

    std::mt19937_64 rng(c.seed());
    const Layout layout = parse_layout(c.get("layout", "nchw"));
    const double shift = c.getd("shift", 0.0);
    d.x = Tensor::make(d.dt, d.dims, layout, c.seed());
    d.x->fill_uniform(rng, shift - 2.0, shift + 3.0);
    if (d.ops == 2) {
        d.z = Tensor::make(d.dt, d.dims, layout, c.seed() >> 3);
        d.z->fill_uniform(rng, -1.0, 1.0);
    }
    d.y = Tensor::make(d.dt, d.dims, layout, c.seed() >> 5);
    fill_or_poison(*d.y, d.beta != 0, rng, &d.y0);
    d.ybytes0 = d.y->buf;
    d.yinf = Tensor::make(d.dt, d.dims, layout, c.seed() >> 7);
    fill_or_poison(*d.yinf, d.beta != 0, rng, &d.yinf0);
    auto param = [&](double lo, double hi) {
        TensorPtr t = param_tensor(d.pdt, d.pdims);
        t->fill_uniform(rng, lo, hi);
        return t;
    };
    d.scale = param(0.5, 1.5);
    d.bias = param(-0.5, 0.5);
    d.rmean = param(-1.0, 1.0);
    d.rvar = param(0.5, 2.0);
    d.rmean0 = d.rmean->values();
    d.rvar0 = d.rvar->values();
    d.smean = param_tensor(d.pdt, d.pdims);
    d.smean->poison();
    d.sistd = param_tensor(d.pdt, d.pdims);
    d.sistd->poison();
    d.dy = Tensor::make(d.dt, d.dims, layout, c.seed() >> 9);
    d.dy->fill_uniform(rng, -1.0, 1.0);
    d.dx = Tensor::make(d.dt, d.dims, layout, c.seed() >> 11);
    fill_or_poison(*d.dx, d.dbeta != 0, rng, &d.dx0);
    d.dxbytes0 = d.dx->buf;
    d.dx2 = Tensor::make(d.dt, d.dims, layout, c.seed() >> 11);
    d.dx2->buf = d.dx->buf;
    if (d.ops == 2) {
        d.dz = Tensor::make(d.dt, d.dims, layout, c.seed() >> 13);
        fill_or_poison(*d.dz, d.dbeta != 0, rng, &d.dz0);
        d.dz2 = Tensor::make(d.dt, d.dims, layout, c.seed() >> 13);
        d.dz2->buf = d.dz->buf;
    }
    d.dscale = param_tensor(d.pdt, d.pdims);
    fill_or_poison(*d.dscale, d.pbeta != 0, rng, &d.dscale0);
    d.dbias = param_tensor(d.pdt, d.pdims);
    fill_or_poison(*d.dbias, d.pbeta != 0, rng, &d.dbias0);
    d.dscale2 = param_tensor(d.pdt, d.pdims);
    d.dscale2->buf = d.dscale->buf;
    d.dbias2 = param_tensor(d.pdt, d.pdims);
    d.dbias2->buf = d.dbias->buf;
}

// Runs the four calls; every status must be SUCCESS.
inline void bn_run(BnData& d, cudnnHandle_t h, Memory& mem) {
    const bool dbl = d.dt == CUDNN_DATA_DOUBLE;
    const float fa = static_cast<float>(d.alpha), fb = static_cast<float>(d.beta);
    const float fda = static_cast<float>(d.dalpha), fdb = static_cast<float>(d.dbeta);
    const float fpa = static_cast<float>(d.palpha), fpb = static_cast<float>(d.pbeta);
    const void* alpha = dbl ? static_cast<const void*>(&d.alpha) : &fa;
    const void* beta = dbl ? static_cast<const void*>(&d.beta) : &fb;
    const void* dalpha = dbl ? static_cast<const void*>(&d.dalpha) : &fda;
    const void* dbeta = dbl ? static_cast<const void*>(&d.dbeta) : &fdb;
    const void* palpha = dbl ? static_cast<const void*>(&d.palpha) : &fpa;
    const void* pbeta = dbl ? static_cast<const void*>(&d.pbeta) : &fpb;

    cudnnActivationDescriptor_t act = nullptr;
    ASSERT_EQ(cudnnCreateActivationDescriptor(&act), CUDNN_STATUS_SUCCESS);
    ASSERT_OK(cudnnSetActivationDescriptor(act, static_cast<cudnnActivationMode_t>(d.act.mode),
                                           d.c.geti("nan", 0) ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                                           d.act.coef));
    // The derived descriptor must be what the oracle expects.
    cudnnTensorDescriptor_t pd = nullptr;
    ASSERT_EQ(cudnnCreateTensorDescriptor(&pd), CUDNN_STATUS_SUCCESS);
    ASSERT_OK(cudnnDeriveBNTensorDescriptor(pd, d.x->desc, static_cast<cudnnBatchNormMode_t>(d.mode)));
    {
        int nb = 0, dims[8], strides[8];
        cudnnDataType_t dt;
        ASSERT_OK(cudnnGetTensorNdDescriptor(pd, 8, &dt, &nb, dims, strides));
        ASSERT_EQ(nb, static_cast<int>(d.pdims.size()));
        EXPECT_EQ(dt, d.pdt);
        for (int i = 0; i < nb; ++i) EXPECT_EQ(dims[i], d.pdims[i]) << "dim " << i;
    }
    const auto bmode = static_cast<cudnnBatchNormMode_t>(d.mode);
    const auto bops = static_cast<cudnnBatchNormOps_t>(d.ops);
    const auto nmode = d.g.per_channel ? CUDNN_NORM_PER_CHANNEL : CUDNN_NORM_PER_ACTIVATION;
    const auto nops = static_cast<cudnnNormOps_t>(d.ops);
    cudnnTensorDescriptor_t zdesc = d.z ? d.z->desc : nullptr;
    cudnnTensorDescriptor_t dzdesc = d.dz ? d.dz->desc : nullptr;
    void* zp = d.z ? mem.ptr(*d.z) : nullptr;
    cudnnActivationDescriptor_t actp = d.ops ? act : nullptr;

    // ---- forward training ----
    if (d.api == "plain") {
        ASSERT_EQ(d.ops, 0) << "the plain calls fuse nothing";
        ASSERT_OK(cudnnBatchNormalizationForwardTraining(
            h, bmode, alpha, beta, d.x->desc, mem.ptr(*d.x), d.y->desc, mem.ptr(*d.y), pd, mem.ptr(*d.scale),
            mem.ptr(*d.bias), d.factor, mem.ptr(*d.rmean), mem.ptr(*d.rvar), d.eps, mem.ptr(*d.smean),
            mem.ptr(*d.sistd)));
    } else if (d.api == "norm") {
        size_t ws = 0, rs = 0;
        ASSERT_OK(cudnnGetNormalizationForwardTrainingWorkspaceSize(h, nmode, nops, CUDNN_NORM_ALGO_STANDARD,
                                                                    d.x->desc, zdesc, d.y->desc, pd, actp, pd, &ws,
                                                                    1));
        ASSERT_OK(cudnnGetNormalizationTrainingReserveSpaceSize(h, nmode, nops, CUDNN_NORM_ALGO_STANDARD, actp,
                                                                d.x->desc, &rs, 1));
        ASSERT_OK(cudnnNormalizationForwardTraining(
            h, nmode, nops, CUDNN_NORM_ALGO_STANDARD, alpha, beta, d.x->desc, mem.ptr(*d.x), pd, mem.ptr(*d.scale),
            mem.ptr(*d.bias), d.factor, pd, mem.ptr(*d.rmean), mem.ptr(*d.rvar), d.eps, mem.ptr(*d.smean),
            mem.ptr(*d.sistd), actp, zdesc, zp, d.y->desc, mem.ptr(*d.y), mem.scratch(ws), ws, mem.scratch(rs), rs,
            1));
    } else {
        size_t ws = 0, rs = 0;
        ASSERT_OK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, bmode, bops, d.x->desc, zdesc,
                                                                           d.y->desc, pd, actp, &ws));
        ASSERT_OK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, bmode, bops, actp, d.x->desc, &rs));
        ASSERT_OK(cudnnBatchNormalizationForwardTrainingEx(
            h, bmode, bops, alpha, beta, d.x->desc, mem.ptr(*d.x), zdesc, zp, d.y->desc, mem.ptr(*d.y), pd,
            mem.ptr(*d.scale), mem.ptr(*d.bias), d.factor, mem.ptr(*d.rmean), mem.ptr(*d.rvar), d.eps,
            mem.ptr(*d.smean), mem.ptr(*d.sistd), actp, mem.scratch(ws), ws, mem.scratch(rs), rs));
    }
    for (Tensor* t : {d.y.get(), d.rmean.get(), d.rvar.get(), d.smean.get(), d.sistd.get()}) mem.pull(*t);
    d.rmean_mid = d.rmean->values();
    d.rvar_mid = d.rvar->values();

    // ---- forward inference with the running statistics ----
    if (d.api == "norm") {
        ASSERT_OK(cudnnNormalizationForwardInference(h, nmode, nops, CUDNN_NORM_ALGO_STANDARD, alpha, beta,
                                                     d.x->desc, mem.ptr(*d.x), pd, mem.ptr(*d.scale),
                                                     mem.ptr(*d.bias), pd, mem.ptr(*d.rmean), mem.ptr(*d.rvar),
                                                     zdesc, zp, actp, d.yinf->desc, mem.ptr(*d.yinf), d.eps, 1));
    } else if (d.ops == 0) {
        ASSERT_OK(cudnnBatchNormalizationForwardInference(h, bmode, alpha, beta, d.x->desc, mem.ptr(*d.x),
                                                          d.yinf->desc, mem.ptr(*d.yinf), pd, mem.ptr(*d.scale),
                                                          mem.ptr(*d.bias), mem.ptr(*d.rmean), mem.ptr(*d.rvar),
                                                          d.eps));
    }
    mem.pull(*d.yinf);

    // ---- backward, with the saved statistics, then recomputing them ----
    for (int pass = 0; pass < 2; ++pass) {
        Tensor& dx = pass ? *d.dx2 : *d.dx;
        Tensor* dz = d.ops == 2 ? (pass ? d.dz2.get() : d.dz.get()) : nullptr;
        Tensor& dscale = pass ? *d.dscale2 : *d.dscale;
        Tensor& dbias = pass ? *d.dbias2 : *d.dbias;
        const void* sm = pass ? nullptr : mem.ptr(*d.smean);
        const void* si = pass ? nullptr : mem.ptr(*d.sistd);
        void* dzp = dz ? mem.ptr(*dz) : nullptr;
        if (d.api == "plain") {
            ASSERT_OK(cudnnBatchNormalizationBackward(h, bmode, dalpha, dbeta, palpha, pbeta, d.x->desc,
                                                      mem.ptr(*d.x), d.dy->desc, mem.ptr(*d.dy), dx.desc,
                                                      mem.ptr(dx), pd, mem.ptr(*d.scale), mem.ptr(dscale),
                                                      mem.ptr(dbias), d.eps, sm, si));
        } else if (d.api == "norm") {
            size_t ws = 0;
            ASSERT_OK(cudnnGetNormalizationBackwardWorkspaceSize(h, nmode, nops, CUDNN_NORM_ALGO_STANDARD,
                                                                 d.x->desc, d.y->desc, d.dy->desc, dzdesc, dx.desc,
                                                                 pd, actp, pd, &ws, 1));
            ASSERT_OK(cudnnNormalizationBackward(h, nmode, nops, CUDNN_NORM_ALGO_STANDARD, dalpha, dbeta, palpha,
                                                 pbeta, d.x->desc, mem.ptr(*d.x), d.y->desc, mem.ptr(*d.y),
                                                 d.dy->desc, mem.ptr(*d.dy), dzdesc, dzp, dx.desc, mem.ptr(dx), pd,
                                                 mem.ptr(*d.scale), mem.ptr(*d.bias), mem.ptr(dscale),
                                                 mem.ptr(dbias), d.eps, pd, sm, si, actp, mem.scratch(ws), ws,
                                                 nullptr, 0, 1));
        } else {
            size_t ws = 0;
            ASSERT_OK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, bmode, bops, d.x->desc, d.y->desc,
                                                                        d.dy->desc, dzdesc, dx.desc, pd, actp, &ws));
            ASSERT_OK(cudnnBatchNormalizationBackwardEx(
                h, bmode, bops, dalpha, dbeta, palpha, pbeta, d.x->desc, mem.ptr(*d.x), d.y->desc, mem.ptr(*d.y),
                d.dy->desc, mem.ptr(*d.dy), dzdesc, dzp, dx.desc, mem.ptr(dx), pd, mem.ptr(*d.scale), nullptr,
                mem.ptr(dscale), mem.ptr(dbias), d.eps, sm, si, actp, mem.scratch(ws), ws, nullptr, 0));
        }
        mem.pull(dx);
        if (dz) mem.pull(*dz);
        mem.pull(dscale);
        mem.pull(dbias);
    }
    cudnnDestroyTensorDescriptor(pd);
    cudnnDestroyActivationDescriptor(act);
}

}  // namespace normtest
