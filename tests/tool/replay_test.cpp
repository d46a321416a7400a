// Replay lines, round trip: a bench problem is run through odnn's public API by the
// bench's own runner (which makes the calls a program would make), the library logs each
// compute call to CUDNN_LOGDEST_DBG as `odnn bench '...'`, and every such line must
// parse with bench's parser back to the same problem. Calls bench's syntax cannot
// describe (arbitrary strides, other ranks) must still give a parseable line that says
// `# ... not reproducible`.
//
// The test runs with CUDNN_LOGLEVEL_DBG=3 and CUDNN_LOGDEST_DBG=<build dir>/replay_%i.log
// (main() sets them unless the environment has them; the library reads them at its first
// call); ReplayOff runs with level 2 and checks that nothing is logged.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "conv_bench.hpp"
#include "cudnn.h"
#include "problem.hpp"
#include "runtime.hpp"

namespace {

using odnn_bench::Problem;

std::string log_path() {
    const char* d = std::getenv("CUDNN_LOGDEST_DBG");
    if (!d) return "";
    std::string s = d;
    const size_t i = s.find("%i");
    if (i != std::string::npos) s.replace(i, 2, std::to_string(::getpid()));
    return s;
}

// The replay lines appended to the log since the last call: (problem text, note).
std::vector<std::pair<std::string, std::string>> new_replays() {
    static std::streamoff done = 0;
    std::vector<std::pair<std::string, std::string>> out;
    std::ifstream in(log_path());
    if (!in) return out;
    in.seekg(done);
    std::string line;
    while (std::getline(in, line)) {
        const std::string tag = "odnn bench '";
        const size_t a = line.find(tag);
        if (a == std::string::npos) continue;
        const size_t b = line.find('\'', a + tag.size());
        EXPECT_NE(b, std::string::npos) << "unterminated replay line: " << line;
        if (b == std::string::npos) continue;
        std::string note = line.substr(b + 1);
        out.emplace_back(line.substr(a + tag.size(), b - a - tag.size()), note);
    }
    in.clear();
    in.seekg(0, std::ios::end);
    done = in.tellg();
    return out;
}

odnn_bench::CudnnLib& lib() {
    static std::unique_ptr<odnn_bench::CudnnLib> l = [] {
        std::string err;
        auto x = odnn_bench::CudnnLib::open(ODNN_LIBCUDNN, &err);
        if (!x || !x->init(&err)) {
            std::fprintf(stderr, "%s\n", err.c_str());
            std::abort();
        }
        return x;
    }();
    return *l;
}

// A problem with every default bench applies written out, per-dim keys expanded: two
// problems that bench runs identically normalise to the same map.
std::map<std::string, std::string> normal(const Problem& p) {
    std::map<std::string, std::string> m;
    m["op"] = p.op + " " + p.dir;
    m["dt"] = p.dt;
    m["layout"] = p.layout;
    m["math"] = p.math;
    for (const auto& kv : p.s) m[kv.first] = kv.second;
    for (const auto& kv : p.v) m[kv.first] = std::to_string(kv.second);
    for (const auto& kv : p.f) m[kv.first] = odnn_bench::real_text(kv.second);
    const bool three_d = p.v.count("d") > 0;
    const char* suffix[3] = {"_d", "_h", "_w"};
    const char* win[3] = {"t", "r", "s"};
    if (p.op == "conv" || p.op == "pool") {
        for (int i = three_d ? 0 : 1; i < 3; ++i) {
            const long long w = p.get(win[i], p.op == "pool" ? 2 : 1);
            m[std::string("pad") + suffix[i]] = std::to_string(p.get(std::string("pad") + suffix[i], p.get("pad", 0)));
            const long long sdef = p.op == "pool" ? w : 1;
            m[std::string("stride") + suffix[i]] =
                std::to_string(p.get(std::string("stride") + suffix[i], p.get("stride", sdef)));
            if (p.op == "conv")
                m[std::string("dil") + suffix[i]] = std::to_string(p.get(std::string("dil") + suffix[i], p.get("dil", 1)));
        }
        m.erase("pad");
        m.erase("stride");
        m.erase("dil");
        if (p.op == "conv") m["g"] = std::to_string(p.get("g", 1));
    } else if (p.op == "lrn") {
        m["size"] = std::to_string(p.get("size", 5));
        m["alpha"] = odnn_bench::real_text(p.real("alpha", 1e-4));
        m["beta"] = odnn_bench::real_text(p.real("beta", 0.75));
        m["k"] = odnn_bench::real_text(p.real("k", 2.0));
    } else if (p.op == "dropout") {
        m["p"] = odnn_bench::real_text(static_cast<float>(p.real("p", 0.5)));  // the descriptor keeps a float
    } else if (p.op == "reduce") {
        m["indices"] = std::to_string(p.get("indices", 0));
        const char* in[] = {"n", "c", "d", "h", "w"};
        const char* out[] = {"on", "oc", "od", "oh", "ow"};
        for (int i = 0; i < 5; ++i)
            if (i != 2 || three_d) m[out[i]] = std::to_string(p.get(out[i], p.get(in[i], 1)));
    } else if (p.op == "transform") {
        m["ydt"] = p.word("ydt", p.dt);
    }
    return m;
}

std::string show(const std::map<std::string, std::string>& m) {
    std::string s;
    for (const auto& kv : m) s += kv.first + "=" + kv.second + " ";
    return s;
}

class Replay : public ::testing::TestWithParam<std::string> {};

TEST_P(Replay, RoundTrip) {
    Problem want;
    std::string err;
    ASSERT_TRUE(odnn_bench::parse_problem(GetParam(), &want, &err)) << err;
    new_replays();  // skip what earlier calls logged
    odnn_bench::Options o;
    o.warmup = 0;
    o.reps = 1;
    o.check = false;
    const odnn_bench::RunResult r = odnn_bench::run_problem(lib(), want, o);
    ASSERT_TRUE(r.ok) << GetParam() << ": " << r.error;
    const auto lines = new_replays();
    ASSERT_FALSE(lines.empty()) << "no replay line logged for " << GetParam();
    int matching = 0;
    for (const auto& l : lines) {
        Problem got;
        ASSERT_TRUE(odnn_bench::parse_problem(l.first, &got, &err)) << "'" << l.first << "': " << err;
        // bench's runner makes preparatory calls too (the forward before a backward)
        if (got.op != want.op || got.dir != want.dir) continue;
        ++matching;
        EXPECT_EQ(show(normal(got)), show(normal(want))) << "replayed as '" << l.first << "'";
        EXPECT_EQ(l.second.find("not reproducible"), std::string::npos) << l.first << l.second;
    }
    EXPECT_GE(matching, 1) << "no replay line of " << want.op << " " << want.dir << " among " << lines.size();
}

INSTANTIATE_TEST_SUITE_P(
    Bench, Replay,
    ::testing::Values(
        "conv fwd dt=f32 n=2 c=3 h=7 w=5 k=4 r=3 s=3 pad=1 algo=0",
        "conv fwd dt=f32 layout=nhwc n=1 c=4 h=6 w=6 k=8 r=3 s=3 pad=1 stride=2 algo=1 math=fma",
        "conv bwd_data dt=f32 n=2 c=4 h=5 w=5 k=6 r=3 s=3 pad_h=1 pad_w=0 algo=1",
        "conv bwd_filter dt=f64 n=1 c=4 h=5 w=7 k=2 r=2 s=3 dil=2 g=2 algo=0",
        "conv fwd dt=f32 n=1 c=2 d=3 h=4 w=5 k=2 t=2 r=2 s=2 pad=0 algo=0",
        "conv fwd dt=f16 layout=nhwc n=1 c=8 h=5 w=5 k=8 r=1 s=1 pad=0 algo=1",
        "act fwd mode=relu n=2 c=3 h=4 w=5", "act fwd mode=swish dt=f64 n=2 c=3 h=4 w=5",
        "act bwd mode=elu dt=f16 layout=nhwc n=2 c=3 h=4 w=5", "act bwd mode=sigmoid n=1 c=2 d=3 h=4 w=5",
        "softmax fwd alg=log mode=channel n=2 c=5 h=3 w=3", "softmax bwd alg=fast mode=instance dt=f64 n=2 c=5 h=1 w=1",
        "pool fwd mode=avg_ex r=3 s=3 pad=1 stride=2 n=2 c=3 h=9 w=9",
        "pool fwd mode=max r=3 s=2 pad_h=1 pad_w=0 stride=1 n=1 c=2 h=7 w=7",
        "pool bwd mode=max t=2 r=2 s=2 stride=2 n=1 c=2 d=4 h=6 w=6",
        "pool bwd mode=avg_in dt=f16 layout=nhwc r=2 s=2 n=2 c=3 h=6 w=6",
        "bn fwd_inf mode=spatial n=2 c=3 h=4 w=5", "bn fwd_train mode=per_act dt=f16 n=4 c=3 h=2 w=2",
        "bn bwd mode=persistent layout=nhwc n=2 c=3 h=4 w=5",
        "optensor op=mul n=2 c=3 h=4 w=5", "optensor op=max dt=f16 layout=nhwc n=2 c=3 h=4 w=5",
        "bias n=2 c=3 h=4 w=5", "bias dt=f16 layout=nhwc n=2 c=3 h=4 w=5",
        "lrn fwd size=3 alpha=0.001 n=2 c=7 h=5 w=5", "lrn bwd dt=f16 layout=nhwc beta=0.5 k=1 n=2 c=7 h=5 w=5",
        "dropout fwd p=0.25 n=2 c=7 h=5 w=5", "dropout bwd p=0.1 dt=bf16 n=2 c=7 h=5 w=5",
        "reduce op=add n=2 c=7 h=5 w=5 oh=1 ow=1", "reduce op=max indices=1 dt=f16 n=2 c=7 h=5 w=5 oc=1",
        "reduce op=norm2 n=2 c=3 d=2 h=5 w=5 on=1 od=1",
        "transform to=nhwc n=2 c=7 h=5 w=5", "transform to=nchw ydt=f16 layout=nhwc n=2 c=7 h=5 w=5",
        "scale dt=f64 n=2 c=7 h=5 w=5", "set dt=f16 layout=nhwc n=2 c=7 h=5 w=5"));

#define CHECK_OK(call) ASSERT_EQ((call), CUDNN_STATUS_SUCCESS) << #call

// The public API, straight: calls with descriptors bench cannot describe.
template <class F>
F api(const char* name) {
    void* dl = dlopen(ODNN_LIBCUDNN, RTLD_NOW | RTLD_LOCAL);
    return reinterpret_cast<F>(dlsym(dl, name));
}
#define API(name) api<decltype(&::name)>(#name)

TEST(ReplayNote, StridesNotReproducible) {
    new_replays();
    cudnnTensorDescriptor_t x;
    CHECK_OK(API(cudnnCreateTensorDescriptor)(&x));
    // 2x3x4x5 inside a 2x3x4x8 buffer: rows padded to 8 elements
    const int dims[4] = {2, 3, 4, 5}, strides[4] = {96, 32, 8, 1};
    CHECK_OK(API(cudnnSetTensorNdDescriptor)(x, CUDNN_DATA_FLOAT, 4, dims, strides));
    cudnnActivationDescriptor_t a;
    CHECK_OK(API(cudnnCreateActivationDescriptor)(&a));
    CHECK_OK(API(cudnnSetActivationDescriptor)(a, CUDNN_ACTIVATION_TANH, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    std::vector<float> in(2 * 96, 0.5f), out(2 * 96, 0.0f);
    const float one = 1, zero = 0;
    CHECK_OK(API(cudnnActivationForward)(lib().handle(), a, &one, x, in.data(), &zero, x, out.data()));
    // a 3-D tensor: N, C, W
    cudnnTensorDescriptor_t t3;
    CHECK_OK(API(cudnnCreateTensorDescriptor)(&t3));
    const int d3[3] = {2, 3, 5}, s3[3] = {15, 5, 1};
    CHECK_OK(API(cudnnSetTensorNdDescriptor)(t3, CUDNN_DATA_FLOAT, 3, d3, s3));
    CHECK_OK(API(cudnnSetTensor)(lib().handle(), t3, out.data(), &one));
    API(cudnnDestroyTensorDescriptor)(x);
    API(cudnnDestroyTensorDescriptor)(t3);
    API(cudnnDestroyActivationDescriptor)(a);

    const auto lines = new_replays();
    ASSERT_EQ(lines.size(), 2u);
    Problem p;
    std::string err;
    ASSERT_TRUE(odnn_bench::parse_problem(lines[0].first, &p, &err)) << lines[0].first << ": " << err;
    EXPECT_EQ(p.str(), "act fwd mode=tanh dt=f32 layout=nchw n=2 c=3 h=4 w=5");
    EXPECT_EQ(lines[0].second, "  # strides not reproducible");
    ASSERT_TRUE(odnn_bench::parse_problem(lines[1].first, &p, &err)) << lines[1].first << ": " << err;
    EXPECT_EQ(p.str(), "set dt=f32 layout=nchw n=2 c=3 h=1 w=5");
    EXPECT_EQ(lines[1].second, "  # 3-D tensor not reproducible");
}

// With the level below info (ctest runs this one with CUDNN_LOGLEVEL_DBG=2), nothing.
TEST(ReplayOff, NothingBelowInfoLevel) {
    const char* level = std::getenv("CUDNN_LOGLEVEL_DBG");
    if (!level || std::atoi(level) >= 3) GTEST_SKIP() << "runs with CUDNN_LOGLEVEL_DBG < 3";
    Problem p;
    std::string err;
    ASSERT_TRUE(odnn_bench::parse_problem("act fwd mode=relu n=2 c=3 h=4 w=5", &p, &err));
    odnn_bench::Options o;
    o.warmup = 0;
    o.reps = 1;
    o.check = false;
    ASSERT_TRUE(odnn_bench::run_problem(lib(), p, o).ok);
    // an error is logged at this level: the log is live, it just holds no replay line
    EXPECT_EQ(API(cudnnSetTensor)(lib().handle(), nullptr, nullptr, nullptr), CUDNN_STATUS_BAD_PARAM);
    std::ifstream in(log_path());
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("cudnnSetTensor"), std::string::npos) << "nothing logged at level " << level;
    EXPECT_EQ(text.str().find("odnn bench"), std::string::npos) << text.str();
}

}  // namespace

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    setenv("ODNN_BACKEND", "cpu", 0);
    setenv("CUDNN_LOGLEVEL_DBG", "3", 0);
    setenv("CUDNN_LOGDEST_DBG", ODNN_REPLAY_LOG_DIR "/replay_%i.log", 0);
    const int rc = RUN_ALL_TESTS();
    std::remove(log_path().c_str());
    return rc;
}
