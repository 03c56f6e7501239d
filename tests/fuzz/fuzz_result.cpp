// Stored benchmark results: resultFromJson on what a store row could hold, the round trip, the
// tables, and the lab's report of a run (the `runs show` path) with the row among good ones.
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "benchmark/benchmark.h"
#include "benchmark/benchmark_json.h"
#include "benchmark/benchmark_report.h"
#include "core/json.h"
#include "core/lab.h"
#include "fuzz_common.h"

namespace {

void result(std::string_view text) {
    const ts::BenchResult r = ts::resultFromJson(ts::parseJson(text));
    fuzz::reached("a parsed result");
    const std::string again = ts::dumpJson(ts::toJson(r));
    // Never throws: what this build writes, it reads.
    const ts::BenchResult back = ts::resultFromJson(ts::parseJson(again));
    fuzz::require(ts::dumpJson(ts::toJson(back)) == again, "a result survives its JSON round trip");
    for (auto f : {ts::TableFormat::Text, ts::TableFormat::Markdown, ts::TableFormat::Csv})
        ts::formatResults({r}, f);
    ts::markdownReport("fuzz", {r});
}

void report(std::string_view text) {
    const ts::Lab* lab = ts::findLab(ts::kBenchLab);
    ts::RunInfo info;
    info.id = 1;
    info.lab = ts::kBenchLab;
    info.label = std::string(text.substr(0, 64));  // labels are free text too
    const std::vector<ts::StoredRow> rows = {{0, ts::Status::Ok, "{}", std::string(text)}};
    for (auto f : {ts::ReportFormat::Table, ts::ReportFormat::Markdown, ts::ReportFormat::Csv,
                   ts::ReportFormat::Json})
        lab->report(info, rows, f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto text = fuzz::text(data, size);
    try {
        result(text);
    } catch (const std::invalid_argument&) {
    } catch (const nlohmann::json::exception&) {
    }
    try {
        report(text);
    } catch (const std::runtime_error&) {  // a row that cannot be read, named
    }
    return 0;
}
