// Presets, validation messages, parameter counts and sweep expansion (no LibTorch needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "benchmark/benchmark.h"
#include "benchmark/benchmark_json.h"
#include "benchmark/benchmark_report.h"
#include "core/json.h"

namespace {

bool anyContains(const std::vector<std::string>& v, const std::string& needle) {
    for (const auto& s : v)
        if (s.find(needle) != std::string::npos) return true;
    return false;
}

TEST(Config, CoursePresetsHaveTheCourseDimensions) {
    struct Want {
        const char* name;
        int64_t d, f, l, h;
    };
    // See Note [two model tables]: the 2026 edition's xl is 2025's 2.7B; its 10B is new; 2025's
    // xl is xl-2025.
    const Want want[] = {{"small", 768, 3072, 12, 12},    {"medium", 1024, 4096, 24, 16},
                         {"large", 1280, 5120, 36, 20},   {"xl", 2560, 10240, 32, 32},
                         {"10B", 4608, 12288, 50, 36},    {"8B", 4096, 11008, 34, 32},
                         {"xl-2025", 1600, 6400, 48, 25}, {"2.7B", 2560, 10240, 32, 32}};
    for (const auto& w : want) {
        auto m = ts::modelPreset(w.name);
        ASSERT_TRUE(m) << w.name;
        EXPECT_EQ(m->d_model, w.d);
        EXPECT_EQ(m->d_ff, w.f);
        EXPECT_EQ(m->num_layers, w.l);
        EXPECT_EQ(m->num_heads, w.h);
        EXPECT_EQ(m->vocab_size, 10000);
        EXPECT_TRUE(ts::validateModel(*m).empty()) << w.name;
    }
    EXPECT_FALSE(ts::modelPreset("huge"));
}

TEST(Config, EachEditionHasItsTableAndXlMeansItsOwn) {
    using ts::ModelTable;
    EXPECT_EQ(
        ts::modelPresetNames(ModelTable::Edition2026),
        (std::vector<std::string>{"tiny", "mini", "small", "medium", "large", "xl", "10B", "8B"}));
    EXPECT_EQ(
        ts::modelPresetNames(ModelTable::Edition2025),
        (std::vector<std::string>{"tiny", "mini", "small", "medium", "large", "xl-2025", "2.7B"}));
    EXPECT_EQ(ts::kDefaultModelTable, ModelTable::Edition2026);
    EXPECT_EQ(ts::presetName("xl", ModelTable::Edition2025), "xl-2025");
    EXPECT_EQ(ts::presetName("xl", ModelTable::Edition2026), "xl");
    EXPECT_EQ(ts::presetName("small", ModelTable::Edition2025), "small");
    EXPECT_EQ(ts::presetEdition("10B"), ModelTable::Edition2026);
    EXPECT_EQ(ts::presetEdition("2.7B"), ModelTable::Edition2025);
    EXPECT_FALSE(ts::presetEdition("medium"));
    EXPECT_TRUE(ts::modelTableNote({"small", "medium"}).empty());
    EXPECT_NE(ts::modelTableNote({"small", "xl"}).find("2026 edition (xl = d_model 2560"),
              std::string::npos);
    EXPECT_NE(ts::modelTableNote({"xl-2025"}).find("2025 edition"), std::string::npos);
    EXPECT_EQ(ts::parseModelTable("2025"), ModelTable::Edition2025);
    EXPECT_FALSE(ts::parseModelTable("2024"));
}

TEST(Config, ARunStoredBeforeTheTwoTablesKeepsItsModel) {
    // A point stored with the 2025 xl under its old name reads back as xl-2025, its dimensions
    // as they were; the current xl keeps its name.
    nlohmann::json old = ts::toJson(*ts::modelPreset("xl-2025"));
    old["name"] = "xl";
    const ts::ModelConfig m = ts::modelFromJson(old);
    EXPECT_EQ(m.name, "xl-2025");
    EXPECT_EQ(m.d_model, 1600);
    EXPECT_EQ(ts::modelFromJson(ts::toJson(*ts::modelPreset("xl"))).name, "xl");
    // A stored sweep spec (it has "points") from before names 2025's sizes; a sweep file
    // names the current edition's unless it says otherwise.
    const auto stored =
        ts::sweepFromJson(nlohmann::json::parse(R"({"sizes": ["xl"], "points": 1})"));
    EXPECT_EQ(stored[ts::Dimension::Size], std::vector<std::string>{"xl-2025"});
    const auto file = ts::sweepFromJson(nlohmann::json::parse(R"({"sizes": ["xl"]})"));
    EXPECT_EQ(file[ts::Dimension::Size], std::vector<std::string>{"xl"});
    const auto asked =
        ts::sweepFromJson(nlohmann::json::parse(R"({"sizes": ["xl"], "model_table": "2025"})"));
    EXPECT_EQ(asked[ts::Dimension::Size], std::vector<std::string>{"xl-2025"});
    EXPECT_THROW(ts::sweepFromJson(nlohmann::json::parse(R"({"model_table": 2025})")),
                 std::invalid_argument);
}

TEST(Config, AnErrorIsOneLineWithoutLibTorchsBacktrace) {
    EXPECT_EQ(ts::oneLineError(
                  "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't "
                  "allocate memory: you tried to allocate 17592186044416 bytes. Error code 12\n"
                  "frame #0: c10::ThrowEnforceNotMet(...)\nframe #1: ..."),
              "out of memory on the CPU: tried to allocate 16384.0 GiB");
    EXPECT_EQ(ts::oneLineError(
                  "NCCL error: unhandled system error Exception raised from foo at bar.cpp:1 "
                  "(most recent call first):\nframe #0: x"),
              "NCCL error: unhandled system error");
    EXPECT_EQ(ts::oneLineError("plain"), "plain");
}

TEST(Config, ParameterCountFormula) {
    // small: 2·10000·768 + 12·(4·768² + 3·768·3072 + 2·768) + 768
    auto m = *ts::modelPreset("small");
    EXPECT_EQ(ts::parameterCount(m),
              2 * 10000 * 768 + 12 * (4 * 768 * 768 + 3 * 768 * 3072 + 2 * 768) + 768);
    // "2.7B" is the course's name; with a three-matrix SwiGLU of d_ff 10240 it holds 3.41e9.
    EXPECT_EQ(ts::parameterCount(*ts::modelPreset("2.7B")),
              2 * 10000 * 2560 + 32 * (4 * 2560LL * 2560 + 3 * 2560LL * 10240 + 2 * 2560) + 2560);
}

TEST(Config, InvalidDimensionsAreRefusedWithTheReason) {
    ts::ModelConfig m = *ts::modelPreset("small");
    m.num_heads = 7;
    EXPECT_TRUE(anyContains(ts::validateModel(m), "d_model 768 is not divisible by num_heads 7"));
    m = *ts::modelPreset("small");
    m.d_model = 36;
    m.num_heads = 4;  // head dim 9
    EXPECT_TRUE(anyContains(ts::validateModel(m), "head dimension d_model/num_heads = 9 is odd"));
    m = *ts::modelPreset("small");
    m.num_layers = 0;
    EXPECT_TRUE(anyContains(ts::validateModel(m), "num_layers must be positive (got 0)"));
    m = *ts::modelPreset("small");
    m.d_ff = -5;
    EXPECT_TRUE(anyContains(ts::validateModel(m), "d_ff must be positive (got -5)"));

    ts::PointConfig c;
    c.batch_size = 0;
    c.steps = 0;
    c.device = "gpu";
    auto e = ts::validatePoint(c);
    EXPECT_TRUE(anyContains(e, "batch_size must be positive (got 0)"));
    EXPECT_TRUE(anyContains(e, "steps must be positive (got 0)"));
    EXPECT_TRUE(anyContains(e, "device 'gpu' is not one of cpu, cuda, cuda:N"));
    c = ts::PointConfig{};
    c.device = "cuda:1";
    EXPECT_TRUE(ts::validatePoint(c).empty());
}

TEST(Config, EnumNamesRoundTrip) {
    for (auto m : {ts::Mode::Forward, ts::Mode::ForwardBackward, ts::Mode::Train})
        EXPECT_EQ(ts::parseMode(ts::toString(m)), m);
    for (auto p : {ts::Precision::FP32, ts::Precision::BF16, ts::Precision::FP16})
        EXPECT_EQ(ts::parsePrecision(ts::toString(p)), p);
    for (auto a : {ts::AttentionImpl::Naive, ts::AttentionImpl::Sdpa, ts::AttentionImpl::Tiled,
                   ts::AttentionImpl::Flash})
        EXPECT_EQ(ts::parseAttentionImpl(ts::toString(a)), a);
    EXPECT_FALSE(ts::parsePrecision("fp8"));
}

TEST(Config, SweepExpandsEveryCombinationInOrder) {
    ts::SweepSpec s;
    s.base.model.context_length = 128;
    s[ts::Dimension::Size] = {"small", "medium"};
    s[ts::Dimension::Context] = {"128", "256"};
    s[ts::Dimension::Precision] = {"fp32", "bf16"};
    const auto points = ts::expandSweep(s);
    ASSERT_EQ(points.size(), 8u);
    EXPECT_EQ(points[0].model.name, "small");
    EXPECT_EQ(points[0].model.context_length, 128);
    EXPECT_EQ(points[1].precision, ts::Precision::BF16);
    EXPECT_EQ(points[2].model.context_length, 256);
    EXPECT_EQ(points[4].model.name, "medium");
    EXPECT_EQ(points[4].model.d_model, 1024);
    s[ts::Dimension::Size] = {"small"};
    s[ts::Dimension::Context] = {};
    s[ts::Dimension::Precision] = {};
    s[ts::Dimension::Batch] = {"1", "8"};
    const auto batches = ts::expandSweep(s);
    ASSERT_EQ(batches.size(), 2u);
    EXPECT_EQ(batches[0].batch_size, 1);
    EXPECT_EQ(batches[1].batch_size, 8);
    s[ts::Dimension::Size] = {"enormous"};
    EXPECT_THROW(ts::expandSweep(s), std::invalid_argument);
}

// ---- The execution mode (eager / compiled) ----

// See Note [point dimensions]: a dimension is its row's key; the ones code names have their rows,
// and no two rows share a key.
TEST(Config, EveryNamedDimensionHasItsRowAndEveryKeyOneRow) {
    for (ts::Dimension d : {ts::Dimension::Size, ts::Dimension::Context, ts::Dimension::Batch,
                            ts::Dimension::Precision, ts::Dimension::Attention, ts::Dimension::Mode,
                            ts::Dimension::Exec, ts::Dimension::Checkpoint, ts::Dimension::Source,
                            ts::Dimension::Warmup, ts::Dimension::Steps, ts::Dimension::Device})
        EXPECT_TRUE(ts::dimensionDef(d).id() == d) << d.key();
    std::vector<std::string_view> keys;
    for (const auto& d : ts::pointDimensions()) {
        EXPECT_EQ(std::count(keys.begin(), keys.end(), d.key), 0) << d.key;
        keys.push_back(d.key);
        EXPECT_EQ(ts::findDimension(d.key), &d);
    }
    EXPECT_THROW(ts::dimensionDef(ts::Dimension("nonesuch")), std::logic_error);
}

TEST(Config, ExecModeNamesRoundTrip) {
    EXPECT_EQ(ts::toString(ts::ExecMode::Eager), "eager");
    EXPECT_EQ(ts::toString(ts::ExecMode::Compiled), "compiled");
    for (auto e : ts::allExecModes()) EXPECT_EQ(ts::parseExecMode(ts::toString(e)), e);
    EXPECT_EQ(ts::namesOf(ts::allExecModes()),
              "eager, compiled, reduce-overhead, max-autotune-no-cudagraphs");
    EXPECT_FALSE(ts::parseExecMode("fast"));
    EXPECT_EQ(ts::PointConfig{}.exec, ts::ExecMode::Eager);
}

TEST(Config, ExecSweepExpandsInOrder) {
    ts::SweepSpec s;
    s.base.device = "cuda";
    s[ts::Dimension::Precision] = {"fp32", "bf16"};
    s[ts::Dimension::Exec] = {"eager", "compiled"};
    EXPECT_EQ(ts::sweepPointCount(s), 4u);
    const auto points = ts::expandSweep(s);
    ASSERT_EQ(points.size(), 4u);
    // Execution mode nests inside precision: eager and compiled of one point stand together.
    EXPECT_EQ(points[0].exec, ts::ExecMode::Eager);
    EXPECT_EQ(points[1].exec, ts::ExecMode::Compiled);
    EXPECT_EQ(points[1].precision, ts::Precision::FP32);
    EXPECT_EQ(points[2].exec, ts::ExecMode::Eager);
    EXPECT_EQ(points[3].precision, ts::Precision::BF16);
    EXPECT_EQ(points[3].exec, ts::ExecMode::Compiled);
    s[ts::Dimension::Exec] = {};
    s.base.exec = ts::ExecMode::Compiled;
    for (const auto& p : ts::expandSweep(s))
        EXPECT_EQ(p.exec, ts::ExecMode::Compiled);  // the base value
}

TEST(Config, ExecModeInJsonAndOldRunsReadAsEager) {
    ts::PointConfig c;
    c.device = "cuda";
    c.exec = ts::ExecMode::Compiled;
    const nlohmann::json j = ts::toJson(c);
    EXPECT_EQ(j.at("exec"), "compiled");
    EXPECT_EQ(ts::pointFromJson(j), c);
    // A configuration stored before the field existed.
    nlohmann::json old = j;
    old.erase("exec");
    EXPECT_EQ(ts::pointFromJson(old).exec, ts::ExecMode::Eager);
    nlohmann::json result = ts::toJson(ts::BenchResult{});
    result["config"].erase("exec");
    EXPECT_EQ(ts::resultFromJson(result).config.exec, ts::ExecMode::Eager);
    // A sweep file's list, and a wrong name refused with the choices.
    const auto sweep =
        ts::sweepFromJson(nlohmann::json::parse(R"({"execs": ["eager", "compiled"]})"));
    EXPECT_EQ(sweep[ts::Dimension::Exec], (std::vector<std::string>{"eager", "compiled"}));
    try {
        ts::sweepFromJson(nlohmann::json::parse(R"({"execs": ["fast"]})"));
        ADD_FAILURE() << "an unknown execution mode was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("'fast' is not one of eager, compiled"),
                  std::string::npos)
            << e.what();
    }
    ts::SweepSpec spec;
    spec[ts::Dimension::Exec] = sweep[ts::Dimension::Exec];
    EXPECT_NE(ts::benchSpecJson(spec, 2).find(R"("execs":["eager","compiled"])"),
              std::string::npos);
}

