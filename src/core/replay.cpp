#include "core/replay.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "core/activation_softmax.hpp"
#include "core/conv_problem.hpp"
#include "core/dropout_problem.hpp"
#include "core/dtype.hpp"
#include "core/handle.hpp"
#include "core/logging.hpp"
#include "core/norm_problem.hpp"
#include "core/ops.hpp"
#include "core/pool_problem.hpp"
#include "core/tensor_ops.hpp"

namespace odnn::core {

namespace {

// The shortest decimal text that reads back as `v` (as a double, or as a float).
std::string real_text(double v, bool as_float = false) {
    char buf[40] = "0";
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, v);
        const double back = std::strtod(buf, nullptr);
        if (as_float ? static_cast<float>(back) == static_cast<float>(v) : back == v) break;
    }
    return buf;
}

// One replay line being built, in the order bench prints problems: op, direction,
// words, dt, layout, math, integers, reals; then the notes.
class Line {
public:
    Line(const char* op, const char* dir) : head_(std::string(op) + (dir && *dir ? std::string(" ") + dir : "")) {}
    void word(const char* k, const std::string& v) { words_ += std::string(" ") + k + "=" + v; }
    void dt(const std::string& v) { dt_ = v; }
    void layout(const std::string& v) { layout_ = v; }
    void math(const std::string& v) { math_ = v; }
    void num(const std::string& k, long long v) { ints_ += " " + k + "=" + std::to_string(v); }
    void real(const char* k, const std::string& v) { reals_ += std::string(" ") + k + "=" + v; }
    // `what` is a thing bench's syntax cannot say: the line says it is not reproducible.
    void note(const std::string& what) {
        for (const std::string& n : notes_)
            if (n == what) return;
        notes_.push_back(what);
    }
    std::string text() const {
        std::string s = "odnn bench '" + head_ + words_ + " dt=" + dt_ + " layout=" + layout_ +
                        (math_.empty() ? "" : " math=" + math_) + ints_ + reals_ + "'";
        if (!notes_.empty()) {
            s += "  #";
            for (size_t i = 0; i < notes_.size(); ++i) s += (i ? "; " : " ") + notes_[i] + " not reproducible";
        }
        return s;
    }

private:
    std::string head_, words_, dt_ = "f32", layout_ = "nchw", math_, ints_, reals_;
    std::vector<std::string> notes_;
};

// bench's dt for a data type; false for types it has no word for.
bool dt_word(int dtype, std::string* out) {
    switch (dtype) {
        case CUDNN_DATA_FLOAT: *out = "f32"; return true;
        case CUDNN_DATA_DOUBLE: *out = "f64"; return true;
        case CUDNN_DATA_HALF: *out = "f16"; return true;
        case CUDNN_DATA_BFLOAT16: *out = "bf16"; return true;
        case CUDNN_DATA_INT8: *out = "i8"; return true;
        default: *out = "f32"; return false;
    }
}

// Whether `strides` are the packed strides of `dims` in NCHW (row-major) or NHWC
// (channels innermost) order; dims of extent 1 may have any stride.
bool packed(int nb, const int64_t* dims, const int64_t* strides, bool nhwc) {
    int order[kMaxOperandDims];
    int k = 0;
    if (nhwc && nb >= 3) {
        order[k++] = 1;
        for (int d = nb - 1; d >= 2; --d) order[k++] = d;
        order[k++] = 0;
    } else {
        for (int d = nb - 1; d >= 0; --d) order[k++] = d;
    }
    int64_t expect = 1;
    for (int i = 0; i < nb; ++i) {
        const int d = order[i];
        if (dims[d] == 1) continue;
        if (strides[d] != expect) return false;
        expect *= dims[d];
    }
    return true;
}

// The layout word of a tensor: nchw or nhwc when packed so; otherwise the nearer one
// (channels innermost: nhwc) and *exact = false.
std::string layout_of(int nb, const int64_t* dims, const int64_t* strides, bool* exact) {
    if (packed(nb, dims, strides, false)) return "nchw";
    if (nb >= 3 && packed(nb, dims, strides, true)) return "nhwc";
    *exact = false;
    return nb >= 3 && strides[1] == 1 && dims[1] > 1 ? "nhwc" : "nchw";
}

