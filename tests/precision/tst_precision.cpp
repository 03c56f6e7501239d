// The precision lab with LibTorch on the CPU: the sums against LibTorch tensors (the course's
// script) and c10::Half / c10::BFloat16 arithmetic, the autocast inspector's dtypes under CPU
// bf16 autocast, and a stored run read back through the lab registry.
#include <ATen/ATen.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/json.h"
#include "core/lab.h"
#include "core/store.h"
#include "precision/precision.h"
#include "precision/precision_report.h"

namespace {

using ts::NumFormat;

struct Quiet : ts::Observer {
    std::vector<std::string> logs;
    void log(ts::LogLevel, const std::string& m) override { logs.push_back(m); }
};

// The sum with c10's own half types: their operator+ computes in float and rounds once.
template <typename Low>
double c10Sum(const ts::AccumulationVariant& v, double addend, int64_t count) {
    const Low x = static_cast<Low>(static_cast<float>(addend));
    if (v.accumulator == v.addend_format) {
        Low s = 0;
        for (int64_t i = 0; i < count; ++i) s = s + x;
        return static_cast<float>(s);
    }
    float s = 0;
    for (int64_t i = 0; i < count; ++i) s += static_cast<float>(x);
    return s;
}

// For every variant and a few addends and counts: the arithmetic here, c10's half types and
// LibTorch's tensors (the course's script, run by the runner) agree bit for bit.
TEST(PrecisionTorch, SumsAgreeWithLibTorchAndC10) {
    Quiet q;
    for (double addend : {0.01, 0.1, 1.0 / 3, 1e-4, -0.7})
        for (int64_t count : {1, 100, 1000, 3000}) {
            ts::AccumulationSpec spec;
            spec.addend = addend;
            spec.count = count;
            const auto results = ts::runAccumulation(spec, q);
            ASSERT_EQ(results.size(), 7u);
            for (const auto& r : results) {
                ASSERT_TRUE(r.torch_checked);
                EXPECT_EQ(r.value, r.torch_value)
                    << r.variant.name() << " " << addend << " × " << count;
                if (r.variant.addend_format == NumFormat::FP16)
                    EXPECT_EQ(r.value, c10Sum<c10::Half>(r.variant, addend, count))
                        << r.variant.name();
                if (r.variant.addend_format == NumFormat::BF16)
                    EXPECT_EQ(r.value, c10Sum<c10::BFloat16>(r.variant, addend, count))
                        << r.variant.name();
                EXPECT_EQ(
                    r.addend_stored,
                    at::scalar_tensor(
                        addend, at::TensorOptions().dtype(
                                    r.variant.addend_format == NumFormat::FP16   ? at::kHalf
                                    : r.variant.addend_format == NumFormat::BF16 ? at::kBFloat16
                                                                                 : at::kFloat))
                        .to(at::kDouble)
                        .item<double>());
            }
        }
    EXPECT_TRUE(q.logs.empty()) << q.logs.front();  // no disagreement was logged
}

// Note [CPU autocast policy, LibTorch 2.11]: linear (and matmul, mm, addmm...) is on CPU
// autocast's lower-precision list, so fc1 and fc2 compute and return bf16. layer_norm is on
// the CUDA fp32 list but NOT on the CPU one: on the CPU it runs the mixed-type kernel in the
// input's dtype (bf16 in, fp32 weight, bf16 out; its statistics are computed in float inside).
// cross_entropy_loss is on the CPU fp32 list, so the loss is fp32 from bf16 logits. Parameters
// stay fp32 (autocast casts copies, cached for the scope), and so do their gradients.
TEST(PrecisionTorch, ToyModelUnderCpuBf16Autocast) {
    Quiet q;
    ts::AutocastSpec spec;  // toy, cpu, bf16
    const auto r = ts::runAutocastInspector(spec, q);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    auto expect = [&](const char* name, const char* param, const char* in, const char* out) {
        const auto* rec = r.find(name);
        ASSERT_NE(rec, nullptr) << name;
        EXPECT_EQ(rec->param_dtype, param) << name;
        EXPECT_EQ(rec->input_dtype, in) << name;
        EXPECT_EQ(rec->output_dtype, out) << name;
    };
    expect("fc1", "fp32", "fp32", "bf16");
    expect("relu", "", "bf16", "bf16");
    expect("ln", "fp32", "bf16", "bf16");
    expect("fc2", "fp32", "bf16", "bf16");  // the logits
    expect("loss", "", "bf16", "fp32");
    for (const char* g : {"fc1.weight.grad", "ln.weight.grad", "ln.bias.grad", "fc2.weight.grad"})
        expect(g, "fp32", "", "fp32");
    EXPECT_EQ(r.records.size(), 9u);
}

// The ops the inspector measured (see Note [computed in] in precision_runner.cpp) for the same run.
// What LibTorch 2.11's CPU policy gives, as observed:
// - aten::linear is on the lower-precision list: autocast casts x and the weight to bf16 and
//   calls linear again, so fc1's linear is a cast op computing in bf16, and the matmul (aten::mm)
//   inside it gets bf16 inputs.
// - aten::layer_norm is on no CPU list (CUDA's fp32 list has it): it is called once, with the
//   bf16 activation and the fp32 weight and bias, and the CPU's mixed-type kernel
//   (aten::native_layer_norm) gets exactly that: computed in "bf16+fp32", output bf16.
// - aten::cross_entropy_loss is on the CPU fp32 list: the bf16 logits are cast to fp32 and the
//   loss's ops (log_softmax, nll_loss) compute in fp32.
// - Backward runs the same dtypes the forward saved: the matmuls' gradients (aten::mm under
//   MmBackward0) in bf16, the loss's in fp32.
TEST(PrecisionTorch, ToyModelOpsComputedIn) {
    Quiet q;
    const auto r = ts::runAutocastInspector(ts::AutocastSpec{}, q);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    auto first = [&](const char* module, const char* name,
                     const char* phase = "forward") -> const ts::AutocastOp* {
        for (const auto& op : r.ops)
            if (op.module == module && op.name == name && op.phase == phase) return &op;
        return nullptr;
    };
    using V = std::vector<std::string>;
    // fc1: cast by autocast; its matmul computed in bf16.
    const auto* lin1 = first("fc1", "aten::linear");
    ASSERT_NE(lin1, nullptr);
    EXPECT_TRUE(lin1->cast);
    EXPECT_EQ(lin1->depth, 0);
    EXPECT_EQ(lin1->input_dtypes, (V{"fp32", "fp32"}));
    EXPECT_EQ(lin1->computed_dtype, "bf16");
    EXPECT_EQ(lin1->output_dtype, "bf16");
    const auto* mm1 = first("fc1", "aten::mm");
    ASSERT_NE(mm1, nullptr);
    EXPECT_FALSE(mm1->cast);  // already bf16: the cast happened at linear
    EXPECT_GT(mm1->depth, 0);
    EXPECT_EQ(mm1->input_dtypes, (V{"bf16", "bf16"}));
    EXPECT_EQ(mm1->computed_dtype, "bf16");
    // fc2: its input is already bf16; only the weight is cast.
    const auto* lin2 = first("fc2", "aten::linear");
    ASSERT_NE(lin2, nullptr);
    EXPECT_TRUE(lin2->cast);
    EXPECT_EQ(lin2->input_dtypes, (V{"bf16", "fp32"}));
    EXPECT_EQ(lin2->computed_dtype, "bf16");
    // relu: left alone, runs in what it is given.
    const auto* relu = first("relu", "aten::relu");
    ASSERT_NE(relu, nullptr);
    EXPECT_FALSE(relu->cast);
    EXPECT_EQ(relu->computed_dtype, "bf16");
    // ln: left alone; the mixed-type kernel.
    const auto* ln = first("ln", "aten::layer_norm");
    ASSERT_NE(ln, nullptr);
    EXPECT_FALSE(ln->cast);
    EXPECT_EQ(ln->input_dtypes, (V{"bf16", "fp32", "fp32"}));
    EXPECT_EQ(ln->computed_dtype, "bf16+fp32");
    EXPECT_EQ(ln->output_dtype, "bf16");
    const auto* nln = first("ln", "aten::native_layer_norm");
    ASSERT_NE(nln, nullptr);
    EXPECT_EQ(nln->computed_dtype, "bf16+fp32");
    EXPECT_EQ(nln->output_dtype, "bf16");
    // loss: cast up to fp32.
    const auto* ce = first("loss", "aten::cross_entropy_loss");
    ASSERT_NE(ce, nullptr);
    EXPECT_TRUE(ce->cast);
    EXPECT_EQ(ce->input_dtypes, (V{"bf16", "int64"}));
    EXPECT_EQ(ce->computed_dtype, "fp32");
    EXPECT_EQ(ce->output_dtype, "fp32");
    for (const char* name : {"aten::_log_softmax", "aten::nll_loss_forward"}) {
        const auto* op = first("loss", name);
        ASSERT_NE(op, nullptr) << name;
        EXPECT_EQ(op->computed_dtype, "fp32") << name;
    }
    // Every forward op of the toy ran inside one of its modules; the module rows summarise.
    for (const auto& op : r.ops)
        if (op.phase == "forward")
            EXPECT_NE(r.find(op.module), nullptr) << op.name << " in '" << op.module << "'";
    EXPECT_EQ(r.computedIn(*r.find("fc1")), "bf16");
    EXPECT_EQ(r.computedIn(*r.find("ln")), "bf16+fp32");
    EXPECT_EQ(r.computedIn(*r.find("loss")), "fp32");
    EXPECT_EQ(r.computedIn(*r.find("fc1.weight.grad")), "");
    // Backward: the matmuls' gradients in bf16 for fc1 and fc2, the loss's in fp32, the layer
    // norm's mixed like its forward.
    for (const char* module : {"fc1", "fc2"}) {
        const auto* mm = first(module, "aten::mm", "backward");
        ASSERT_NE(mm, nullptr) << module;
        EXPECT_EQ(mm->autograd_node, "MmBackward0");
        EXPECT_EQ(mm->computed_dtype, "bf16") << module;
    }
    const auto* nll = first("loss", "aten::nll_loss_backward", "backward");
    ASSERT_NE(nll, nullptr);
    EXPECT_EQ(nll->computed_dtype, "fp32");
    const auto* lnb = first("ln", "aten::native_layer_norm_backward", "backward");
    ASSERT_NE(lnb, nullptr);
    EXPECT_EQ(lnb->computed_dtype, "bf16+fp32");
    EXPECT_EQ(lnb->output_dtype, "bf16");
    // Recording ends with the run: an op now is not seen by anyone.
    EXPECT_EQ(at::linear(at::randn({2, 3}), at::randn({4, 3})).scalar_type(), at::kFloat);
}

// The same toy model with autocast off (the scope is not entered for fp32): the inspector
// would see fp32 everywhere, so the bf16 above is autocast's doing. Checked with the ops.
TEST(PrecisionTorch, WithoutAutocastEverythingIsFp32) {
    const auto x = at::randn({4, 16});
    const auto w = at::randn({10, 16});
    EXPECT_EQ(at::linear(x, w).scalar_type(), at::kFloat);
    // And the CPU layer_norm keeps a bf16 input's dtype even outside autocast: the bf16 seen
    // above comes from its input, not from a cast by the policy.
    EXPECT_EQ(
        at::layer_norm(x.to(at::kBFloat16), {16}, at::ones({16}), at::zeros({16})).scalar_type(),
        at::kBFloat16);
}

TEST(PrecisionTorch, TinyLmUnderCpuBf16Autocast) {
    Quiet q;
    ts::AutocastSpec spec;
    spec.model = "tiny";
    spec.batch = 2;
    spec.context_length = 8;
    const auto r = ts::runAutocastInspector(spec, q);
    ASSERT_EQ(r.status, ts::Status::Ok) << r.error;
    ASSERT_NE(r.find("lm"), nullptr);
    EXPECT_EQ(r.find("lm")->output_dtype, "bf16");  // logits from the bf16 LM head matmul
    EXPECT_EQ(r.find("loss")->output_dtype, "fp32");
    int grads = 0;
    for (const auto& rec : r.records)
        if (rec.kind == "grad") {
            ++grads;
            EXPECT_EQ(rec.param_dtype, "fp32") << rec.name;
            EXPECT_EQ(rec.output_dtype, "fp32") << rec.name;
        }
    EXPECT_GT(grads, 3);
    // The ops carry the LM's module paths (its TS_RANGE names); they all belong to "lm" or
    // "loss", and the LM head's matmul computes in bf16.
    bool head = false, attention = false, backward = false;
    for (const auto& op : r.ops) {
        head |= op.module == "lm_head" && op.name == "aten::linear" && op.computed_dtype == "bf16";
        attention |= op.module.rfind("layer.0.attention", 0) == 0 && op.phase == "forward";
        backward |= op.phase == "backward";
    }
    EXPECT_TRUE(head);
    EXPECT_TRUE(attention);
    EXPECT_TRUE(backward);
    EXPECT_EQ(r.opsOf(*r.find("lm")).size() + r.opsOf(*r.find("loss")).size(), r.ops.size());
    EXPECT_EQ(r.computedIn(*r.find("loss")), "fp32");
}

TEST(PrecisionTorch, BadSpecsAreRefused) {
    Quiet q;
    ts::AutocastSpec spec;
    spec.dtype = ts::Precision::FP32;
    EXPECT_THROW(ts::runAutocastInspector(spec, q), std::invalid_argument);
    spec.dtype = ts::Precision::BF16;
    spec.model = "nonesuch";
    EXPECT_THROW(ts::runAutocastInspector(spec, q), std::invalid_argument);
    ts::AccumulationSpec acc;
    acc.count = 0;
    EXPECT_THROW(ts::runAccumulation(acc, q), std::invalid_argument);
}

// A run stored through the runners reads back equal, and the registry's report shows it.
TEST(PrecisionStore, RoundTripAndReport) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("tst_precision_" + std::to_string(::getpid()) + ".db"))
                                 .string();
    std::remove(path.c_str());
    {
        ts::ResultStore store(path);
        Quiet q;
        ts::AccumulationSpec spec;
        const int64_t id =
            store.createRun(ts::kPrecisionLab, "sums", ts::accumulationSpecJson(spec), "cpu");
        const auto sums = ts::runAccumulation(spec, q, &store, id);
        const int64_t cast_id =
            store.createRun(ts::kPrecisionLab, "cast", ts::autocastSpecJson({}), "cpu");
        const auto cast = ts::runAutocastInspector({}, q, &store, cast_id);

        const auto info = store.run(id);
        ASSERT_TRUE(info);
        const auto rows = ts::precisionRowsFromRows(*info, store.rows(id, ts::kPrecisionLab));
        ASSERT_EQ(rows.size(), sums.size());
        for (size_t i = 0; i < rows.size(); ++i) {
            ASSERT_TRUE(rows[i].accumulation);
            const auto& a = *rows[i].accumulation;
            EXPECT_EQ(a.variant.name(), sums[i].variant.name());
            EXPECT_EQ(a.value, sums[i].value);
            EXPECT_EQ(a.error, sums[i].error);
            EXPECT_EQ(a.first_rounding_step, sums[i].first_rounding_step);
            EXPECT_EQ(a.first_stall_step, sums[i].first_stall_step);
            EXPECT_EQ(a.ulp_end, sums[i].ulp_end);
            EXPECT_EQ(a.running_error, sums[i].running_error);
            EXPECT_EQ(a.torch_value, sums[i].torch_value);
        }
        const ts::Lab* lab = ts::findLab(ts::kPrecisionLab);
        ASSERT_NE(lab, nullptr);
        const std::string table =
            lab->report(*info, store.rows(id, ts::kPrecisionLab), ts::ReportFormat::Table);
        EXPECT_NE(table.find("fp16 += fp16"), std::string::npos) << table;
        EXPECT_NE(table.find("9.9531"), std::string::npos) << table;
        EXPECT_NE(table.find("10.0021"), std::string::npos) << table;
        const auto json = ts::parseJson(
            lab->report(*info, store.rows(id, ts::kPrecisionLab), ts::ReportFormat::Json));
        EXPECT_EQ(json.at("rows").size(), sums.size());
        EXPECT_EQ(json.at("rows")[1].at("value").get<double>(), sums[1].value);

        const auto cast_info = store.run(cast_id);
        const auto cast_rows =
            ts::precisionRowsFromRows(*cast_info, store.rows(cast_id, ts::kPrecisionLab));
        ASSERT_EQ(cast_rows.size(), 1u);
        ASSERT_TRUE(cast_rows[0].autocast);
        ASSERT_EQ(cast_rows[0].autocast->records.size(), cast.records.size());
        EXPECT_EQ(cast_rows[0].autocast->find("ln")->output_dtype, cast.find("ln")->output_dtype);
        // The ops read back field for field.
        const auto& ops = cast_rows[0].autocast->ops;
        ASSERT_FALSE(cast.ops.empty());
        ASSERT_EQ(ops.size(), cast.ops.size());
        for (size_t i = 0; i < ops.size(); ++i) {
            EXPECT_EQ(ops[i].name, cast.ops[i].name);
            EXPECT_EQ(ops[i].module, cast.ops[i].module);
            EXPECT_EQ(ops[i].phase, cast.ops[i].phase);
            EXPECT_EQ(ops[i].depth, cast.ops[i].depth);
            EXPECT_EQ(ops[i].input_dtypes, cast.ops[i].input_dtypes);
            EXPECT_EQ(ops[i].computed_dtype, cast.ops[i].computed_dtype);
            EXPECT_EQ(ops[i].output_dtype, cast.ops[i].output_dtype);
            EXPECT_EQ(ops[i].cast, cast.ops[i].cast);
            EXPECT_EQ(ops[i].autograd_node, cast.ops[i].autograd_node);
        }
        const std::string md = lab->report(*cast_info, store.rows(cast_id, ts::kPrecisionLab),
                                           ts::ReportFormat::Markdown);
        EXPECT_NE(md.find("| fc1 | linear | fp32 | fp32 | bf16 | bf16 |"), std::string::npos) << md;
        EXPECT_NE(md.find("| ln | layer_norm | fp32 | bf16 | bf16 | bf16+fp32 |"),
                  std::string::npos)
            << md;
        EXPECT_NE(md.find("| forward | fc1 | aten::linear | - | fp32, fp32 | yes | bf16 | bf16 |"),
                  std::string::npos)
            << md;
        EXPECT_NE(md.find("| computed in |"), std::string::npos) << md;

        // A row stored before the ops were recorded (no "ops") still reads, with none.
        auto old = toJson(cast);
        old.erase("ops");
        const auto old_row = ts::precisionRowFromJson(old);
        ASSERT_TRUE(old_row.autocast);
        EXPECT_TRUE(old_row.autocast->ops.empty());
        EXPECT_EQ(old_row.autocast->records.size(), cast.records.size());
        EXPECT_EQ(old_row.autocast->computedIn(*old_row.autocast->find("fc1")), "");
        // A damaged op is named.
        auto bad_op = toJson(cast);
        bad_op["ops"][0]["phase"] = "sideways";
        try {
            ts::precisionRowFromJson(bad_op);
            ADD_FAILURE() << "a bad phase was read";
        } catch (const std::exception& e) {  // std::invalid_argument, as for every bad field
            EXPECT_NE(std::string(e.what()).find("ops[0].phase"), std::string::npos) << e.what();
        }

        // A damaged row is named, not shown.
        ts::StoredRow bad{0, ts::Status::Ok, "{}",
                          R"({"type": "accumulation", "accumulator": "fp8"})"};
        EXPECT_NE(lab->row_problem(bad).find("accumulator"), std::string::npos)
            << lab->row_problem(bad);
        EXPECT_TRUE(lab->row_problem(store.rows(id, ts::kPrecisionLab)[0]).empty());
    }
    // std::remove, not std::filesystem::remove_all: libtorch.so carries its own copy of the
    // latter, which crashes here.
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

}  // namespace