TEST(Config, CompiledModeRefusesWhatItCannotCapture) {
    ts::PointConfig c;
    c.exec = ts::ExecMode::Compiled;
    c.device = "cpu";
    EXPECT_TRUE(anyContains(ts::validatePoint(c),
                            "compiled mode captures CUDA graphs: it needs a CUDA device"));
    c.device = "cuda:0";
    EXPECT_TRUE(ts::validatePoint(c).empty());
    c.precision = ts::Precision::BF16;
    EXPECT_TRUE(ts::validatePoint(c).empty());
    c.precision = ts::Precision::FP16;
    const auto e = ts::validatePoint(c);
    EXPECT_TRUE(anyContains(e, "compiled mode does not capture fp16 training"))
        << (e.empty() ? "" : e.front());
    EXPECT_TRUE(anyContains(e, "GradScaler"));
    c.mode = ts::Mode::ForwardBackward;  // no loss scaler outside training
    EXPECT_TRUE(ts::validatePoint(c).empty());
    c.exec = ts::ExecMode::Eager;
    c.mode = ts::Mode::Train;
    c.device = "cpu";
    EXPECT_TRUE(ts::validatePoint(c).empty());
}

// The fused LM head and loss, a dimension added as its field, its row and one line of the
// training setup (see Note [point dimensions]): the sweep file, the stored spec, the point's JSON,
// the checks and the reports' column take it from the row.
TEST(Config, FusedLossIsADimensionEveryReaderTakes) {
    const ts::DimensionDef* d = ts::findDimension("losses");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->key, "loss");
    EXPECT_EQ(d->flag, "--loss");
    EXPECT_EQ(ts::parseValue(*d, "fused"), "fused");
    EXPECT_THROW(ts::parseValue(*d, "chunked"), std::invalid_argument);
    // A sweep file over it, and back as a stored run's spec.
    const auto sweep = ts::sweepFromJson(
        nlohmann::json::parse(R"({"base": {"size": "tiny"}, "losses": ["logits", "fused"]})"));
    const auto points = ts::expandSweep(sweep);
    ASSERT_EQ(points.size(), 2u);
    EXPECT_FALSE(points[0].fused_loss);
    EXPECT_TRUE(points[1].fused_loss);
    const nlohmann::json spec = ts::sweepToJson(sweep);
    EXPECT_EQ(spec.at("losses"), nlohmann::json({"logits", "fused"}));
    EXPECT_EQ(ts::expandSweep(ts::sweepFromJson(spec)), points);
    // The point's JSON; a point stored before the dimension reads as the whole logits.
    const nlohmann::json j = ts::toJson(points[1]);
    EXPECT_EQ(j.at("loss"), "fused");
    EXPECT_TRUE(ts::pointFromJson(j, "", true).fused_loss);
    nlohmann::json old = j;
    old.erase("loss");
    EXPECT_FALSE(ts::pointFromJson(old, "", true).fused_loss);
    // What it cannot run with, said by its row.
    ts::PointConfig c = points[1];
    EXPECT_TRUE(ts::validatePoint(c).empty());
    c.exec = ts::ExecMode::Compiled;
    c.device = "cuda";
    EXPECT_TRUE(anyContains(ts::validatePoint(c), "use the eager mode with --loss fused"));
    c.exec = ts::ExecMode::Eager;
    c.source = ts::Source::Python;
    c.python.code = "examples/course-checkout";
    EXPECT_TRUE(anyContains(ts::validatePoint(c), "the fused LM head and loss is TrainScope's"));
    // The reports' column: always in CSV, in the table where it varies.
    ts::BenchResult a, b;
    a.config = points[0];
    b.config = points[1];
    const std::string csv = ts::formatResults({a, b}, ts::TableFormat::Csv);
    EXPECT_NE(csv.find(",loss,"), std::string::npos) << csv;
    EXPECT_NE(csv.find(",fused,"), std::string::npos) << csv;
    EXPECT_EQ(ts::formatResults({a, a}, ts::TableFormat::Text).find("loss"), std::string::npos);
    EXPECT_NE(ts::formatResults({a, b}, ts::TableFormat::Text).find("fused"), std::string::npos);
}