// n c (d) h w of a tensor of any rank, as bench can say it.
void shape(Line& L, int nb, const int64_t* dims) {
    static const char* k4[] = {"n", "c", "h", "w"};
    static const char* k5[] = {"n", "c", "d", "h", "w"};
    if (nb == 4 || nb == 5) {
        for (int i = 0; i < nb; ++i) L.num(nb == 4 ? k4[i] : k5[i], dims[i]);
        return;
    }
    // Other ranks: N, C, then everything else folded into h and w.
    L.note(std::to_string(nb) + "-D tensor");
    const long long n = nb > 0 ? dims[0] : 1, c = nb > 1 ? dims[1] : 1;
    long long h = 1, w = nb > 2 ? dims[nb - 1] : 1;
    for (int i = 2; i < nb - 1; ++i) h *= dims[i];
    L.num("n", n);
    L.num("c", c);
    L.num("h", h);
    L.num("w", w);
}

// dt, layout and shape of the tensor a problem is described by.
void tensor(Line& L, int dtype, int nb, const int64_t* dims, const int64_t* strides, int vect = 1) {
    std::string dt;
    if (!dt_word(dtype, &dt)) L.note(std::string("data type ") + dtype_name(static_cast<cudnnDataType_t>(dtype)));
    L.dt(dt);
    bool exact = true;
    L.layout(layout_of(nb, dims, strides, &exact));
    if (!exact) L.note("strides");
    if (vect > 1) L.note("vectorized channels");
    shape(L, nb, dims);
}

void tensor(Line& L, const TensorDesc& t) { tensor(L, t.dtype, t.nb_dims, t.dims, t.strides, t.vect_count); }
void tensor(Line& L, const Operand& o) { tensor(L, o.dtype, o.nb_dims, o.dims, o.strides, o.vect); }

// Another tensor of the problem, which bench lays out like the first: notes if it differs.
void same_as(Line& L, const std::string& layout, int dtype0, int nb, const int64_t* dims, const int64_t* strides,
             int dtype) {
    bool exact = true;
    if (layout_of(nb, dims, strides, &exact) != layout || !exact) L.note("strides");
    if (dtype != dtype0) L.note("mixed data types");
}
void same_as(Line& L, const Operand& first, const Operand& o) {
    bool exact = true;
    same_as(L, layout_of(first.nb_dims, first.dims, first.strides, &exact), first.dtype, o.nb_dims, o.dims, o.strides,
            o.dtype);
}
void same_as(Line& L, const TensorDesc& first, const TensorDesc& t) {
    bool exact = true;
    same_as(L, layout_of(first.nb_dims, first.dims, first.strides, &exact), first.dtype, t.nb_dims, t.dims, t.strides,
            t.dtype);
}

// pad=1 when every spatial dim has it, else pad_h=1 pad_w=0 (and pad_d).
void per_dim(Line& L, const char* key, int nsp, const int64_t* v, bool always) {
    bool uniform = true;
    for (int i = 1; i < nsp; ++i) uniform = uniform && v[i] == v[0];
    if (uniform) {
        if (always || v[0] != (std::string(key) == "pad" ? 0 : 1)) L.num(key, v[0]);
        return;
    }
    static const char* suffix3[] = {"_d", "_h", "_w"};
    for (int i = 0; i < nsp; ++i) L.num(std::string(key) + suffix3[3 - nsp + i], v[i]);
}

const char* conv_dir(ConvKind k) {
    return k == ConvKind::fwd ? "fwd" : k == ConvKind::bwd_data ? "bwd_data" : "bwd_filter";
}

const char* act_word(int mode) {
    switch (mode) {
        case CUDNN_ACTIVATION_SIGMOID: return "sigmoid";
        case CUDNN_ACTIVATION_RELU: return "relu";
        case CUDNN_ACTIVATION_TANH: return "tanh";
        case CUDNN_ACTIVATION_CLIPPED_RELU: return "clipped_relu";
        case CUDNN_ACTIVATION_ELU: return "elu";
        case CUDNN_ACTIVATION_SWISH: return "swish";
        default: return "identity";
    }
}

void softmax_words(Line& L, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode) {
    L.word("alg", algo == CUDNN_SOFTMAX_FAST ? "fast" : algo == CUDNN_SOFTMAX_LOG ? "log" : "accurate");
    L.word("mode", mode == CUDNN_SOFTMAX_MODE_CHANNEL ? "channel" : "instance");
}

