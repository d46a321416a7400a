// libodnn-selftest-ref.so: odnn's own objects (the odnn_objects target, the same code
// libcudnn.so.9 is linked from) with one addition: on the CPU backend every operation
// runs its reference implementation (src/cpu/ref, the executable spec), whatever faster
// implementation would accept the problem. `odnn selftest` loads it beside the library
// under test (dlopen, RTLD_LOCAL, its symbols bound to itself) and makes the same API
// calls on both, so the reference sees exactly the descriptors, scalars and data the
// library saw, and shares no state with it.
//
// How: for each problem type an implementation with the highest priority is registered
// that forwards to the type's reference (the `ref_*` implementation, found at run time:
// registration order across files is not defined). It also records which implementation
// the ordinary dispatch would have picked for the call, so selftest can say when the
// library under test runs the reference itself (then the comparison checks the API path,
// not a second implementation). A new problem type must be added to the list below;
// without it the module would run that op's ordinary dispatch (selftest reports the
// implementation name, which then is not a ref_* one).
#include <climits>
#include <cstring>
#include <mutex>
#include <string>

#include "core/activation_softmax.hpp"
#include "core/conv_problem.hpp"
#include "core/dropout_problem.hpp"
#include "core/impl_registry.hpp"
#include "core/norm_problem.hpp"
#include "core/ops.hpp"
#include "core/pool_problem.hpp"
#include "core/spatial_tf_problem.hpp"
#include "core/tensor_ops.hpp"

namespace {

using odnn::core::BackendKind;
using odnn::core::Handle;
using odnn::core::Impl;
using odnn::core::ImplRegistry;
using odnn::core::Status;

std::mutex g_mu;
std::string g_last;  // what the ordinary dispatch would have run for the latest call

constexpr const char* kName = "selftest_force_reference";

template <class P>
class ForceReference final : public Impl<P> {
public:
    const char* name() const override { return kName; }
    Status check(const P& p) const override {
        const Impl<P>* ref = reference();
        if (!ref) return Status(CUDNN_STATUS_NOT_SUPPORTED, std::string("no reference implementation of ") + P::kOpName);
        return ref->check(p);
    }
    size_t workspace_size(const P& p) const override {
        const Impl<P>* ref = reference();
        return ref ? ref->workspace_size(p) : 0;
    }
    Status execute(const Handle& h, const P& p) const override {
        std::string ordinary = "(none accepts)";
        for (const Impl<P>* impl : ImplRegistry<P>::get().list(BackendKind::cpu))
            if (impl != this && impl->check(p).is_ok()) {
                ordinary = impl->name();
                break;
            }
        {
            std::lock_guard<std::mutex> lock(g_mu);
            g_last = ordinary;
        }
        return reference()->execute(h, p);
    }

private:
    static const Impl<P>* reference() {
        for (const Impl<P>* impl : ImplRegistry<P>::get().list(BackendKind::cpu))
            if (std::strncmp(impl->name(), "ref_", 4) == 0) return impl;
        return nullptr;
    }
};

template <class P>
bool force() {
    static const ForceReference<P> instance;
    ImplRegistry<P>::get().add(BackendKind::cpu, INT_MAX, &instance);
    return true;
}

using namespace odnn::core;
const bool g_registered = force<ConvProblem>() && force<ConvBiasGradProblem>() && force<Im2ColProblem>() &&
                          force<ActivationFwdProblem>() && force<ActivationBwdProblem>() &&
                          force<SoftmaxFwdProblem>() && force<SoftmaxBwdProblem>() && force<PoolingFwdProblem>() &&
                          force<PoolingBwdProblem>() && force<LrnProblem>() && force<DivNormProblem>() &&
                          force<BnFwdInferenceProblem>() && force<BnFwdTrainingProblem>() &&
                          force<BnBackwardProblem>() && force<DropoutProblem>() && force<SpatialTfGridProblem>() &&
                          force<SpatialTfSamplerProblem>() && force<SetTensorProblem>() &&
                          force<ScaleTensorProblem>() && force<TransformTensorProblem>() &&
                          force<AddTensorProblem>() && force<OpTensorProblem>() && force<ReduceTensorProblem>();

}  // namespace

extern "C" {

// 1 when the module's forcing is in place.
int odnnSelftestRefReady(void) { return g_registered ? 1 : 0; }

// The implementation odnn's ordinary CPU dispatch picks for the latest call, then cleared.
const char* odnnSelftestRefLastImpl(void) {
    static thread_local std::string out;
    std::lock_guard<std::mutex> lock(g_mu);
    out.swap(g_last);
    g_last.clear();
    return out.c_str();
}

}  // extern "C"
