// The fused NCHW batch-norm launch's tiling (src/cuda/bn_fused_tiles.hpp) over a sweep of
// shapes and grids: the invariants its progress and its tiles rely on. A rule that gave
// a channel more tiles than blocks hung the GPU, so this runs where no GPU is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cuda/bn_fused_tiles.hpp"

namespace {

using odnn::cuda::fused_apply_step;
using odnn::cuda::fused_launch_steps;
using odnn::cuda::fused_stats_step;
using odnn::cuda::fused_tiles;

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int64_t kMaxTiles = 1024;

TEST(BnFusedTiles, EveryChannelWithinTwoStepsAndTilesInRange) {
    for (int64_t c : {1, 2, 3, 7, 64, 256, 1000, 2048})
        for (int64_t nvec : {1, 7, 100, 5000, 100352, 506881, 1013761, 4000000})
            for (int64_t round : {896, 1792, 3840})
                for (int64_t grid : {1, 8, 132, 264, 456})
                    for (int64_t min_steps : {0, 32, 4096}) {
                        const int64_t q = fused_tiles(c, nvec, round, grid, min_steps, kMaxTiles);
                        const auto where = ::testing::Message() << "c=" << c << " nvec=" << nvec << " round=" << round
                                                                << " grid=" << grid << " min_steps=" << min_steps
                                                                << " -> Q=" << q;
                        ASSERT_GE(q, 1) << where;
                        ASSERT_LE(q, kMaxTiles) << where;
                        ASSERT_LE(q, nvec) << where;  // no empty tile
                        ASSERT_LE(q, grid) << where;
                        // The property itself: channel ch's first and last tiles' steps.
                        for (int64_t ch = 0; ch < c; ++ch) {
                            const int64_t first = ch * q / grid, last = (ch * q + q - 1) / grid;
                            ASSERT_LE(last - first, 1) << where << " channel " << ch;
                        }
                        // A tile is one round at most wherever the blocks allow that.
                        const int64_t one_round = ceil_div(nvec, round);
                        if (one_round <= std::min({kMaxTiles, nvec, grid}))
                            ASSERT_GE(q, one_round) << where;
                    }
}

TEST(BnFusedTiles, LargeChannelsCappedAtTheGrid) {
    // 2 x 2 x 1040 x 1000 f32 (4-float vectors) on 264 blocks (2 an SM, 132 SMs): one
    // round a tile (224 workers: 896 vectors backward, 1792 forward) would take 581 and
    // 291 tiles a channel.
    constexpr int64_t nvec = 2 * 1040 * 1000 / 4;
    static_assert(ceil_div(nvec, 896) == 581 && ceil_div(nvec, 1792) == 291, "the case's premise");
    EXPECT_EQ(fused_tiles(2, nvec, 896, 264, 0, kMaxTiles), 264);
    EXPECT_EQ(fused_tiles(2, nvec, 1792, 264, 0, kMaxTiles), 264);
    // Up to 1024 tiles asked for by min_steps: still at most the grid.
    EXPECT_EQ(fused_tiles(64, 100352, 1792, 264, 4096, kMaxTiles), 264);
}

TEST(BnFusedTiles, ChoosesTheFullestLastStep) {
    // 128 x 256 x 56 x 56 on 264 blocks. f32 forward (1792-vector rounds): at least 56
    // tiles a channel; 66 fill every step exactly (256 * 66 = 64 * 264).
    const int64_t f32 = 128 * 56 * 56 / 4, bf16 = 128 * 56 * 56 / 8;
    EXPECT_EQ(fused_tiles(256, f32, 1792, 264, 0, kMaxTiles), 66);
    // f32 backward (896-vector rounds, at least 112): 132; bf16 forward (at least 28): 33.
    EXPECT_EQ(fused_tiles(256, f32, 896, 264, 0, kMaxTiles), 132);
    EXPECT_EQ(fused_tiles(256, bf16, 1792, 264, 0, kMaxTiles), 33);
    // min_steps = 48 asks the bf16 forward for at least 50 tiles; 66 fill exactly.
    EXPECT_EQ(fused_tiles(256, bf16, 1792, 264, 48, kMaxTiles), 66);
}

// The schedule at lags 2 and 3: every tile summed once and applied once, each apply at a
// later step than every sum of its channel (the control warp's wait, which would hang on
// a sum at its own step or after), and no tile waiting in the L2 more than lag steps.
TEST(BnFusedTiles, ScheduleSumsAndAppliesEveryTileOnceAfterItsChannel) {
    for (int64_t c : {1, 2, 3, 7, 64, 256, 1024})
        for (int64_t nvec : {1, 100, 5000, 50176, 100352})
            for (int64_t grid : {1, 8, 132, 264})
                for (int lag : {2, 3}) {
                    const int64_t q = fused_tiles(c, nvec, 1792, grid, 0, kMaxTiles);
                    const int64_t tiles = c * q, stat_steps = ceil_div(tiles, grid);
                    const int64_t steps = fused_launch_steps(lag, stat_steps);
                    const auto where = ::testing::Message()
                                       << "c=" << c << " nvec=" << nvec << " grid=" << grid << " lag=" << lag
                                       << " Q=" << q;
                    std::vector<int64_t> summed(tiles, -1), applied(tiles, -1);
                    for (int64_t i = 0; i < steps; ++i)
                        for (int64_t b = 0; b < grid; ++b) {
                            const int64_t js = fused_stats_step(i), ja = fused_apply_step(lag, i);
                            if (js >= 0 && js * grid + b < tiles) {
                                ASSERT_EQ(summed[js * grid + b], -1) << where << " tile summed twice";
                                summed[js * grid + b] = i;
                            }
                            if (ja >= 0 && ja * grid + b < tiles) {
                                ASSERT_EQ(applied[ja * grid + b], -1) << where << " tile applied twice";
                                applied[ja * grid + b] = i;
                            }
                        }
                    for (int64_t ch = 0; ch < c; ++ch) {
                        int64_t last_sum = -1;
                        for (int64_t t = ch * q; t < ch * q + q; ++t) {
                            ASSERT_GE(summed[t], 0) << where << " tile " << t << " never summed";
                            last_sum = std::max(last_sum, summed[t]);
                        }
                        for (int64_t t = ch * q; t < ch * q + q; ++t) {
                            ASSERT_GT(applied[t], last_sum) << where << " tile " << t;
                            ASSERT_LE(applied[t] - summed[t], lag) << where << " tile " << t;
                        }
                    }
                }
}

}  // namespace