std::string pool_command(const char* dir, const PoolGeom& g, const TensorDesc& x, const TensorDesc& y) {
    Line L("pool", dir);
    L.word("mode", g.mode == CUDNN_POOLING_MAX                           ? "max"
                   : g.mode == CUDNN_POOLING_MAX_DETERMINISTIC           ? "max_det"
                   : g.mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING ? "avg_in"
                                                                         : "avg_ex");
    tensor(L, x);
    same_as(L, x, y);
    int64_t win[3], pad[3], stride[3];
    for (int i = 0; i < g.nsp && i < 3; ++i) {
        win[i] = g.win[i];
        pad[i] = g.pad[i];
        stride[i] = g.stride[i];
        // bench sizes y by cudnnGetPoolingNdForwardOutputDim's floor rule
        const int64_t floor_out = (g.in[i] + 2 * g.pad[i] - g.win[i]) / g.stride[i] + 1;
        if (g.out[i] != floor_out) L.note("output size");
    }
    if (g.nsp == 2) {
        L.num("r", win[0]);
        L.num("s", win[1]);
    } else if (g.nsp == 3) {
        L.num("t", win[0]);
        L.num("r", win[1]);
        L.num("s", win[2]);
    } else {
        L.note(std::to_string(g.nsp) + "-D window");
    }
    if (g.nsp == 2 || g.nsp == 3) {
        per_dim(L, "pad", g.nsp, pad, false);
        per_dim(L, "stride", g.nsp, stride, true);
    }
    return L.text();
}

const char* bn_mode_word(int mode) {
    return mode == CUDNN_BATCHNORM_PER_ACTIVATION ? "per_act"
           : mode == CUDNN_BATCHNORM_SPATIAL_PERSISTENT ? "persistent"
                                                        : "spatial";
}

std::string bn_command(const char* dir, const NormCommon& k, const NormRequest& r, const TensorDesc& x) {
    Line L("bn", dir);
    L.word("mode", bn_mode_word(r.mode));
    tensor(L, x);
    if (k.ops == NormOps::act) L.note("fused activation");
    if (k.ops == NormOps::add_act) L.note("fused add and activation");
    return L.text();
}

// A is broadcast like a bias: every dim but C (of extent > 1) has stride 0.
bool bias_like(const Operand& a, const Operand& c) {
    for (int d = 0; d < c.nb_dims; ++d) {
        if (c.dims[d] == 1) continue;
        if ((d == 1) != (a.strides[d] != 0)) return false;
    }
    return true;
}

bool broadcast(const Operand& b) {
    for (int d = 0; d < b.nb_dims; ++d)
        if (b.dims[d] > 1 && b.strides[d] == 0) return true;
    return false;
}

}  // namespace

bool replay_enabled() { return log_enabled(CUDNN_SEV_INFO); }

void log_replay_line(const Handle& h, const char* op, const std::string& command) {
    // The handle behind every core::Handle the API passes is a cudnnContext.
    log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, op, command,
                static_cast<cudnnHandle_t>(const_cast<Handle*>(&h)));
}

// ---- convolution ----

std::string replay_command(const ConvProblem& p) {
    Line L("conv", conv_dir(p.kind));
    // x's dims and strides without the canonical unit D (2-D) or D and H (1-D).
    const int nsp = p.nb_spatial;
    const int first = 3 - (nsp < 2 ? 2 : nsp);  // index into D, H, W of the first spatial dim bench sees
    int64_t dims[5], strides[5], ydims[5], ystrides[5];
    int nb = 2;
    dims[0] = p.x.dims[0];
    dims[1] = p.x.dims[1];
    strides[0] = p.x.strides[0];
    strides[1] = p.x.strides[1];
    ydims[0] = p.y.dims[0];
    ydims[1] = p.y.dims[1];
    ystrides[0] = p.y.strides[0];
    ystrides[1] = p.y.strides[1];
    for (int i = first; i < 3; ++i, ++nb) {
        dims[nb] = p.x.dims[2 + i];
        strides[nb] = p.x.strides[2 + i];
        ydims[nb] = p.y.dims[2 + i];
        ystrides[nb] = p.y.strides[2 + i];
    }
    if (nsp == 1) L.note("1-D convolution (replayed as 2-D)");
    std::string dt;
    if (!dt_word(p.x.dtype, &dt)) L.note(std::string("data type ") + dtype_name(p.x.dtype));
    L.dt(dt);
    bool exact = true;
    const std::string layout = layout_of(nb, dims, strides, &exact);
    if (!exact || p.x.vect > 1) L.note("strides");
    L.layout(layout);
    same_as(L, layout, p.x.dtype, nb, ydims, ystrides, p.x.dtype);
    if (p.w_nhwc != (layout == "nhwc")) L.note("filter layout");
    // bench's types per dt: x, w, y of one type; compute FLOAT (DOUBLE for f64, INT32 for i8)
    const cudnnDataType_t compute = p.x.dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE
                                    : p.x.dtype == CUDNN_DATA_INT8 ? CUDNN_DATA_INT32
                                                                   : CUDNN_DATA_FLOAT;
    if (p.w.dtype != p.x.dtype || p.y.dtype != p.x.dtype || p.compute != compute)
        L.note(std::string("data types (x ") + dtype_name(p.x.dtype) + ", w " + dtype_name(p.w.dtype) + ", y " +
               dtype_name(p.y.dtype) + ", compute " + dtype_name(p.compute) + ")");
    if (p.math == CUDNN_FMA_MATH) L.math("fma");
    else if (p.math == CUDNN_TENSOR_OP_MATH) L.math("tensor_op");
    else if (p.math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) {
        L.math("tensor_op");
        L.note("math type TENSOR_OP_MATH_ALLOW_CONVERSION");
    }
    static const char* in_keys[] = {"d", "h", "w"};
    static const char* f_keys[] = {"t", "r", "s"};
    const int lo = 3 - (nsp < 2 ? 2 : nsp);
    L.num("n", p.n);
    L.num("c", p.c);
    for (int i = lo; i < 3; ++i) L.num(in_keys[i], p.in[i]);
    L.num("k", p.k);
    for (int i = lo; i < 3; ++i) L.num(f_keys[i], p.filt[i]);
    const int shown = 3 - lo;
    per_dim(L, "pad", shown, p.pad + lo, true);
    per_dim(L, "stride", shown, p.stride + lo, false);
    per_dim(L, "dil", shown, p.dil + lo, false);
    if (p.groups != 1) L.num("g", p.groups);
    L.num("algo", p.algo);
    if (p.epi.enabled) L.note("fused bias and activation");
    if (p.flip) L.note("CUDNN_CONVOLUTION mode");
    return L.text();
}

