// Every case of tests/ops_tensor/cases/*.txt through the public API on the CPU backend,
// checked element by element against values computed by the test itself.
#include <gtest/gtest.h>

#include "common/test_util.hpp"
#include "ops_tensor/cases.hpp"
#include "ops_tensor/runners.hpp"

namespace ops_test {
namespace {

cudnnHandle_t handle() {
    static cudnnHandle_t h = [] {
        cudnnHandle_t p = nullptr;
        EXPECT_EQ(cudnnCreate(&p), CUDNN_STATUS_SUCCESS) << odnn_test::last_error();
        return p;
    }();
    return h;
}

class Cases : public ::testing::TestWithParam<Case> {};

TEST_P(Cases, MatchesTestComputedValues) {
    const Case& c = GetParam();
    SCOPED_TRACE(c.where() + " (seed " + std::to_string(c.seed()) + ")");
    run_case(c, handle());
}

INSTANTIATE_TEST_SUITE_P(OpsTensor, Cases, ::testing::ValuesIn(load_cases(ODNN_OPS_TENSOR_CASES)),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name(); });

}  // namespace
}  // namespace ops_test