TEST(Config, ExecColumnShownWhenItVaries) {
    ts::BenchResult a, b;
    a.config.device = b.config.device = "cuda";
    b.config.exec = ts::ExecMode::Compiled;
    const auto table = [](const std::vector<ts::BenchResult>& r, ts::TableFormat f) {
        return ts::formatResults(r, f);
    };
    EXPECT_NE(table({a}, ts::TableFormat::Csv).find(",exec,"), std::string::npos);  // CSV: always
    EXPECT_NE(table({a, b}, ts::TableFormat::Csv).find(",compiled,"), std::string::npos);
    EXPECT_EQ(table({a, a}, ts::TableFormat::Text).find("exec"), std::string::npos);
    EXPECT_NE(table({a, b}, ts::TableFormat::Text).find("compiled"), std::string::npos);
}

// The course's compile table: a compiled row next to its eager twin (same configuration) gets
// eager's total time over its own; rows without a twin, and eager rows, say "-".
TEST(Config, CompiledRowsShowTheirSpeedupOverEager) {
    const auto result = [](ts::ExecMode exec, const std::string& size, double total_ms) {
        ts::BenchResult r;
        r.config.model = *ts::modelPreset(size);
        r.config.device = "cuda";
        r.config.exec = exec;
        for (int i = 0; i < 3; ++i) {
            ts::StepSample s;
            s.index = i;
            s.forward_ms = s.backward_ms = s.optimizer_ms = total_ms / 3;
            s.total_ms = total_ms;
            r.steps.push_back(s);
        }
        ts::summarize(r);
        return r;
    };
    const std::vector<ts::BenchResult> rs = {result(ts::ExecMode::Eager, "small", 30.0),
                                             result(ts::ExecMode::Compiled, "small", 6.0),
                                             result(ts::ExecMode::Compiled, "medium", 12.0)};
    const std::string md = ts::formatResults(rs, ts::TableFormat::Markdown);
    EXPECT_NE(md.find("vs eager"), std::string::npos) << md;
    EXPECT_NE(md.find("5.00×"), std::string::npos) << md;
    const std::string csv = ts::formatResults(rs, ts::TableFormat::Csv);
    EXPECT_NE(csv.find("speedup_vs_eager"), std::string::npos) << csv;
    EXPECT_NE(csv.find(",5.0000,"), std::string::npos) << csv;
    // Eager alone: no such column in the text tables.
    EXPECT_EQ(ts::formatResults({rs[0]}, ts::TableFormat::Markdown).find("vs eager"),
              std::string::npos);
}

