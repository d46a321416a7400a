// A libcudnn broken on purpose, for testing `odnn selftest` itself: odnn's objects plus
// three CPU implementations registered above everything else, each wrong in a way a
// real kernel can be:
//   - activation forward: the last element of y is off by 0.125 + 1% (a tail bug);
//   - set tensor: the first element of y is left as it was (an unwritten element);
//   - convolution forward with algo 0: the first element of y is off by 1% + 1/64.
// Every other operation is odnn's own. selftest must fail exactly those cases.
#include <cmath>
#include <cstring>

#include "core/activation_softmax.hpp"
#include "core/conv_problem.hpp"
#include "core/elem_access.hpp"
#include "core/impl_registry.hpp"
#include "core/ops.hpp"

namespace {

using odnn::core::BackendKind;
using odnn::core::Handle;
using odnn::core::Impl;
using odnn::core::ImplRegistry;
using odnn::core::Status;

template <class P>
const Impl<P>* reference_of() {
    for (const Impl<P>* impl : ImplRegistry<P>::get().list(BackendKind::cpu))
        if (std::strncmp(impl->name(), "ref_", 4) == 0) return impl;
    return nullptr;
}

class BrokenActivationFwd final : public Impl<odnn::core::ActivationFwdProblem> {
public:
    const char* name() const override { return "broken_activation_fwd"; }
    Status execute(const Handle& h, const odnn::core::ActivationFwdProblem& p) const override {
        Status s = reference_of<odnn::core::ActivationFwdProblem>()->execute(h, p);
        if (!s.is_ok()) return s;
        const int64_t off = p.y.offset_of_linear(p.y.count() - 1);
        const double v = odnn::core::load_elem(p.y_data, off, p.y.dtype);
        odnn::core::store_elem(p.y_data, off, p.y.dtype, v + 0.125 + 0.01 * std::fabs(v));
        return s;
    }
};

class BrokenSetTensor final : public Impl<odnn::core::SetTensorProblem> {
public:
    const char* name() const override { return "broken_set_tensor"; }
    Status execute(const Handle& h, const odnn::core::SetTensorProblem& p) const override {
        const double before = odnn::core::load_elem(p.y_data, 0, p.y.dtype);
        Status s = reference_of<odnn::core::SetTensorProblem>()->execute(h, p);
        odnn::core::store_elem(p.y_data, 0, p.y.dtype, before);
        return s;
    }
};

class BrokenConvFwd final : public Impl<odnn::core::ConvProblem> {
public:
    const char* name() const override { return "broken_conv_fwd_algo0"; }
    Status check(const odnn::core::ConvProblem& p) const override {
        if (p.kind != odnn::core::ConvKind::fwd || p.algo != 0 || p.epi.enabled)
            return Status(CUDNN_STATUS_NOT_SUPPORTED, "only forward algo 0 is broken");
        return reference_of<odnn::core::ConvProblem>()->check(p);
    }
    Status execute(const Handle& h, const odnn::core::ConvProblem& p) const override {
        Status s = reference_of<odnn::core::ConvProblem>()->execute(h, p);
        if (!s.is_ok()) return s;
        const double v = odnn::core::load_elem(p.y_data, 0, p.y.dtype);
        odnn::core::store_elem(p.y_data, 0, p.y.dtype, v + 1.0 / 64 + 0.01 * std::fabs(v));
        return s;
    }
};

}  // namespace

ODNN_REGISTER_IMPL(cpu, odnn::core::ActivationFwdProblem, BrokenActivationFwd, 1000);
ODNN_REGISTER_IMPL(cpu, odnn::core::SetTensorProblem, BrokenSetTensor, 1000);
ODNN_REGISTER_IMPL(cpu, odnn::core::ConvProblem, BrokenConvFwd, 1000);
