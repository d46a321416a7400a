// odnn bench's problem strings: every op parses, prints back in a canonical form that
// parses to the same problem, bad strings are refused with a message naming the fault,
// and the bytes each memory-bound op moves are what its runner moves.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "conv_bench.hpp"
#include "problem.hpp"

namespace {

using odnn_bench::Problem;

Problem parsed(const std::string& line) {
    Problem p;
    std::string err;
    EXPECT_TRUE(odnn_bench::parse_problem(line, &p, &err)) << line << ": " << err;
    return p;
}

std::string refusal(const std::string& line) {
    Problem p;
    std::string err;
    EXPECT_FALSE(odnn_bench::parse_problem(line, &p, &err)) << line << " was accepted as " << p.str();
    EXPECT_FALSE(err.empty()) << line;
    return err;
}

bool same(const Problem& a, const Problem& b) {
    return a.op == b.op && a.dir == b.dir && a.dt == b.dt && a.layout == b.layout && a.math == b.math && a.v == b.v &&
           a.s == b.s && a.f == b.f;
}

TEST(BenchProblem, EveryOpRoundTrips) {
    const std::vector<std::string> lines = {
        "conv fwd dt=f16 layout=nhwc n=32 c=64 h=56 w=56 k=64 r=3 s=3 pad=1 stride=1 dil=1 g=1",
        "conv bwd_data dt=bf16 n=2 c=8 d=3 h=5 w=7 k=4 t=1 r=3 s=3 pad_h=1 pad_w=0 stride_w=2 algo=1 math=fma",
        "conv bwd_filter dt=f64 n=1 c=3 h=5 w=5 k=2 r=2 s=2",
        "copy dt=f32 n=1000",
        "act fwd mode=relu dt=bf16 layout=nhwc n=128 c=256 h=56 w=56",
        "act bwd mode=swish n=1 c=2 d=3 h=4 w=5",
        "softmax bwd alg=log mode=instance n=2 c=10 h=1 w=1",
        "pool fwd mode=avg_ex r=3 s=3 pad=1 stride=2 n=2 c=3 h=9 w=9",
        "pool bwd mode=max t=2 r=2 s=2 pad_d=0 pad_h=1 pad_w=0 stride_d=1 stride_h=2 stride_w=2 n=1 c=2 d=4 h=6 w=6",
        "bn fwd_train mode=per_act dt=f16 n=4 c=3 h=5 w=5",
        "bn bwd api=ex mode=spatial dt=bf16 n=4 c=3 h=5 w=5",
        "optensor op=max n=1 c=2 h=3 w=4",
        "optensor op=sqrt n=1 c=2 h=3 w=4",
        "bias dt=f16 layout=nhwc n=2 c=3 h=4 w=5",
        "lrn fwd size=3 alpha=0.001 beta=0.5 k=1 n=2 c=7 h=5 w=5",
        "lrn bwd dt=f16 layout=nhwc n=2 c=7 h=5 w=5",
        "divnorm fwd size=3 alpha=0.5 beta=0.75 k=1 n=2 c=7 h=5 w=5",
        "divnorm bwd layout=nhwc n=2 c=7 h=5 w=5",
        "stf fwd n=2 c=3 h=5 w=6",
        "stf grid_fwd dt=f64 n=2 c=3 h=5 w=6",
        "stf grid_bwd dt=f16 n=2 c=1 h=5 w=6",
        "dropout fwd p=0.1 n=2 c=7 h=5 w=5",
        "dropout bwd dt=bf16 p=0.5 n=2 c=7 d=2 h=5 w=5",
        "reduce op=add n=2 c=7 h=5 w=5 oh=1 ow=1",
        "reduce op=amax indices=1 dt=i8 n=2 c=7 d=3 h=5 w=5 on=1 oc=1 od=1",
        "transform to=nhwc n=2 c=7 h=5 w=5",
        "transform to=nchw ydt=f16 layout=nhwc n=2 c=7 h=5 w=5",
        "scale dt=f64 n=2 c=7 h=5 w=5",
        "set dt=i8 layout=nhwc n=2 c=7 h=5 w=5",
    };
    for (const std::string& line : lines) {
        const Problem p = parsed(line);
        const std::string canon = p.str();
        const Problem q = parsed(canon);
        EXPECT_TRUE(same(p, q)) << line << " -> " << canon << " -> " << q.str();
        EXPECT_EQ(canon, q.str()) << line;
    }
}

TEST(BenchProblem, ValuesLandWhereTheRunnersLook) {
    const Problem d = parsed("dropout fwd p=0.1 n=2 c=7 h=5 w=5");
    EXPECT_EQ(d.op, "dropout");
    EXPECT_EQ(d.dir, "fwd");
    EXPECT_DOUBLE_EQ(d.real("p", -1), 0.1);
    const Problem l = parsed("lrn bwd size=3 alpha=0.001 n=2 c=7 h=5 w=5");
    EXPECT_EQ(l.get("size", 0), 3);
    EXPECT_DOUBLE_EQ(l.real("alpha", 0), 0.001);
    EXPECT_DOUBLE_EQ(l.real("beta", 0.75), 0.75);  // absent: the runner's default
    const Problem r = parsed("reduce op=norm2 n=2 c=7 h=5 w=5 oc=1");
    EXPECT_EQ(r.word("op", ""), "norm2");
    EXPECT_EQ(r.get("oc", 0), 1);
    EXPECT_EQ(r.dir, "");
    const Problem t = parsed("transform to=nhwc n=2 c=7 h=5 w=5");
    EXPECT_EQ(t.word("to", ""), "nhwc");
    EXPECT_EQ(t.word("ydt", "none"), "none");  // optional
    const Problem rn = parsed("32 64 56 56 64 3 3 1 1 1 1");
    EXPECT_EQ(rn.op, "conv");
    EXPECT_EQ(rn.get("k", 0), 64);
    EXPECT_EQ(rn.get("g", 0), 1);
}

TEST(BenchProblem, RefusalsNameTheFault) {
    struct Bad {
        const char* line;
        const char* says;
    };
    const Bad bad[] = {
        {"", "empty"},
        {"frobnicate n=1", "unknown operation 'frobnicate'"},
        {"conv sideways n=1", "unknown conv direction"},
        {"conv fwd n=-1 c=1 h=1 w=1 k=1 r=1 s=1", "out of range"},
        {"conv fwd n=1 c=1 h=1 w=1 k=1 r=1", "conv needs s > 0"},
        {"conv fwd n=1 c=1 h=1 w=1 k=1 r=1 s=1 q=2", "unknown conv parameter 'q'"},
        {"conv fwd dt=f8 n=1 c=1 h=1 w=1 k=1 r=1 s=1", "unknown dt"},
        {"act fwd n=1 c=1 h=1 w=1", "act needs mode="},
        {"act sideways mode=relu n=1 c=1 h=1 w=1", "act needs a direction"},
        {"act fwd mode=gelu n=1 c=1 h=1 w=1", "mode=gelu is not one of"},
        {"bn fwd_train mode=spatial api=v8 n=1 c=1 h=1 w=1", "api=v8 is not one of"},
        {"softmax fwd alg=fast mode=channel n=1 c=1 h=1", "softmax needs w > 0"},
        {"pool fwd mode=max r=0 n=1 c=1 h=4 w=4", "r must be positive"},
        {"pool fwd mode=max stride_h=0 n=1 c=1 h=4 w=4", "stride_h must be positive"},
        {"bias n=1 c=1 h=1 w=1 layout=chwn", "unknown layout"},
        {"lrn fwd size=17 n=1 c=1 h=1 w=1", "size=17 is outside [1, 16]"},
        {"lrn fwd size=0 n=1 c=1 h=1 w=1", "size=0 is outside"},
        {"divnorm bwd size=17 n=1 c=1 h=1 w=1", "divnorm: size=17 is outside [1, 16]"},
        {"lrn fwd alpha=x n=1 c=1 h=1 w=1", "'alpha=x': not a finite number"},
        {"lrn fwd alpha=inf n=1 c=1 h=1 w=1", "not a finite number"},
        {"dropout fwd p=1 n=1 c=1 h=1 w=1", "p=1 is outside [0, 1)"},
        {"dropout fwd p=-0.5 n=1 c=1 h=1 w=1", "outside [0, 1)"},
        {"dropout up p=0.5 n=1 c=1 h=1 w=1", "dropout needs a direction"},
        {"stf grid n=1 c=1 h=1 w=1", "stf needs a direction"},
        {"reduce op=add n=2 c=7 h=5 w=5", "nothing is reduced"},
        {"reduce op=add n=2 c=7 h=5 w=5 oh=3", "oh=3 must be 1 or h (5)"},
        {"reduce op=add n=2 c=7 h=5 w=5 od=1", "od= needs d="},
        {"reduce op=add indices=1 n=2 c=7 h=5 w=5 oh=1", "indices=1 needs op=min, max or amax"},
        {"reduce op=max indices=2 n=2 c=7 h=5 w=5 oh=1", "indices is 0 or 1"},
        {"reduce n=2 c=7 h=5 w=5 oh=1", "reduce needs op="},
        {"transform n=1 c=1 h=1 w=1", "transform needs to="},
        {"transform to=nhwc ydt=f8 n=1 c=1 h=1 w=1", "ydt=f8 is not one of"},
        {"scale n=1 c=1 h=1 w=1 k=3", "unknown scale parameter 'k'"},
        {"set n=1 c=1 h=1 w=1 p=0.5", "'p=0.5': not an integer"},
        {"copy n=0", "copy needs n > 0"},
        {"1 2 3", "expected 11 numbers"},
    };
    for (const Bad& b : bad) {
        const std::string err = refusal(b.line);
        EXPECT_NE(err.find(b.says), std::string::npos) << "'" << b.line << "': " << err;
    }
}

TEST(BenchProblem, RealsPrintShortestExact) {
    for (double v : {0.5, 0.1, 1e-4, 0.75, 2.0, 0.30000001192092896 /* 0.3f */, 1.0 / 3}) {
        const std::string s = odnn_bench::real_text(v);
        EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
    }
    EXPECT_EQ(odnn_bench::real_text(0.5), "0.5");
    EXPECT_EQ(odnn_bench::real_text(1e-4), "0.0001");
    EXPECT_EQ(odnn_bench::real_text(2.0), "2");
}

TEST(BenchProblem, CaseFilesNameTheLine) {
    const std::string path = ::testing::TempDir() + "bench_problems.txt";
    {
        std::ofstream f(path);
        f << "# comment\n\nlrn fwd n=1 c=2 h=3 w=4  # trailing comment\nreduce op=add n=1 c=2 h=3 w=4 oc=1\n";
    }
    std::vector<Problem> ps;
    std::string err;
    ASSERT_TRUE(odnn_bench::read_problem_file(path, &ps, &err)) << err;
    ASSERT_EQ(ps.size(), 2u);
    EXPECT_EQ(ps[0].op, "lrn");
    EXPECT_EQ(ps[1].op, "reduce");
    {
        std::ofstream f(path);
        f << "lrn fwd n=1 c=2 h=3 w=4\n\ndropout fwd p=2 n=1 c=1 h=1 w=1\n";
    }
    ps.clear();
    EXPECT_FALSE(odnn_bench::read_problem_file(path, &ps, &err));
    EXPECT_NE(err.find(path + ":3: dropout: p=2"), std::string::npos) << err;
    std::remove(path.c_str());
}

TEST(BenchProblem, BytesOfTheMemoryBoundOps) {
    const double n = 2 * 7 * 5 * 5;  // elements of the tensors below
    EXPECT_DOUBLE_EQ(odnn_bench::problem_bytes(parsed("set n=2 c=7 h=5 w=5")), n * 4);
    EXPECT_DOUBLE_EQ(odnn_bench::problem_bytes(parsed("scale dt=f16 n=2 c=7 h=5 w=5")), 2 * n * 2);
    EXPECT_DOUBLE_EQ(odnn_bench::problem_bytes(parsed("transform to=nhwc ydt=f16 n=2 c=7 h=5 w=5")), n * 4 + n * 2);
    EXPECT_DOUBLE_EQ(odnn_bench::problem_bytes(parsed("lrn fwd n=2 c=7 h=5 w=5")), 2 * n * 4);
    EXPECT_DOUBLE_EQ(odnn_bench::problem_bytes(parsed("lrn bwd n=2 c=7 h=5 w=5")), 4 * n * 4);
    EXPECT_DOUBLE_EQ(odnn_bench::problem_bytes(parsed("dropout fwd n=2 c=7 h=5 w=5")), 2 * n * 4 + n / 8);
    // reduce: the input, the 2 x 7 outputs (INT8 reduces into FLOAT) and their indices
    EXPECT_DOUBLE_EQ(odnn_bench::problem_bytes(parsed("reduce op=max indices=1 dt=i8 n=2 c=7 h=5 w=5 oh=1 ow=1")),
                     n * 1 + 14 * 4 + 14 * 4);
    EXPECT_DOUBLE_EQ(odnn_bench::problem_bytes(parsed("optensor op=sqrt n=2 c=7 h=5 w=5")), 2 * n * 4);
    EXPECT_DOUBLE_EQ(odnn_bench::problem_bytes(parsed("optensor op=mul n=2 c=7 h=5 w=5")), 3 * n * 4);
    EXPECT_EQ(odnn_bench::problem_flops(parsed("reduce op=add n=2 c=7 h=5 w=5 oh=1")), 0.0);
}

}  // namespace