// ---- The source: TrainScope's model or the user's Python code ----

TEST(Config, SourceNamesRoundTripAndDefault) {
    EXPECT_EQ(ts::toString(ts::Source::TrainScope), "trainscope");
    EXPECT_EQ(ts::toString(ts::Source::Python), "python");
    for (auto s : ts::allSources()) EXPECT_EQ(ts::parseSource(ts::toString(s)), s);
    EXPECT_FALSE(ts::parseSource("yours"));
    EXPECT_EQ(ts::PointConfig{}.source, ts::Source::TrainScope);
}

TEST(Config, SourceIsASweepDimensionInsideExec) {
    ts::SweepSpec s;
    s.base.python.code = "examples/course-checkout";
    s[ts::Dimension::Exec] = {"eager", "compiled"};
    s[ts::Dimension::Source] = {"trainscope", "python"};
    s.base.device = "cuda";
    EXPECT_EQ(ts::sweepPointCount(s), 4u);
    const auto pts = ts::expandSweep(s);
    ASSERT_EQ(pts.size(), 4u);
    EXPECT_EQ(pts[0].source, ts::Source::TrainScope);
    EXPECT_EQ(pts[1].source, ts::Source::Python);
    EXPECT_EQ(pts[1].exec, ts::ExecMode::Eager);
    EXPECT_EQ(pts[2].exec, ts::ExecMode::Compiled);
    EXPECT_EQ(pts[3].python.code, "examples/course-checkout");
}

