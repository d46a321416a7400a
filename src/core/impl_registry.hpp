// Ordered implementation lists, one per (problem type, backend). An implementation
// accepts a problem or rejects it with a reason; dispatch runs the first that
// accepts, in priority order (the reference registers with the lowest priority).
// ODNN_VERBOSE=dispatch prints every rejection.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/handle.hpp"
#include "core/status.hpp"

namespace odnn::core {

bool dispatch_verbose();
void dispatch_note(const char* op, const char* impl, const std::string& why);

template <class Problem>
class Impl {
public:
    virtual ~Impl() = default;
    virtual const char* name() const = 0;
    // OK to accept; otherwise the reason this implementation cannot run `p`.
    virtual Status check(const Problem& p) const { return Status::ok(); }
    virtual size_t workspace_size(const Problem& p) const { return 0; }
    // Whether running `p` uses tensor cores (reported as CUDNN_TENSOR_OP_MATH by searches).
    virtual bool tensor_cores(const Problem& p) const { return false; }
    virtual Status execute(const Handle& h, const Problem& p) const = 0;
};

template <class Problem>
class ImplRegistry {
public:
    static ImplRegistry& get() {
        static ImplRegistry* r = new ImplRegistry();
        return *r;
    }

    void add(BackendKind backend, int priority, const Impl<Problem>* impl) {
        std::lock_guard<std::mutex> lock(mu_);
        entries_.push_back({backend, priority, impl});
        std::stable_sort(entries_.begin(), entries_.end(),
                         [](const Entry& a, const Entry& b) { return a.priority > b.priority; });
    }

    std::vector<const Impl<Problem>*> list(BackendKind backend) const {
        std::lock_guard<std::mutex> lock(mu_);
        std::vector<const Impl<Problem>*> out;
        for (const Entry& e : entries_)
            if (e.backend == backend) out.push_back(e.impl);
        return out;
    }

    // The first implementation that accepts `p` (and, given `workspace_limit`, needs no more
    // workspace than that), or NOT_SUPPORTED with every reason.
    StatusOr<const Impl<Problem>*> select(BackendKind backend, const Problem& p,
                                          size_t workspace_limit = SIZE_MAX) const {
        std::string reasons;
        for (const Impl<Problem>* impl : list(backend)) {
            const Status s = [&] {
                Status c = impl->check(p);
                if (!c.is_ok() || workspace_limit == SIZE_MAX) return c;
                const size_t need = impl->workspace_size(p);
                if (need <= workspace_limit) return c;
                return make_status(CUDNN_STATUS_NOT_SUPPORTED, "needs %zu bytes of workspace, %zu given", need,
                                   workspace_limit);
            }();
            if (s.is_ok()) return impl;
            if (dispatch_verbose()) dispatch_note(Problem::kOpName, impl->name(), s.message());
            reasons += std::string(reasons.empty() ? "" : "; ") + impl->name() + ": " + s.message();
        }
        return Status(CUDNN_STATUS_NOT_SUPPORTED, std::string("no ") + backend_name(backend) +
                                                      " implementation of " + Problem::kOpName +
                                                      " accepts this problem" +
                                                      (reasons.empty() ? "" : " (" + reasons + ")"));
    }

private:
    struct Entry {
        BackendKind backend;
        int priority;
        const Impl<Problem>* impl;
    };
    mutable std::mutex mu_;
    std::vector<Entry> entries_;
};

template <class Problem>
Status dispatch(const Handle& h, const Problem& p) {
    auto impl = ImplRegistry<Problem>::get().select(h.backend, p);
    if (!impl.is_ok()) return impl.status();
    return impl.value()->execute(h, p);
}

// Priorities: optimised kernels above the reference, which is always last.
constexpr int kPriorityReference = 0;
constexpr int kPriorityGeneric = 100;
constexpr int kPriorityFast = 200;

}  // namespace odnn::core

#define ODNN_IMPL_CONCAT2(a, b) a##b
#define ODNN_IMPL_CONCAT(a, b) ODNN_IMPL_CONCAT2(a, b)
// Registers a statically allocated implementation object at load time.
#define ODNN_REGISTER_IMPL(backend, Problem, ImplType, priority)                                          \
    static const bool ODNN_IMPL_CONCAT(odnn_registered_, __LINE__) = [] {                                \
        static const ImplType instance;                                                                  \
        ::odnn::core::ImplRegistry<Problem>::get().add(::odnn::core::BackendKind::backend, priority,     \
                                                       &instance);                                       \
        return true;                                                                                     \
    }()