// ---- activation, softmax ----

std::string replay_command(const ActivationFwdProblem& p) {
    Line L("act", "fwd");
    L.word("mode", act_word(p.act.mode));
    tensor(L, p.x);
    same_as(L, p.x, p.y);
    return L.text();
}

std::string replay_command(const ActivationBwdProblem& p) {
    Line L("act", "bwd");
    L.word("mode", act_word(p.act.mode));
    tensor(L, p.x);
    same_as(L, p.x, p.y);
    same_as(L, p.x, p.dy);
    same_as(L, p.x, p.dx);
    return L.text();
}

std::string replay_command(const SoftmaxFwdProblem& p) {
    Line L("softmax", "fwd");
    softmax_words(L, p.algo, p.mode);
    tensor(L, p.x);
    same_as(L, p.x, p.y);
    return L.text();
}

std::string replay_command(const SoftmaxBwdProblem& p) {
    Line L("softmax", "bwd");
    softmax_words(L, p.algo, p.mode);
    tensor(L, p.y);
    same_as(L, p.y, p.dy);
    same_as(L, p.y, p.dx);
    return L.text();
}

// ---- pooling, LRN ----

std::string replay_command(const PoolingFwdProblem& p) { return pool_command("fwd", p.g, p.x, p.y); }
std::string replay_command(const PoolingBwdProblem& p) { return pool_command("bwd", p.g, p.x, p.y); }

std::string replay_command(const LrnProblem& p) {
    Line L("lrn", p.backward ? "bwd" : "fwd");
    tensor(L, p.x);
    same_as(L, p.x, p.backward ? p.dx : p.y);
    L.num("size", p.lrn.n);
    // bench's defaults are cuDNN's (1e-4, 0.75, 2): only other values are written
    if (p.lrn.alpha != 1e-4) L.real("alpha", real_text(p.lrn.alpha));
    if (p.lrn.beta != 0.75) L.real("beta", real_text(p.lrn.beta));
    if (p.lrn.k != 2.0) L.real("k", real_text(p.lrn.k));
    return L.text();
}

// ---- batch normalization ----

std::string replay_command(const BnFwdInferenceProblem& p, const NormRequest& r) {
    return bn_command("fwd_inf", p.k, r, p.x);
}
std::string replay_command(const BnFwdTrainingProblem& p, const NormRequest& r) {
    return bn_command("fwd_train", p.k, r, p.x);
}
std::string replay_command(const BnBackwardProblem& p, const NormRequest& r) { return bn_command("bwd", p.k, r, p.x); }

// ---- tensor ops ----

