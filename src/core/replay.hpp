// Replay lines: with the info log level on (CUDNN_LOGLEVEL_DBG=3, or a cudnnSetCallback
// mask with CUDNN_SEV_INFO), every compute call the `odnn bench` tool can run is logged,
// through the same sink as the rest of the log, as a command that replays it:
//   odnn bench 'conv fwd dt=f16 layout=nhwc n=32 c=64 h=56 w=56 k=64 r=3 s=3 pad=1 algo=1'
// in exactly the problem syntax of tools/bench/problem.cpp. What that syntax cannot say
// (arbitrary strides, mixed data types, fused epilogues, ...) is replayed as the nearest
// problem it can say, and the line ends with a `# ... not reproducible` note.
//
// The core execution points call log_replay() once each, just before they dispatch;
// replay_command() is the text alone (for tests).
#pragma once

#include <string>

namespace odnn::core {

class Handle;
struct ConvProblem;
struct ActivationFwdProblem;
struct ActivationBwdProblem;
struct SoftmaxFwdProblem;
struct SoftmaxBwdProblem;
struct PoolingFwdProblem;
struct PoolingBwdProblem;
struct LrnProblem;
struct BnFwdInferenceProblem;
struct BnFwdTrainingProblem;
struct BnBackwardProblem;
struct NormRequest;
struct OpTensorProblem;
struct AddTensorProblem;
struct ReduceTensorProblem;
struct TransformTensorProblem;
struct SetTensorProblem;
struct ScaleTensorProblem;
struct DropoutProblem;
struct DropoutDesc;

// Whether replay lines are wanted now (one atomic load once logging is configured).
bool replay_enabled();

// `odnn bench '<problem>'` plus any "  # ... not reproducible" note.
std::string replay_command(const ConvProblem& p);
std::string replay_command(const ActivationFwdProblem& p);
std::string replay_command(const ActivationBwdProblem& p);
std::string replay_command(const SoftmaxFwdProblem& p);
std::string replay_command(const SoftmaxBwdProblem& p);
std::string replay_command(const PoolingFwdProblem& p);
std::string replay_command(const PoolingBwdProblem& p);
std::string replay_command(const LrnProblem& p);
std::string replay_command(const BnFwdInferenceProblem& p, const NormRequest& r);
std::string replay_command(const BnFwdTrainingProblem& p, const NormRequest& r);
std::string replay_command(const BnBackwardProblem& p, const NormRequest& r);
std::string replay_command(const OpTensorProblem& p);
std::string replay_command(const AddTensorProblem& p);
std::string replay_command(const ReduceTensorProblem& p);
std::string replay_command(const TransformTensorProblem& p);
std::string replay_command(const SetTensorProblem& p);
std::string replay_command(const ScaleTensorProblem& p);
std::string replay_command(const DropoutProblem& p, const DropoutDesc& d);

// Logs `command` at info level for the call of `op` on `h`.
void log_replay_line(const Handle& h, const char* op, const std::string& command);

// Logs replay_command(p, ...) when replay_enabled(); nothing else otherwise.
template <class P, class... Extra>
void log_replay(const Handle& h, const P& p, const Extra&... extra) {
    if (replay_enabled()) log_replay_line(h, P::kOpName, replay_command(p, extra...));
}

}  // namespace odnn::core