TEST(Config, TheUsersCodeIsCheckedAndTorchCompileModesAreItsAlone) {
    ts::PointConfig c;
    c.source = ts::Source::Python;
    EXPECT_NE(ts::sourceProblem(c).find("needs the user's code"), std::string::npos);
    c.python.code = "my_model:build";
    EXPECT_EQ(ts::sourceProblem(c), "");
    c.python.timeout_s = 0;
    EXPECT_NE(ts::sourceProblem(c).find("timeout"), std::string::npos);
    c.python.timeout_s = 60;
    // torch.compile runs on the CPU too, in every mode, for the user's code...
    for (auto e : ts::allExecModes()) {
        c.exec = e;
        EXPECT_EQ(ts::compiledProblem(c), "") << ts::toString(e);
    }
    // ... while TrainScope's model runs eager or as CUDA graphs.
    c.source = ts::Source::TrainScope;
    c.device = "cuda";
    c.exec = ts::ExecMode::ReduceOverhead;
    EXPECT_NE(ts::compiledProblem(c).find("torch.compile mode"), std::string::npos);
    c.exec = ts::ExecMode::Compiled;
    EXPECT_EQ(ts::compiledProblem(c), "");
}

TEST(Config, SourceInJsonAndOldRunsReadAsTrainScope) {
    ts::PointConfig c;
    c.source = ts::Source::Python;
    c.python = {"ckpt", "opt:make", "/usr/bin/python3", 30};
    const auto j = ts::toJson(c);
    EXPECT_EQ(j.at("source"), "python");
    EXPECT_EQ(ts::pointFromJson(j), c);
    // TrainScope's points read as they always did: no source or code keys.
    const auto t = ts::toJson(ts::PointConfig{});
    EXPECT_FALSE(t.contains("source"));
    EXPECT_FALSE(t.contains("code"));
    EXPECT_EQ(ts::pointFromJson(t).source, ts::Source::TrainScope);
    // A sweep's spec keeps its sources and runs again as a sweep file.
    ts::SweepSpec s;
    s.base = c;
    s[ts::Dimension::Source] = {"trainscope", "python"};
    const auto back = ts::sweepFromJson(nlohmann::json::parse(ts::benchSpecJson(s, 2)));
    EXPECT_EQ(back[ts::Dimension::Source], s[ts::Dimension::Source]);
    EXPECT_EQ(back.base.python, c.python);
}

TEST(Config, SourceColumnSaysWhoseCode) {
    ts::BenchResult r;
    r.config.source = ts::Source::Python;
    r.config.python.code = "examples/course-checkout";
    const std::string md = ts::formatResults({r}, ts::TableFormat::Markdown);
    EXPECT_NE(md.find("source"), std::string::npos) << md;
    EXPECT_NE(md.find("python"), std::string::npos) << md;
    EXPECT_EQ(ts::formatResults({ts::BenchResult{}}, ts::TableFormat::Markdown).find("source"),
              std::string::npos);
}

}  // namespace