std::string replay_command(const OpTensorProblem& p) {
    Line L("optensor", "");
    const char* op = "add";
    switch (p.op) {
        case CUDNN_OP_TENSOR_MUL: op = "mul"; break;
        case CUDNN_OP_TENSOR_MIN: op = "min"; break;
        case CUDNN_OP_TENSOR_MAX: op = "max"; break;
        case CUDNN_OP_TENSOR_SQRT: op = "sqrt"; break;
        case CUDNN_OP_TENSOR_NOT: op = "not"; break;
        default: break;
    }
    L.word("op", op);
    tensor(L, p.c);
    same_as(L, p.c, p.a);
    if (!p.unary()) {
        if (broadcast(p.b)) L.note("broadcast B");
        else same_as(L, p.c, p.b);
    }
    return L.text();
}

std::string replay_command(const AddTensorProblem& p) {
    Line L("bias", "");
    tensor(L, p.c);
    if (!bias_like(p.a, p.c)) L.note("A's shape (bench adds a 1xCx1x1 bias)");
    if (p.a.dtype != p.c.dtype) L.note("mixed data types");
    return L.text();
}

std::string replay_command(const ReduceTensorProblem& p) {
    Line L("reduce", "");
    const char* op = "add";
    switch (p.op) {
        case CUDNN_REDUCE_TENSOR_MUL: op = "mul"; break;
        case CUDNN_REDUCE_TENSOR_MIN: op = "min"; break;
        case CUDNN_REDUCE_TENSOR_MAX: op = "max"; break;
        case CUDNN_REDUCE_TENSOR_AMAX: op = "amax"; break;
        case CUDNN_REDUCE_TENSOR_AVG: op = "avg"; break;
        case CUDNN_REDUCE_TENSOR_NORM1: op = "norm1"; break;
        case CUDNN_REDUCE_TENSOR_NORM2: op = "norm2"; break;
        case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS: op = "mul_nz"; break;
        default: break;
    }
    L.word("op", op);
    tensor(L, p.a);
    if (p.a.nb_dims == 4 || p.a.nb_dims == 5) {
        static const char* k4[] = {"on", "oc", "oh", "ow"};
        static const char* k5[] = {"on", "oc", "od", "oh", "ow"};
        for (int d = 0; d < p.a.nb_dims; ++d)
            if (p.c.dims[d] == 1 && p.a.dims[d] > 1) L.num(p.a.nb_dims == 4 ? k4[d] : k5[d], 1);
    } else {
        L.num("oh", 1);  // something bench can reduce
    }
    if (p.want_indices) L.num("indices", 1);
    // bench writes C in A's type (FLOAT for INT8 A), laid out like A
    const int c_type = p.a.dtype == CUDNN_DATA_INT8 ? CUDNN_DATA_FLOAT : p.a.dtype;
    if (p.c.dtype != c_type) L.note(std::string("C of type ") + dtype_name(static_cast<cudnnDataType_t>(p.c.dtype)));
    bool exact = true;
    if (layout_of(p.c.nb_dims, p.c.dims, p.c.strides, &exact) !=
            layout_of(p.a.nb_dims, p.a.dims, p.a.strides, &exact) ||
        !exact)
        L.note("strides");
    return L.text();
}

std::string replay_command(const TransformTensorProblem& p) {
    Line L("transform", "");
    bool exact = true;
    const std::string to = layout_of(p.y.nb_dims, p.y.dims, p.y.strides, &exact);
    L.word("to", to);
    std::string ydt;
    if (p.y.dtype != p.x.dtype) {
        if (!dt_word(p.y.dtype, &ydt)) L.note(std::string("y of type ") + dtype_name(static_cast<cudnnDataType_t>(p.y.dtype)));
        L.word("ydt", ydt);
    }
    tensor(L, p.x);
    if (!exact || p.y.vect > 1) L.note("strides");
    if (!p.map.identity) {
        L.note("padding and folding (cudnnTransformTensorEx)");
        // bench transforms to y's dims = x's: the line describes the x side
    }
    return L.text();
}

std::string replay_command(const SetTensorProblem& p) {
    Line L("set", "");
    tensor(L, p.y);
    return L.text();
}

std::string replay_command(const ScaleTensorProblem& p) {
    Line L("scale", "");
    tensor(L, p.y);
    return L.text();
}

// ---- dropout ----

std::string replay_command(const DropoutProblem& p, const DropoutDesc& d) {
    Line L("dropout", p.backward ? "bwd" : "fwd");
    tensor(L, p.x);
    same_as(L, p.x, p.y);
    const float prob = d.dropout;
    if (prob >= 1.0f) L.note("p >= 1");
    else L.real("p", prob > 0.0f ? real_text(prob, true) : "0");
    return L.text();
}

}  // namespace odnn::core
