#include "core/tensor_ops.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "core/dtype.hpp"
#include "core/elem_access.hpp"
#include "core/memory.hpp"
#include "core/ops.hpp"
#include "core/replay.hpp"

namespace odnn::core {

// ---- Operands ----

Operand operand_of(const TensorDesc& d) {
    Operand o;
    if (d.vect_count > 1) {  // NCHW_VECT_C: logical dims, strides in vectors
        o.dtype = d.dtype == CUDNN_DATA_UINT8x4 ? CUDNN_DATA_UINT8 : CUDNN_DATA_INT8;
        o.nb_dims = d.nb_dims;
        o.vect = d.vect_count;
        for (int i = 0; i < d.nb_dims; ++i) {
            o.dims[i] = d.dims[i];
            o.strides[i] = d.strides[i];
        }
        return o;
    }
    const ScalarView v = scalar_view(d);  // vector types elsewhere: one more dim for the lanes
    o.dtype = v.dtype;
    o.nb_dims = v.nb_dims;
    for (int i = 0; i < v.nb_dims; ++i) {
        o.dims[i] = v.dims[i];
        o.strides[i] = v.strides[i];
    }
    return o;
}

Operand operand_of(const FilterDesc& f) {
    TensorDesc t;
    t.dtype = f.dtype;
    t.nb_dims = f.nb_dims;
    t.format = f.format;
    for (int i = 0; i < f.nb_dims; ++i) t.dims[i] = f.dims[i];
    if (f.format == CUDNN_TENSOR_NCHW_VECT_C) {
        t.vect_count = dtype_vector_count(f.dtype);
        int64_t vdims[kDimMax];
        for (int i = 0; i < f.nb_dims; ++i) vdims[i] = f.dims[i];
        vdims[1] = f.dims[1] / t.vect_count;
        packed_strides(CUDNN_TENSOR_NCHW, f.nb_dims, vdims, t.strides);
    } else {
        packed_strides(f.format, f.nb_dims, t.dims, t.strides);
    }
    return operand_of(t);
}

Operand broadcast_to(const Operand& a, const Operand& out) {
    Operand b = a;
    for (int i = 0; i < out.nb_dims; ++i) {
        b.dims[i] = out.dims[i];
        if (a.dims[i] == 1 && out.dims[i] != 1) b.strides[i] = 0;
    }
    return b;
}

bool same_dims(const Operand& a, const Operand& b) {
    if (a.nb_dims != b.nb_dims) return false;
    for (int i = 0; i < a.nb_dims; ++i)
        if (a.dims[i] != b.dims[i]) return false;
    return true;
}

bool same_layout(const Operand& a, const Operand& b) {
    if (!same_dims(a, b) || a.vect != b.vect) return false;
    for (int i = 0; i < a.nb_dims; ++i)
        if (a.dims[i] > 1 && a.strides[i] != b.strides[i]) return false;
    return true;
}

// ---- Element-wise geometry ----

int64_t EwGeometry::count() const {
    int64_t n = 1;
    for (int i = 0; i < nb_dims; ++i) n *= dims[i];
    return n;
}

EwGeometry ew_simplify(const Operand* const* operands, int n) {
    EwGeometry g;
    g.n_operands = n;
    const Operand& out = *operands[0];
    // Non-unit dims, outermost first by the output's stride (stable: ties keep their order).
    int order[kMaxOperandDims];
    int nb = 0;
    for (int d = 0; d < out.nb_dims; ++d)
        if (out.dims[d] != 1) order[nb++] = d;
    std::stable_sort(order, order + nb, [&](int a, int b) { return out.strides[a] > out.strides[b]; });
    for (int i = 0; i < nb; ++i) {
        g.dims[i] = out.dims[order[i]];
        for (int k = 0; k < n; ++k) g.strides[k][i] = operands[k]->strides[order[i]];
    }
    // Merge dim i into i - 1 where every operand steps across them contiguously.
    int m = 0;
    for (int i = 0; i < nb; ++i) {
        bool merge = m > 0;
        for (int k = 0; k < n && merge; ++k) merge = g.strides[k][m - 1] == g.strides[k][i] * g.dims[i];
        if (merge) {
            g.dims[m - 1] *= g.dims[i];
            for (int k = 0; k < n; ++k) g.strides[k][m - 1] = g.strides[k][i];
        } else {
            g.dims[m] = g.dims[i];
            for (int k = 0; k < n; ++k) g.strides[k][m] = g.strides[k][i];
            ++m;
        }
    }
    if (m == 0) {  // a single element
        g.dims[0] = 1;
        for (int k = 0; k < n; ++k) g.strides[k][0] = 1;
        m = 1;
    }
    g.nb_dims = m;
    return g;
}

EwFlat ew_flat(const EwGeometry& g) {
    EwFlat f;
    const int nb = g.nb_dims;
    int64_t expect = 1;
    for (int d = nb - 1; d >= 0; --d) {
        if (g.dims[d] > 1 && g.strides[0][d] != expect) return f;
        expect *= g.dims[d];
    }
    for (int k = 1; k < g.n_operands; ++k) {
        bool full = true;
        for (int d = 0; d < nb; ++d) full = full && (g.dims[d] == 1 || g.strides[k][d] == g.strides[0][d]);
        if (full) continue;
        if (f.bcast >= 0) return f;  // a second broadcast input: not flat
        // Non-zero strides must be one run of dims, row-major contiguous.
        int lo = -1, hi = -1;
        for (int d = 0; d < nb; ++d)
            if (g.strides[k][d] != 0) {
                if (lo < 0) lo = d;
                else if (hi >= 0) return f;  // a second run
            } else if (lo >= 0 && hi < 0) {
                hi = d;
            }
        if (lo >= 0 && hi < 0) hi = nb;
        int64_t e = 1, inner = 1, mid = 1;
        for (int d = nb - 1; d >= 0; --d) {
            if (lo >= 0 && d >= lo && d < hi) {
                if (g.strides[k][d] != e) return f;
                e *= g.dims[d];
                mid *= g.dims[d];
            } else if (lo >= 0 && d >= hi) {
                inner *= g.dims[d];
            }
        }
        f.bcast = k;
        f.inner = inner;
        f.mid = mid;
    }
    f.ok = true;
    return f;
}

// ---- Shared checks ----

namespace {

bool is_vector_type(cudnnDataType_t t) { return dtype_vector_count(t) > 1; }

bool is_float_type(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_DOUBLE || t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16;
}

Status check_set(const TensorDesc& d, const char* arg) {
    ODNN_REQUIRE_PARAM(d.is_set(), "%s has not been set (call cudnnSetTensor*Descriptor first)", arg);
    return Status::ok();
}

Status check_same_dims(const TensorDesc& a, const char* an, const TensorDesc& b, const char* bn) {
    bool same = a.nb_dims == b.nb_dims;
    for (int i = 0; same && i < a.nb_dims; ++i) same = a.dims[i] == b.dims[i];
    ODNN_REQUIRE_PARAM(same, "%s and %s differ in shape (%d-D vs %d-D, or a dimension differs)", an, bn, a.nb_dims,
                       b.nb_dims);
    return Status::ok();
}

// `a` broadcasts to `c`: same rank, each dim of a is c's or 1.
Status check_broadcast(const TensorDesc& a, const char* an, const TensorDesc& c, const char* cn) {
    ODNN_REQUIRE_PARAM(a.nb_dims == c.nb_dims, "%s has %d dimensions and %s has %d: they must have the same rank", an,
                       a.nb_dims, cn, c.nb_dims);
    for (int i = 0; i < a.nb_dims; ++i)
        ODNN_REQUIRE_PARAM(a.dims[i] == c.dims[i] || a.dims[i] == 1,
                           "dimension %d of %s is %lld: it must equal %s's (%lld) or be 1", i, an,
                           static_cast<long long>(a.dims[i]), cn, static_cast<long long>(c.dims[i]));
    return Status::ok();
}

Scale scale_for(const void* alpha, const void* beta, cudnnDataType_t out) {
    return read_scale(alpha, beta, out == CUDNN_DATA_DOUBLE);
}

// Transform element types: any pair of numeric legacy types; a vector type outside
// NCHW_VECT_C (each element a whole vector) only to and from the same type and layout kind.
Status check_transform_types(const TensorDesc& x, const char* xn, const TensorDesc& y, const char* yn) {
    const bool xv = is_vector_type(x.dtype) && x.vect_count == 1;
    const bool yv = is_vector_type(y.dtype) && y.vect_count == 1;
    ODNN_REQUIRE_SUPPORTED(!(xv || yv) || (xv && yv && x.dtype == y.dtype),
                           "%s (%s) and %s (%s): a vector type outside NCHW_VECT_C converts only to itself", xn,
                           dtype_name(x.dtype), yn, dtype_name(y.dtype));
    return Status::ok();
}

// Dims of the transform of `x` by `t` (see TransformMap).
Status transform_dims(const TensorTransformDesc& t, int nb, const int64_t* x, int64_t* y, TransformMap* map) {
    ODNN_REQUIRE_PARAM(t.is_set(), "the tensor transform descriptor has not been set");
    ODNN_REQUIRE_PARAM(static_cast<int>(t.nb_dims) == nb,
                       "the transform descriptor has %u dimensions and the source tensor %d", t.nb_dims, nb);
    TransformMap m;
    m.nb_dims = nb;
    m.unfold = t.direction == CUDNN_TRANSFORM_UNFOLD;
    bool identity = true;
    int64_t prod = 1;
    for (int d = 0; d < nb; ++d) {
        m.pad_before[d] = t.pad_before[d];
        m.fold[d] = d >= 2 && t.fold[d - 2] > 1 ? t.fold[d - 2] : 1;  // 0 (never set) means no folding
        ODNN_REQUIRE_SUPPORTED(m.fold[d] <= kMaxTensorElements / prod,
                               "the folding factors multiply to more than 2^31-1 (fold %lld along dimension %d)",
                               static_cast<long long>(m.fold[d]), d);
        // Fold reads x below min(X, X + pad_after): a negative pad_after crops the end.
        m.x_dims[d] = m.unfold ? x[d] : x[d] + std::min(0, t.pad_after[d]);
        prod *= m.fold[d];
        identity = identity && t.pad_before[d] == 0 && t.pad_after[d] == 0 && m.fold[d] == 1;
    }
    for (int d = 0; d < nb; ++d) {
        const int64_t pads = int64_t{t.pad_before[d]} + t.pad_after[d];
        if (!m.unfold) {
            const int64_t p = x[d] + pads;
            ODNN_REQUIRE_PARAM(p > 0, "dimension %d (%lld) with padding %d + %d leaves nothing", d,
                               static_cast<long long>(x[d]), t.pad_before[d], t.pad_after[d]);
            ODNN_REQUIRE_SUPPORTED(d != 1 || p <= INT_MAX / prod,
                                   "folding %lld channels by %lld gives more than INT_MAX channels",
                                   static_cast<long long>(p), static_cast<long long>(prod));
            y[d] = d == 1 ? p * prod : (p + m.fold[d] - 1) / m.fold[d];
            if (d == 1) m.c_unit = p;
        } else {
            int64_t u = x[d];
            if (d == 1) {
                ODNN_REQUIRE_PARAM(x[1] % prod == 0,
                                   "unfolding needs the channels (%lld) divisible by the product of the folds (%lld)",
                                   static_cast<long long>(x[1]), static_cast<long long>(prod));
                u = x[1] / prod;
                m.c_unit = u;
            } else {
                u = x[d] * m.fold[d];
            }
            y[d] = u - pads;
            ODNN_REQUIRE_PARAM(y[d] > 0, "dimension %d: unfolded to %lld, cropping %d + %d leaves nothing", d,
                               static_cast<long long>(u), t.pad_before[d], t.pad_after[d]);
        }
        ODNN_REQUIRE_SUPPORTED(y[d] <= INT_MAX, "dimension %d of the result (%lld) does not fit in an int", d,
                               static_cast<long long>(y[d]));
    }
    m.identity = identity;
    if (map) *map = m;
    return Status::ok();
}

Status run_transform(const Handle& h, const Operand& x, const void* x_data, const Operand& y, void* y_data,
                     const Scale& s, const TransformMap& map) {
    ODNN_REQUIRE_PARAM(x_data != y_data || (map.identity && same_layout(x, y) && x.dtype == y.dtype),
                       "x and y are the same buffer: a transform cannot run in place");
    TransformTensorProblem p;
    p.x = x;
    p.y = y;
    p.x_data = x_data;
    p.y_data = y_data;
    p.scale = s;
    p.map = map;
    log_replay(h, p);
    return dispatch(h, p);
}

}  // namespace

// ---- Transform ----

Status transform_tensor(const Handle& h, const void* alpha, const TensorDesc& x, const void* x_data,
                        const void* beta, const TensorDesc& y, void* y_data) {
    ODNN_RETURN_IF_ERROR(check_set(x, "xDesc"));
    ODNN_RETURN_IF_ERROR(check_set(y, "yDesc"));
    ODNN_RETURN_IF_ERROR(check_same_dims(x, "xDesc", y, "yDesc"));
    ODNN_RETURN_IF_ERROR(check_transform_types(x, "xDesc", y, "yDesc"));
    const Operand xo = operand_of(x), yo = operand_of(y);
    TransformMap id;
    id.nb_dims = xo.nb_dims;
    return run_transform(h, xo, x_data, yo, y_data, scale_for(alpha, beta, y.dtype), id);
}

Status transform_tensor_ex(const Handle& h, const TensorTransformDesc& t, const void* alpha, const TensorDesc& x,
                           const void* x_data, const void* beta, const TensorDesc& y, void* y_data) {
    ODNN_RETURN_IF_ERROR(check_set(x, "srcDesc"));
    ODNN_RETURN_IF_ERROR(check_set(y, "destDesc"));
    int64_t want[kDimMax];
    TransformMap map;
    ODNN_RETURN_IF_ERROR(transform_dims(t, x.nb_dims, x.dims, want, &map));
    bool match = y.nb_dims == x.nb_dims;
    for (int i = 0; match && i < y.nb_dims; ++i) match = y.dims[i] == want[i];
    ODNN_REQUIRE_PARAM(match, "destDesc's dimensions are not those of the transformed srcDesc "
                       "(cudnnInitTransformDest gives them)");
    ODNN_RETURN_IF_ERROR(check_transform_types(x, "srcDesc", y, "destDesc"));
    ODNN_REQUIRE_SUPPORTED(map.identity || !((is_vector_type(x.dtype) && x.vect_count == 1) ||
                                             (is_vector_type(y.dtype) && y.vect_count == 1)),
                           "padding or folding a vector type outside NCHW_VECT_C");
    const Operand xo = operand_of(x), yo = operand_of(y);
    if (map.identity) map.nb_dims = xo.nb_dims;
    return run_transform(h, xo, x_data, yo, y_data, scale_for(alpha, beta, y.dtype), map);
}

Status transform_filter(const Handle& h, const TensorTransformDesc& t, const void* alpha, const FilterDesc& x,
                        const void* x_data, const void* beta, const FilterDesc& y, void* y_data) {
    ODNN_REQUIRE_PARAM(x.is_set(), "srcDesc has not been set (call cudnnSetFilter*Descriptor first)");
    ODNN_REQUIRE_PARAM(y.is_set(), "destDesc has not been set (call cudnnSetFilter*Descriptor first)");
    int64_t want[kDimMax];
    TransformMap map;
    ODNN_RETURN_IF_ERROR(transform_dims(t, x.nb_dims, x.dims, want, &map));
    bool match = y.nb_dims == x.nb_dims;
    for (int i = 0; match && i < y.nb_dims; ++i) match = y.dims[i] == want[i];
    ODNN_REQUIRE_PARAM(match, "destDesc's dimensions are not those of the transformed srcDesc");
    const bool xv = is_vector_type(x.dtype) && x.format != CUDNN_TENSOR_NCHW_VECT_C;
    const bool yv = is_vector_type(y.dtype) && y.format != CUDNN_TENSOR_NCHW_VECT_C;
    ODNN_REQUIRE_SUPPORTED(!(xv || yv) || (xv && yv && x.dtype == y.dtype && map.identity),
                           "srcDesc (%s) and destDesc (%s): a vector type outside NCHW_VECT_C converts only to "
                           "itself, without padding or folding",
                           dtype_name(x.dtype), dtype_name(y.dtype));
    const Operand xo = operand_of(x), yo = operand_of(y);
    if (map.identity) map.nb_dims = xo.nb_dims;
    return run_transform(h, xo, x_data, yo, y_data, scale_for(alpha, beta, y.dtype), map);
}

Status reorder_filter_and_bias(const Handle& h, const FilterDesc& w, cudnnReorderType_t type, const void* w_data,
                               void* w_out, int reorder_bias, const void* b_data, void* b_out) {
    ODNN_REQUIRE_PARAM(type == CUDNN_DEFAULT_REORDER || type == CUDNN_NO_REORDER,
                       "reorderType = %d is not a cudnnReorderType_t value", static_cast<int>(type));
    ODNN_REQUIRE_PARAM(w.is_set(), "filterDesc has not been set (call cudnnSetFilter*Descriptor first)");
    const char* format = w.format == CUDNN_TENSOR_NCHW   ? "NCHW"
                         : w.format == CUDNN_TENSOR_NHWC ? "NHWC"
                                                         : "NCHW_VECT_C";
    ODNN_REQUIRE_PARAM(w.dtype == CUDNN_DATA_INT8x32 && w.format == CUDNN_TENSOR_NCHW_VECT_C,
                       "filterDesc is %s %s: only INT8x32 NCHW_VECT_C filters are reordered", dtype_name(w.dtype),
                       format);
    ODNN_REQUIRE_SUPPORTED(w.nb_dims == 4, "a %d-D filter: only 2-D filters (4 dims) are reordered", w.nb_dims - 2);
    ODNN_REQUIRE_PARAM(w_data != nullptr, "filterData is NULL");
    ODNN_REQUIRE_PARAM(w_out != nullptr, "reorderedFilterData is NULL");
    ODNN_REQUIRE_PARAM(!reorder_bias || b_data != nullptr, "biasData is NULL but reorderBias = %d", reorder_bias);
    ODNN_REQUIRE_PARAM(!reorder_bias || b_out != nullptr, "reorderedBiasData is NULL but reorderBias = %d",
                       reorder_bias);
    if (w_out != w_data) ODNN_RETURN_IF_ERROR(copy_bytes(h, w_out, w_data, w.size_in_bytes()));
    // (the bias of an INT8x32 convolution: K FLOAT values)
    if (reorder_bias && b_out != b_data)
        ODNN_RETURN_IF_ERROR(copy_bytes(h, b_out, b_data, static_cast<size_t>(w.dims[0]) * sizeof(float)));
    return Status::ok();
}

Status init_transform_dest(const TensorTransformDesc& t, const TensorDesc& src, TensorDesc* dest, size_t* bytes) {
    ODNN_RETURN_IF_ERROR(check_set(src, "srcDesc"));
    int64_t dims[kDimMax];
    ODNN_RETURN_IF_ERROR(transform_dims(t, src.nb_dims, src.dims, dims, nullptr));
    cudnnDataType_t dt = src.dtype;
    if (t.dest_format == CUDNN_TENSOR_NCHW_VECT_C) {
        if (dt == CUDNN_DATA_INT8) dt = CUDNN_DATA_INT8x4;
        if (dt == CUDNN_DATA_UINT8) dt = CUDNN_DATA_UINT8x4;
    } else if (src.vect_count > 1) {
        dt = dt == CUDNN_DATA_UINT8x4 ? CUDNN_DATA_UINT8 : CUDNN_DATA_INT8;  // back to scalars
    }
    int idims[kDimMax];
    for (int i = 0; i < src.nb_dims; ++i) idims[i] = static_cast<int>(dims[i]);
    TensorDesc d;
    ODNN_RETURN_IF_ERROR(set_tensor_nd_ex(d, t.dest_format, dt, src.nb_dims, idims));
    *dest = d;
    *bytes = d.size_in_bytes();
    return Status::ok();
}

// ---- Add ----

Status add_tensor(const Handle& h, const void* alpha, const TensorDesc& a, const void* a_data, const void* beta,
                  const TensorDesc& c, void* c_data) {
    ODNN_RETURN_IF_ERROR(check_set(a, "aDesc"));
    ODNN_RETURN_IF_ERROR(check_set(c, "cDesc"));
    ODNN_RETURN_IF_ERROR(check_broadcast(a, "aDesc", c, "cDesc"));
    ODNN_REQUIRE_PARAM(a.dtype == c.dtype, "aDesc (%s) and cDesc (%s) must have the same data type",
                       dtype_name(a.dtype), dtype_name(c.dtype));
    ODNN_REQUIRE_SUPPORTED(c.nb_dims <= 5, "cudnnAddTensor supports tensors of up to 5 dimensions (got %d)",
                           c.nb_dims);
    ODNN_REQUIRE_SUPPORTED(!is_vector_type(c.dtype), "cudnnAddTensor does not support data type %s",
                           dtype_name(c.dtype));
    AddTensorProblem p;
    p.c = operand_of(c);
    const Operand ao = operand_of(a);
    ODNN_REQUIRE_PARAM(a_data != c_data || same_layout(ao, p.c),
                       "A and C are the same buffer but their descriptors differ");
    p.a = broadcast_to(ao, p.c);
    p.a_data = a_data;
    p.c_data = c_data;
    p.scale = scale_for(alpha, beta, c.dtype);
    log_replay(h, p);
    return dispatch(h, p);
}

// ---- Op-tensor ----

namespace {

// cuDNN's table of (A and B, C) data types and the compute type each needs.
bool op_tensor_types(cudnnDataType_t ab, cudnnDataType_t c, cudnnDataType_t* comp) {
    struct Row {
        cudnnDataType_t ab, c, comp;
    };
    static const Row kRows[] = {
        {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_INT8, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_HALF, CUDNN_DATA_HALF, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_INT8, CUDNN_DATA_INT8, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_FLOAT, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT},
        {CUDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT},
    };
    for (const Row& r : kRows)
        if (r.ab == ab && r.c == c) {
            *comp = r.comp;
            return true;
        }
    return false;
}

}  // namespace

Status op_tensor(const Handle& h, const OpTensorDesc& d, const void* alpha1, const TensorDesc& a, const void* a_data,
                 const void* alpha2, const TensorDesc* b, const void* b_data, const void* beta, const TensorDesc& c,
                 void* c_data) {
    OpTensorProblem p;
    p.op = d.op;
    p.propagate_nan = d.nan_opt == CUDNN_PROPAGATE_NAN;
    const bool unary = p.unary();
    ODNN_RETURN_IF_ERROR(check_set(a, "aDesc"));
    ODNN_RETURN_IF_ERROR(check_set(c, "cDesc"));
    ODNN_RETURN_IF_ERROR(check_same_dims(a, "aDesc", c, "cDesc"));
    if (!unary) {
        ODNN_REQUIRE_PARAM(b != nullptr, "bDesc is NULL");
        ODNN_REQUIRE_PARAM(b_data != nullptr, "B is NULL");
        ODNN_REQUIRE_PARAM(alpha2 != nullptr, "alpha2 is NULL");
        ODNN_RETURN_IF_ERROR(check_set(*b, "bDesc"));
        ODNN_RETURN_IF_ERROR(check_broadcast(*b, "bDesc", c, "cDesc"));
        ODNN_REQUIRE_PARAM(b->dtype == a.dtype, "aDesc (%s) and bDesc (%s) must have the same data type",
                           dtype_name(a.dtype), dtype_name(b->dtype));
    }
    ODNN_REQUIRE_SUPPORTED(c.nb_dims <= 5, "cudnnOpTensor supports tensors of up to 5 dimensions (got %d)",
                           c.nb_dims);
    ODNN_REQUIRE_SUPPORTED(a.vect_count == 1 && c.vect_count == 1 && (unary || b->vect_count == 1),
                           "cudnnOpTensor does not support CUDNN_TENSOR_NCHW_VECT_C");
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    ODNN_REQUIRE_PARAM(op_tensor_types(a.dtype, c.dtype, &comp),
                       "cudnnOpTensor does not take A of type %s with C of type %s", dtype_name(a.dtype),
                       dtype_name(c.dtype));
    ODNN_REQUIRE_SUPPORTED(d.comp_type == comp,
                           "A of type %s with C of type %s needs the compute type %s (the descriptor has %s)",
                           dtype_name(a.dtype), dtype_name(c.dtype), dtype_name(comp), dtype_name(d.comp_type));
    p.double_compute = comp == CUDNN_DATA_DOUBLE;
    p.c = operand_of(c);
    p.a = operand_of(a);
    ODNN_REQUIRE_PARAM(a_data != c_data || same_layout(p.a, p.c),
                       "A and C are the same buffer but their descriptors differ");
    if (!unary) {
        const Operand bo = operand_of(*b);
        ODNN_REQUIRE_PARAM(b_data != c_data || same_layout(bo, p.c),
                           "B and C are the same buffer but their descriptors differ");
        p.b = broadcast_to(bo, p.c);
        p.alpha2 = p.double_compute ? *static_cast<const double*>(alpha2) : *static_cast<const float*>(alpha2);
    } else {
        p.b = p.c;  // unused
        p.alpha2 = 0.0;
    }
    p.alpha1 = p.double_compute ? *static_cast<const double*>(alpha1) : *static_cast<const float*>(alpha1);
    p.beta = p.double_compute ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
    p.a_data = a_data;
    p.b_data = unary ? nullptr : b_data;
    p.c_data = c_data;
    log_replay(h, p);
    return dispatch(h, p);
}

// ---- Reduce ----

int64_t ReduceTensorProblem::outputs() const { return c.count(); }

int64_t ReduceTensorProblem::reduce_length() const {
    int64_t n = 1;
    for (int i = 0; i < nb_reduced; ++i) n *= a.dims[reduced[i]];
    return n;
}

bool reduce_has_indices(cudnnReduceTensorOp_t op) {
    return op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX || op == CUDNN_REDUCE_TENSOR_AMAX;
}

int64_t reduce_splits(int64_t outputs, int64_t length) {
    // Long reductions into few outputs are cut into chunks of >= 4096 elements so that
    // about 2048 chunks run at once; each writes one ReducePartial.
    constexpr int64_t kChunk = 4096, kTarget = 2048;
    if (length < 2 * kChunk || outputs >= kTarget) return 1;
    const int64_t by_length = (length + kChunk - 1) / kChunk;
    const int64_t by_outputs = kTarget / outputs;
    return std::max<int64_t>(1, std::min(by_length, by_outputs));
}

size_t reduce_workspace_size(int64_t outputs, int64_t length) {
    const int64_t s = reduce_splits(outputs, length);
    return s > 1 ? static_cast<size_t>(outputs * s) * sizeof(ReducePartial) : 0;
}

namespace {

Status check_reduce_shapes(const TensorDesc& a, const TensorDesc& c) {
    ODNN_RETURN_IF_ERROR(check_set(a, "aDesc"));
    ODNN_RETURN_IF_ERROR(check_set(c, "cDesc"));
    ODNN_REQUIRE_PARAM(a.nb_dims == c.nb_dims, "aDesc has %d dimensions and cDesc has %d: they must have the same rank",
                       a.nb_dims, c.nb_dims);
    for (int i = 0; i < a.nb_dims; ++i)
        ODNN_REQUIRE_PARAM(c.dims[i] == a.dims[i] || c.dims[i] == 1,
                           "dimension %d of cDesc is %lld: it must equal aDesc's (%lld) or be 1", i,
                           static_cast<long long>(c.dims[i]), static_cast<long long>(a.dims[i]));
    return Status::ok();
}

int64_t reduce_outputs_of(const TensorDesc& c) { return c.num_elements(); }

int64_t reduce_length_of(const TensorDesc& a, const TensorDesc& c) {
    int64_t n = 1;
    for (int i = 0; i < a.nb_dims; ++i)
        if (c.dims[i] == 1) n *= a.dims[i];
    return n;
}

bool wants_indices(const ReduceTensorDesc& d) {
    return d.indices == CUDNN_REDUCE_TENSOR_FLATTENED_INDICES && reduce_has_indices(d.op);
}

}  // namespace

Status reduction_indices_size(const ReduceTensorDesc& d, const TensorDesc& a, const TensorDesc& c, size_t* bytes) {
    ODNN_RETURN_IF_ERROR(check_reduce_shapes(a, c));
    *bytes = wants_indices(d) ? static_cast<size_t>(reduce_outputs_of(c)) * sizeof(uint32_t) : 0;
    return Status::ok();
}

Status reduction_workspace_size(const ReduceTensorDesc& d, const TensorDesc& a, const TensorDesc& c, size_t* bytes) {
    ODNN_RETURN_IF_ERROR(check_reduce_shapes(a, c));
    *bytes = reduce_workspace_size(reduce_outputs_of(c), reduce_length_of(a, c));
    return Status::ok();
}

Status reduce_tensor(const Handle& h, const ReduceTensorDesc& d, void* indices, size_t indices_bytes, void* workspace,
                     size_t workspace_bytes, const void* alpha, const TensorDesc& a, const void* a_data,
                     const void* beta, const TensorDesc& c, void* c_data) {
    ODNN_RETURN_IF_ERROR(check_reduce_shapes(a, c));
    bool reduces = false;
    for (int i = 0; i < a.nb_dims; ++i) reduces = reduces || c.dims[i] != a.dims[i];
    ODNN_REQUIRE_PARAM(reduces, "cDesc has aDesc's dimensions: nothing is reduced");
    ODNN_REQUIRE_SUPPORTED(a.vect_count == 1 && c.vect_count == 1 && !is_vector_type(a.dtype) &&
                               !is_vector_type(c.dtype),
                           "cudnnReduceTensor does not support vector data types");
    const bool a_ok = is_float_type(a.dtype) || a.dtype == CUDNN_DATA_INT8;
    ODNN_REQUIRE_SUPPORTED(a_ok && is_float_type(c.dtype), "cudnnReduceTensor does not reduce %s into %s",
                           dtype_name(a.dtype), dtype_name(c.dtype));
    if (a.dtype == CUDNN_DATA_DOUBLE || c.dtype == CUDNN_DATA_DOUBLE || d.comp_type == CUDNN_DATA_DOUBLE) {
        ODNN_REQUIRE_PARAM(a.dtype == CUDNN_DATA_DOUBLE && c.dtype == CUDNN_DATA_DOUBLE &&
                               d.comp_type == CUDNN_DATA_DOUBLE,
                           "DOUBLE data needs A, C and the compute type all DOUBLE (A %s, C %s, compute %s)",
                           dtype_name(a.dtype), dtype_name(c.dtype), dtype_name(d.comp_type));
    } else {
        const bool half_only = a.dtype == CUDNN_DATA_HALF && c.dtype == CUDNN_DATA_HALF;
        ODNN_REQUIRE_PARAM(d.comp_type == CUDNN_DATA_FLOAT || (half_only && d.comp_type == CUDNN_DATA_HALF),
                           "A of type %s with C of type %s needs the compute type FLOAT (the descriptor has %s)",
                           dtype_name(a.dtype), dtype_name(c.dtype), dtype_name(d.comp_type));
    }
    ODNN_REQUIRE_SUPPORTED(d.indices == CUDNN_REDUCE_TENSOR_NO_INDICES || reduce_has_indices(d.op),
                           "indices are computed only for MIN, MAX and AMAX");
    const bool want = wants_indices(d);
    ODNN_REQUIRE_SUPPORTED(!want || d.indices_type == CUDNN_32BIT_INDICES, "only 32-bit indices are supported");
    const int64_t outputs = reduce_outputs_of(c), length = reduce_length_of(a, c);
    if (want) {
        const size_t need = static_cast<size_t>(outputs) * sizeof(uint32_t);
        ODNN_REQUIRE(indices_bytes >= need, CUDNN_STATUS_INVALID_VALUE,
                     "indicesSizeInBytes = %zu: the indices need %zu bytes", indices_bytes, need);
        ODNN_REQUIRE_PARAM(indices != nullptr, "indices is NULL");
    }
    const size_t ws = reduce_workspace_size(outputs, length);
    ODNN_REQUIRE(workspace_bytes >= ws, CUDNN_STATUS_INVALID_VALUE,
                 "workspaceSizeInBytes = %zu: the reduction needs %zu bytes (cudnnGetReductionWorkspaceSize)",
                 workspace_bytes, ws);
    ODNN_REQUIRE_PARAM(ws == 0 || workspace != nullptr, "workspace is NULL");
    ODNN_REQUIRE_PARAM(a_data != c_data, "A and C are the same buffer");

    ReduceTensorProblem p;
    p.op = d.op;
    p.propagate_nan = d.nan_opt == CUDNN_PROPAGATE_NAN;
    p.want_indices = want;
    p.a = operand_of(a);
    p.c = operand_of(c);
    p.a_data = a_data;
    p.c_data = c_data;
    p.indices = want ? static_cast<uint32_t*>(indices) : nullptr;
    p.workspace = workspace;
    p.workspace_bytes = workspace_bytes;
    p.scale = scale_for(alpha, beta, c.dtype);
    for (int i = 0; i < a.nb_dims; ++i) {
        if (c.dims[i] == 1 && a.dims[i] > 1) p.reduced[p.nb_reduced++] = i;
        else p.kept[p.nb_kept++] = i;
    }
    log_replay(h, p);
    return dispatch(h, p);
}

}  // namespace odnn::core
