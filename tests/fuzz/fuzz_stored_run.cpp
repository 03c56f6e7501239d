// The window's run-opening path: what History's Open, Load Configuration and Compare do with
// a stored run whose spec, row or row configuration is damaged (a store written by another
// version, edited by hand, or corrupted). For the lab named on the input's first line, the
// input's rest replaces one part of a real stored run of that lab (tests/fuzz/seeds/stored/):
//   <lab>\nspec\n<text>    the run's spec JSON
//   <lab>\nrow\n<text>     its first row's result JSON
//   <lab>\nconfig\n<text>  its first row's configuration JSON
//   <lab>\nlabel\n<text>   its label
// Then, as the window does: the configuration summary (History's column), the panel state that
// runs it again, set on the lab's panel; the view's showStored, every cell of every table it
// reports, its title; Compare against the good run where the lab has it. A damaged run may be
// refused (showStored false with a reason); nothing may crash, hang or throw out of the window's
// code. Built with UndefinedBehaviorSanitizer only: the window's libraries are the project's
// own build (LibTorch and Qt do not run under AddressSanitizer here); glibc's heap checks are on
// in its ctest pass (MALLOC_CHECK_).
#include <QAbstractItemModel>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <string>

#include "core/result.h"
#include "fuzz_common.h"
#include "tests/common/test_paths.h"
#include "ui/common/exporter.h"
#include "ui/common/format.h"
#include "ui/common/labpanel.h"
#include "ui/common/labview.h"
#include "ui/labs.h"
#include "ui/shell/runconfig.h"

namespace {

struct Lab {
    const ts::ui::LabEntry* entry = nullptr;
    std::unique_ptr<ts::ui::LabPanel> panel;
    std::unique_ptr<ts::ui::LabView> view;
    ts::ui::StoredRun good;  // the real run the input damages
};

// A real stored run of each lab: {"lab", "label", "spec", "rows": [{"status", "config",
// "result"}]}, the texts as the store holds them.
ts::ui::StoredRun readGoodRun(const QString& path) {
    QFile f(path);
    fuzz::require(f.open(QIODevice::ReadOnly), "the stored seed runs can be read");
    const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    ts::ui::StoredRun run;
    run.info.id = 1;
    run.info.lab = o.value(QStringLiteral("lab")).toString().toStdString();
    run.info.label = o.value(QStringLiteral("label")).toString().toStdString();
    run.info.spec_json = o.value(QStringLiteral("spec")).toString().toStdString();
    run.info.created = "2026-11-26T12:00:00Z";
    run.info.ended = "2026-11-26T12:00:01Z";
    int index = 0;
    for (const auto& r : o.value(QStringLiteral("rows")).toArray()) {
        const QJsonObject row = r.toObject();
        const auto status =
            ts::parseStatus(row.value(QStringLiteral("status")).toString().toStdString());
        run.rows.push_back({index++, status.value_or(ts::Status::Ok),
                            row.value(QStringLiteral("config")).toString().toStdString(),
                            row.value(QStringLiteral("result")).toString().toStdString()});
    }
    run.info.point_count = run.info.ok_count = run.info.planned = index;
    fuzz::require(!run.info.lab.empty() && !run.rows.empty(), "a stored seed run has rows");
    return run;
}

// Made once and never torn down: the views' destructors would otherwise run at exit, after Qt's
// own statics are gone (a crash of the harness, not of the window).
std::map<std::string, Lab>& labs() {
    static auto* all = new std::map<std::string, Lab>([] {
        static int argc = 1;
        static char name[] = "fuzz_stored_run";
        static char* argv[] = {name, nullptr};
        qputenv("QT_QPA_PLATFORM", "offscreen");
        new QApplication(argc, argv);
        std::map<std::string, Lab> out;
        const QDir dir(
            QString::fromStdString(ts::testing::testPath("TRAINSCOPE_TEST_STORED_RUNS")));
        for (const ts::ui::LabEntry& e : ts::ui::uiLabs()) {
            const QString path = dir.filePath(e.id + QStringLiteral(".json"));
            if (!QFile::exists(path)) continue;
            Lab lab;
            lab.entry = &e;
            lab.panel.reset(e.createPanel());
            lab.view.reset(e.createView());
            lab.good = readGoodRun(path);
            QString error;
            fuzz::require(lab.view->showStored(lab.good, &error), "the good stored run opens");
            out.emplace(e.id.toStdString(), std::move(lab));
        }
        fuzz::require(out.size() == ts::ui::uiLabs().size(), "a stored seed run for every lab");
        return out;
    }());
    return *all;
}

// Every cell of every table the view reports, as an export or a report reads them.
void readTables(const ts::ui::LabView& view) {
    for (const auto& part : view.reportParts()) {
        const QAbstractItemModel* m = part.table;
        if (!m) continue;
        for (int c = 0; c < m->columnCount(); ++c) m->headerData(c, Qt::Horizontal);
        for (int r = 0; r < m->rowCount(); ++r)
            for (int c = 0; c < m->columnCount(); ++c) m->data(m->index(r, c));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto& all = labs();
    std::string_view in = fuzz::text(data, size);
    // "<lab>\n<part>\n<text>"; an input whose header was mutated away goes to a lab by its size.
    auto line = [&]() {
        const size_t nl = in.find('\n');
        const std::string_view head = in.substr(0, nl);
        in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
        return std::string(head);
    };
    const std::string_view whole = in;
    std::string lab_id = line(), part = line();
    if (!all.count(lab_id)) {
        auto it = all.begin();
        std::advance(it, static_cast<long>(size % all.size()));
        lab_id = it->first;
        part = (size / all.size()) % 2 ? "row" : "spec";
        in = whole;
    }
    if (part != "row" && part != "config" && part != "label") part = "spec";
    Lab& lab = all.at(lab_id);
    ts::ui::StoredRun run = lab.good;
    const std::string text(in);
    if (part == "row")
        run.rows.front().result_json = text;
    else if (part == "config")
        run.rows.front().config_json = text;
    else if (part == "label")
        run.info.label = text;
    else
        run.info.spec_json = text;
    fuzz::reached(("a damaged " + part + " of " + lab_id).c_str());

    ts::ui::configurationSummary(run.info);
    QString why;
    if (const auto state = ts::ui::panelStateForRun(run.info, &why)) {
        QStringList notes;
        lab.panel->setState(*state, &notes);
        lab.panel->summary();
    }
    QString error;
    if (lab.view->showStored(run, &error)) {
        fuzz::reached("a damaged run shown");
        readTables(*lab.view);
        lab.view->runTitle();
        if (lab.view->compareUnavailable().isEmpty()) lab.view->compare(run, lab.good, &error);
    } else {
        fuzz::require(!error.isEmpty(), "a run that cannot be shown says why");
    }
    QCoreApplication::processEvents();
    return 0;
}