namespace {

const ts::TrainNumericsCurve& curveOf(const std::vector<ts::TrainNumericsCurve>& curves,
                                      ts::Precision p) {
    for (const auto& c : curves)
        if (c.precision == p) return c;
    throw std::runtime_error("no curve");
}

// From the same weights and data, fp32, bf16 autocast and fp16 autocast with loss scaling all
// learn the toy task, and the low-precision curves stay near the fp32 one. With the default
// scale (2^16) nothing overflows in this model: no step is skipped.
TEST(PrecisionTrain, ThreePrecisionsLearnAlike) {
    Quiet q;
    ts::CancelToken cancel;
    ts::TrainNumericsSpec spec;
    spec.steps = 30;
    const auto curves = ts::runTrainNumerics(spec, q, cancel);
    ASSERT_EQ(curves.size(), 3u);
    const auto& fp32 = curveOf(curves, ts::Precision::FP32);
    for (const auto& c : curves) {
        ASSERT_EQ(c.status, ts::Status::Ok) << c.error;
        ASSERT_EQ(c.steps.size(), 30u);
        EXPECT_LT(c.finalLoss(), c.steps.front().loss / 2) << ts::toString(c.precision);
        for (size_t i = 0; i < c.steps.size(); ++i) {
            EXPECT_NEAR(c.steps[i].loss, fp32.steps[i].loss, 0.05)
                << ts::toString(c.precision) << " step " << i + 1;
            EXPECT_LE(c.steps[i].fp16_underflow, c.grad_elements);
        }
        EXPECT_EQ(c.skippedSteps(), 0);
        EXPECT_EQ(c.steps.front().loss_scale > 0, c.precision == ts::Precision::FP16);
    }
    EXPECT_EQ(fp32.grad_elements, 16 * 10 + 10 + 10 + 10 * 4);
}

// fp16 started with a loss scale far too large: the scaled gradients overflow, so the scaler
// skips the update (the weights, hence the loss, stay as they were) and halves the scale,
// step after step, until the gradients fit; then training goes on and the loss falls. (Near
// the edge a later step may overflow again and back off once more, as PyTorch's scaler does.)
TEST(PrecisionTrain, Fp16SkipsOverflowingStepsAndRecovers) {
    Quiet q;
    ts::CancelToken cancel;
    ts::TrainNumericsSpec spec;
    spec.precisions = {ts::Precision::FP16};
    spec.steps = 40;
    spec.init_scale = std::ldexp(1.0, 30);
    const auto c = ts::runTrainNumerics(spec, q, cancel).at(0);
    ASSERT_EQ(c.status, ts::Status::Ok) << c.error;
    const int skipped = c.skippedSteps();
    ASSERT_GT(skipped, 0);
    ASSERT_LT(skipped, 40);
    // Every step uses the scale the previous one left: halved after a skipped step, unchanged
    // after a clean one (growth needs 2000 clean steps in a row).
    for (size_t i = 1; i < c.steps.size(); ++i)
        EXPECT_EQ(c.steps[i].loss_scale,
                  c.steps[i - 1].loss_scale / (c.steps[i - 1].skipped ? 2 : 1))
            << i + 1;
    EXPECT_EQ(c.steps.back().loss_scale * (c.steps.back().skipped ? 0.5 : 1.0),
              std::ldexp(1.0, 30 - skipped));
    // The first steps are skipped in a row, without an update: the loss stays the same.
    size_t first_clean = 0;
    while (first_clean < c.steps.size() && c.steps[first_clean].skipped) ++first_clean;
    ASSERT_GT(first_clean, 1u);
    ASSERT_LT(first_clean, c.steps.size());
    for (size_t i = 0; i < first_clean; ++i) EXPECT_EQ(c.steps[i].loss, c.steps[0].loss) << i + 1;
    EXPECT_LT(c.steps[first_clean + 1].loss,
              c.steps[first_clean].loss);  // the first update lowered it
    EXPECT_FALSE(c.steps.back().skipped);  // recovered: the scale settled below the overflow
    EXPECT_LT(c.finalLoss(), c.steps.front().loss * 0.8);
}

TEST(PrecisionTrain, StoredCurveReadsBack) {
    Quiet q;
    ts::CancelToken cancel;
    ts::TrainNumericsSpec spec;
    spec.precisions = {ts::Precision::FP16};
    spec.steps = 5;
    spec.init_scale = std::ldexp(1.0, 28);
    const auto c = ts::runTrainNumerics(spec, q, cancel).at(0);
    const auto row = ts::precisionRowFromJson(ts::parseJson(ts::trainNumericsJsonLine(c)));
    ASSERT_TRUE(row.train);
    ASSERT_EQ(row.train->steps.size(), c.steps.size());
    for (size_t i = 0; i < c.steps.size(); ++i) {
        EXPECT_EQ(row.train->steps[i].loss, c.steps[i].loss);
        EXPECT_EQ(row.train->steps[i].loss_scale, c.steps[i].loss_scale);
        EXPECT_EQ(row.train->steps[i].skipped, c.steps[i].skipped);
    }
    EXPECT_EQ(row.train->skippedSteps(), c.skippedSteps());
    spec.steps = 0;
    EXPECT_THROW(ts::runTrainNumerics(spec, q, cancel), std::invalid_argument);
}

}  // namespace
