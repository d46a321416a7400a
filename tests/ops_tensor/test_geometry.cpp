// The element-wise geometry behind the CUDA fast paths (core/tensor_ops.hpp): dims are
// reordered, dropped and merged without changing which elements meet, and the flat
// broadcast pattern is recognised exactly when it holds.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/tensor_ops.hpp"

namespace {

using odnn::core::EwFlat;
using odnn::core::EwGeometry;
using odnn::core::Operand;

Operand make(std::vector<int64_t> dims, std::vector<int64_t> strides) {
    Operand o;
    o.nb_dims = static_cast<int>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) o.dims[i] = dims[i], o.strides[i] = strides[i];
    return o;
}

// Every (offset in operand 0, offset in operand k) pair, by the operands and by the geometry.
std::vector<std::vector<int64_t>> pairs_direct(const std::vector<Operand>& ops) {
    std::vector<std::vector<int64_t>> out;
    for (int64_t i = 0; i < ops[0].count(); ++i) {
        std::vector<int64_t> row;
        for (const Operand& o : ops) row.push_back(o.offset_of_linear(i));
        out.push_back(row);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::vector<int64_t>> pairs_geometry(const EwGeometry& g) {
    std::vector<std::vector<int64_t>> out;
    for (int64_t i = 0; i < g.count(); ++i) {
        std::vector<int64_t> row(static_cast<size_t>(g.n_operands), 0);
        int64_t r = i;
        for (int d = g.nb_dims - 1; d >= 0; --d) {
            const int64_t c = r % g.dims[d];
            r /= g.dims[d];
            for (int k = 0; k < g.n_operands; ++k) row[static_cast<size_t>(k)] += c * g.strides[k][d];
        }
        out.push_back(row);
    }
    std::sort(out.begin(), out.end());
    return out;
}

EwGeometry simplify(const std::vector<Operand>& ops) {
    std::vector<const Operand*> p;
    for (const Operand& o : ops) p.push_back(&o);
    return odnn::core::ew_simplify(p.data(), static_cast<int>(p.size()));
}

TEST(EwGeometry, PackedSameLayoutMergesToOneDim) {
    const Operand nchw = make({2, 3, 4, 5}, {60, 20, 5, 1});
    const Operand nhwc = make({2, 3, 4, 5}, {60, 1, 15, 3});
    for (const Operand& o : {nchw, nhwc}) {
        const EwGeometry g = simplify({o, o, o});
        ASSERT_EQ(g.nb_dims, 1);
        EXPECT_EQ(g.dims[0], 120);
        const EwFlat f = odnn::core::ew_flat(g);
        EXPECT_TRUE(f.ok);
        EXPECT_EQ(f.bcast, -1);
    }
}

TEST(EwGeometry, ChannelBiasPatterns) {
    const Operand c_nchw = make({2, 3, 4, 5}, {60, 20, 5, 1});
    const Operand bias = odnn::core::broadcast_to(make({1, 3, 1, 1}, {3, 1, 1, 1}), c_nchw);
    EwFlat f = odnn::core::ew_flat(simplify({c_nchw, bias}));
    ASSERT_TRUE(f.ok);
    EXPECT_EQ(f.bcast, 1);
    EXPECT_EQ(f.inner, 20);
    EXPECT_EQ(f.mid, 3);
    const Operand c_nhwc = make({2, 3, 4, 5}, {60, 1, 15, 3});
    f = odnn::core::ew_flat(simplify({c_nhwc, odnn::core::broadcast_to(make({1, 3, 1, 1}, {3, 1, 1, 1}), c_nhwc)}));
    ASSERT_TRUE(f.ok);
    EXPECT_EQ(f.inner, 1);
    EXPECT_EQ(f.mid, 3);
    // A scalar and a full 1xCxHxW bias.
    f = odnn::core::ew_flat(simplify({c_nchw, odnn::core::broadcast_to(make({1, 1, 1, 1}, {1, 1, 1, 1}), c_nchw)}));
    ASSERT_TRUE(f.ok);
    EXPECT_EQ(f.mid, 1);
    f = odnn::core::ew_flat(simplify({c_nchw, odnn::core::broadcast_to(make({1, 3, 4, 5}, {60, 20, 5, 1}), c_nchw)}));
    ASSERT_TRUE(f.ok);
    EXPECT_EQ(f.inner, 1);
    EXPECT_EQ(f.mid, 60);
    // 1 x C x 1 x W is two runs: not flat.
    f = odnn::core::ew_flat(simplify({c_nchw, odnn::core::broadcast_to(make({1, 3, 1, 5}, {15, 5, 5, 1}), c_nchw)}));
    EXPECT_FALSE(f.ok);
}

TEST(EwGeometry, GapsAndDifferentLayoutsAreNotFlat) {
    const Operand padded = make({2, 3, 4, 5}, {100, 25, 6, 1});
    EXPECT_FALSE(odnn::core::ew_flat(simplify({padded, padded})).ok);
    const Operand nchw = make({2, 3, 4, 5}, {60, 20, 5, 1}), nhwc = make({2, 3, 4, 5}, {60, 1, 15, 3});
    EXPECT_FALSE(odnn::core::ew_flat(simplify({nchw, nhwc})).ok);
}

TEST(EwGeometry, RandomLayoutsKeepEveryPairing) {
    std::mt19937_64 rng(3);
    for (int trial = 0; trial < 300; ++trial) {
        const int nb = 1 + static_cast<int>(rng() % 5);
        std::vector<int64_t> dims(nb);
        for (auto& d : dims) d = 1 + static_cast<int64_t>(rng() % 4);
        std::vector<Operand> ops;
        for (int k = 0; k < 3; ++k) {
            std::vector<int> order(nb);
            for (int i = 0; i < nb; ++i) order[i] = i;
            if (rng() % 2) std::shuffle(order.begin(), order.end(), rng);
            else std::reverse(order.begin(), order.end());
            std::vector<int64_t> strides(nb);
            int64_t s = 1;
            for (int d : order) strides[d] = s, s *= dims[d] + static_cast<int64_t>(rng() % 2);
            Operand o = make(dims, strides);
            if (k == 2) {  // a broadcast operand
                Operand small = o;
                for (int d = 0; d < nb; ++d)
                    if (rng() % 2) small.dims[d] = 1;
                o = odnn::core::broadcast_to(small, ops[0]);
            }
            ops.push_back(o);
        }
        const EwGeometry g = simplify(ops);
        ASSERT_EQ(pairs_direct(ops), pairs_geometry(g)) << "trial " << trial;
        const EwFlat f = odnn::core::ew_flat(g);
        if (f.ok) {  // the flat formulas address the same elements
            for (int64_t i = 0; i < g.count(); ++i) {
                int64_t r = i, off0 = 0;
                for (int d = g.nb_dims - 1; d >= 0; --d) off0 += (r % g.dims[d]) * g.strides[0][d], r /= g.dims[d];
                ASSERT_EQ(off0, i);
            }
        }
    }
}

}  // namespace
