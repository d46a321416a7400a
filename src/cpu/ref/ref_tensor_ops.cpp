// Reference transform / add / op-tensor / reduce: one pass over the output's logical
// elements, every value in double, written once through the alpha / beta rule.
#include <cmath>
#include <vector>

#include "core/elem_access.hpp"
#include "core/tensor_ops.hpp"

namespace odnn::cpu {

using core::Status;

namespace {

constexpr int64_t kParallelMin = 1 << 15;

void unravel(int64_t linear, const core::Operand& o, int64_t* idx) {
    for (int d = o.nb_dims - 1; d >= 0; --d) {
        idx[d] = linear % o.dims[d];
        linear /= o.dims[d];
    }
}

class RefTransform final : public core::Impl<core::TransformTensorProblem> {
public:
    const char* name() const override { return "ref_transform_tensor"; }
    Status execute(const core::Handle&, const core::TransformTensorProblem& p) const override {
        const int64_t n = p.y.count();
#pragma omp parallel for schedule(static) if (n > kParallelMin)
        for (int64_t i = 0; i < n; ++i) {
            int64_t yi[core::kMaxOperandDims], xi[core::kMaxOperandDims];
            unravel(i, p.y, yi);
            const double v = p.map.source(yi, xi) ? core::load_elem(p.x_data, p.x.offset(xi), p.x.dtype) : 0.0;
            core::blend_store(p.y_data, p.y.offset(yi), p.y.dtype, v, p.scale.alpha, p.scale.beta);
        }
        return Status::ok();
    }
};

class RefAdd final : public core::Impl<core::AddTensorProblem> {
public:
    const char* name() const override { return "ref_add_tensor"; }
    Status execute(const core::Handle&, const core::AddTensorProblem& p) const override {
        const int64_t n = p.c.count();
#pragma omp parallel for schedule(static) if (n > kParallelMin)
        for (int64_t i = 0; i < n; ++i) {
            const double a = core::load_elem(p.a_data, p.a.offset_of_linear(i), p.a.dtype);
            core::blend_store(p.c_data, p.c.offset_of_linear(i), p.c.dtype, a, p.scale.alpha, p.scale.beta);
        }
        return Status::ok();
    }
};

class RefOpTensor final : public core::Impl<core::OpTensorProblem> {
public:
    const char* name() const override { return "ref_op_tensor"; }
    Status execute(const core::Handle&, const core::OpTensorProblem& p) const override {
        const int64_t n = p.c.count();
        const bool unary = p.unary();
#pragma omp parallel for schedule(static) if (n > kParallelMin)
        for (int64_t i = 0; i < n; ++i) {
            const double a = p.alpha1 * core::load_elem(p.a_data, p.a.offset_of_linear(i), p.a.dtype);
            const double b = unary ? 0.0 : p.alpha2 * core::load_elem(p.b_data, p.b.offset_of_linear(i), p.b.dtype);
            const double r = core::op_tensor_apply<double>(p.op, p.propagate_nan, a, b);
            core::blend_store(p.c_data, p.c.offset_of_linear(i), p.c.dtype, r, 1.0, p.beta);
        }
        return Status::ok();
    }
};

class RefReduce final : public core::Impl<core::ReduceTensorProblem> {
public:
    const char* name() const override { return "ref_reduce_tensor"; }
    Status execute(const core::Handle&, const core::ReduceTensorProblem& p) const override {
        const int64_t outputs = p.outputs(), length = p.reduce_length();
        const int op = p.op;
#pragma omp parallel for schedule(dynamic, 16) if (outputs * length > kParallelMin)
        for (int64_t o = 0; o < outputs; ++o) {
            int64_t idx[core::kMaxOperandDims];
            unravel(o, p.c, idx);  // the kept coordinates; reduced ones are 0 here
            const int64_t c_off = p.c.offset(idx);
            // Products start at 1 (all zeros give MUL_NO_ZEROS its empty product, 1), sums at 0.
            double acc = op == CUDNN_REDUCE_TENSOR_MUL || op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS ? 1.0 : 0.0;
            uint32_t best_i = 0;
            for (int64_t k = 0; k < length; ++k) {
                int64_t r = k;
                for (int j = p.nb_reduced - 1; j >= 0; --j) {
                    const int d = p.reduced[j];
                    idx[d] = r % p.a.dims[d];
                    r /= p.a.dims[d];
                }
                const double v = core::load_elem(p.a_data, p.a.offset(idx), p.a.dtype);
                switch (op) {
                    case CUDNN_REDUCE_TENSOR_ADD:
                    case CUDNN_REDUCE_TENSOR_AVG: acc += v; break;
                    case CUDNN_REDUCE_TENSOR_MUL: acc *= v; break;
                    case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS:
                        if (v != 0.0) acc *= v;
                        break;
                    case CUDNN_REDUCE_TENSOR_NORM1: acc += std::fabs(v); break;
                    case CUDNN_REDUCE_TENSOR_NORM2: acc += v * v; break;
                    default: {  // MIN, MAX, AMAX
                        const double c = op == CUDNN_REDUCE_TENSOR_AMAX ? std::fabs(v) : v;
                        const uint32_t ki = static_cast<uint32_t>(k);
                        if (k == 0 || core::reduce_better(op, p.propagate_nan, c, ki, acc, best_i)) {
                            acc = c;
                            best_i = ki;
                        }
                    }
                }
            }
            if (op == CUDNN_REDUCE_TENSOR_AVG) acc /= static_cast<double>(length);
            if (op == CUDNN_REDUCE_TENSOR_NORM2) acc = std::sqrt(acc);
            core::blend_store(p.c_data, c_off, p.c.dtype, acc, p.scale.alpha, p.scale.beta);
            if (p.want_indices) p.indices[o] = best_i;
        }
        return Status::ok();
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, core::TransformTensorProblem, RefTransform, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::AddTensorProblem, RefAdd, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::OpTensorProblem, RefOpTensor, core::kPriorityReference);
ODNN_REGISTER_IMPL(cpu, core::ReduceTensorProblem, RefReduce, core::kPriorityReference);

}  // namespace odnn::cpu
