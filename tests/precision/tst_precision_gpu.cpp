// The autocast inspector on a CUDA device (label gpu; SKIPPED without one).
#include <gtest/gtest.h>

#include "precision/precision.h"

namespace {

struct Quiet : ts::Observer {};

// Note [CUDA autocast policy, LibTorch 2.11]: linear is on CUDA autocast's lower-precision list
// (bf16 or fp16 out); layer_norm and cross_entropy_loss are on its fp32 list, so the layer
// norm's output is fp32 (unlike the CPU, see tst_precision.cpp) and fc2 casts it back down;
// parameters and their gradients stay fp32.
TEST(PrecisionGpu, ToyModelUnderCudaAutocast) {
    Quiet q;
    for (auto dtype : {ts::Precision::BF16, ts::Precision::FP16}) {
        ts::AutocastSpec spec;
        spec.device = "cuda";
        spec.dtype = dtype;
        const auto r = ts::runAutocastInspector(spec, q);
        ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
        const std::string low(ts::toString(dtype));
        auto expect = [&](const char* name, const std::string& param, const std::string& in,
                          const std::string& out) {
            const auto* rec = r.find(name);
            ASSERT_NE(rec, nullptr) << name;
            EXPECT_EQ(rec->param_dtype, param) << low << " " << name;
            EXPECT_EQ(rec->input_dtype, in) << low << " " << name;
            EXPECT_EQ(rec->output_dtype, out) << low << " " << name;
        };
        expect("fc1", "fp32", "fp32", low);
        expect("relu", "", low, low);
        expect("ln", "fp32", low, "fp32");
        expect("fc2", "fp32", "fp32", low);
        expect("loss", "", low, "fp32");
        for (const char* g :
             {"fc1.weight.grad", "ln.weight.grad", "ln.bias.grad", "fc2.weight.grad"})
            expect(g, "fp32", "", "fp32");
        // The measured ops (see Note [computed in]): on CUDA the layer norm is cast (up to fp32)
        // and computes in fp32; backward runs on the device's autograd thread, which inherits the
        // inspector's thread-local callback, so fc1's backward matmul is seen, in `low`.
        const ts::AutocastOp* ln = nullptr;
        bool fc1_backward = false;
        for (const auto& op : r.ops) {
            if (!ln && op.module == "ln" && op.name == "aten::layer_norm") ln = &op;
            fc1_backward |=
                op.module == "fc1" && op.phase == "backward" && op.computed_dtype == low;
        }
        ASSERT_NE(ln, nullptr) << low;
        EXPECT_TRUE(ln->cast) << low;
        EXPECT_EQ(ln->computed_dtype, "fp32") << low;
        EXPECT_TRUE(fc1_backward) << low;
        EXPECT_EQ(r.computedIn(*r.find("fc1")), low);
    }
}

TEST(PrecisionGpu, LmUnderCudaAutocast) {
    Quiet q;
    for (auto dtype : {ts::Precision::BF16, ts::Precision::FP16}) {
        ts::AutocastSpec spec;
        spec.device = "cuda";
        spec.dtype = dtype;
        spec.model = "tiny";
        const auto r = ts::runAutocastInspector(spec, q);
        ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
        EXPECT_EQ(r.find("lm")->output_dtype, ts::toString(dtype));
        EXPECT_EQ(r.find("loss")->output_dtype, "fp32");
        for (const auto& rec : r.records)
            if (rec.kind == "grad") EXPECT_EQ(rec.output_dtype, "fp32") << rec.name;
    }
}

}  // namespace
