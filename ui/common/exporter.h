// Exports: any chart to PNG, SVG or PDF at a chosen size, any table to CSV, Markdown or the
// clipboard, a whole run as a Markdown report. Every export carries the run's environment
// and configuration (a footer on charts, a JSON file beside a CSV, a section in Markdown).
#pragma once

#include <QColor>
#include <QImage>
#include <QList>
#include <QSize>
#include <QString>
#include <QStringList>
#include <functional>
#include <optional>
#include <vector>

#include "core/lab.h"  // TableFormat
#include "core/result.h"

class QAbstractItemModel;
class QPainter;
class QRectF;

namespace ts::ui {

// A chart that can paint itself laid out for any size (not a scaled screenshot).
class ExportableChart {
public:
    virtual ~ExportableChart() = default;
    virtual QString chartTitle() const = 0;
    virtual QString chartFileStem() const = 0;  // "steps", "sweep", "memory"
    virtual void paintChart(QPainter& painter, const QRectF& target) = 0;
    // The colour behind the chart; the export's footer strip takes it too.
    virtual QColor backgroundColor() const;
};

// What every export says about where its numbers come from.
struct ExportContext {
    QString runLabel;
    qint64 storeRunId = 0;
    Environment environment;
    // What was run, as the lab says it: one line for charts and tables, and JSON for the
    // report's appendix (empty: none).
    QString configuration;
    QString configurationJson;
    QStringList notes;  // more lines, e.g. the second run's environment in a comparison

    // Set for what is no single run (a comparison of two): the title as it is.
    QString title;

    QString runTitle() const;   // `title`, else "Run 12 — label", "Unsaved run"
    QStringList lines() const;  // run, environment, configuration
};

enum class ImageFormat { Png, Svg, Pdf };
std::optional<ImageFormat> imageFormatFor(const QString& path);
std::optional<TableFormat> tableFormatFor(const QString& path);

// The chart with the environment footer, `size` in device-independent pixels.
QImage renderChartImage(ExportableChart& chart, QSize size, const ExportContext& ctx,
                        qreal devicePixelRatio = 1.0);
// Writes PNG, SVG or PDF by the file's suffix. False with `error` set when it cannot.
bool exportChart(ExportableChart& chart, const QString& path, QSize size, const ExportContext& ctx,
                 QString* error = nullptr);

// CSV (see Note [tables other programs read] in engine/src/core/table.h): the header line
// (kCsvHeaderRole's names, else csvName of the headers) and the rows, raw numbers where the model
// has them (kValueRole), an empty field where a cell shows nothing measured; no comment lines.
QString tableToCsv(const QAbstractItemModel& model);
// The table's CSV headers, as tableToCsv writes them.
QStringList csvHeaders(const QAbstractItemModel& model);
// What a CSV leaves out, as JSON: the run, its environment, configuration and notes.
QString environmentJson(const ExportContext& ctx);
// Where an export writes it beside `path`: "results.csv" → "results.environment.json".
QString environmentPathFor(const QString& path);
QString tableToMarkdown(const QAbstractItemModel& model, const ExportContext& ctx,
                        bool withEnvironment = true);
// By the file's suffix: CSV (and, with `withEnvironment`, environmentJson beside it at
// environmentPathFor) or Markdown (the environment listed under the table).
bool exportTable(const QAbstractItemModel& model, const QString& path, const ExportContext& ctx,
                 QString* error = nullptr, bool withEnvironment = true);
// Tab-separated text, the CSV's table (pastes into a spreadsheet), and an HTML table as shown
// (pastes into a document, the run and device under it).
void copyTableToClipboard(const QAbstractItemModel& model, const ExportContext& ctx);
void copyChartToClipboard(ExportableChart& chart, QSize size, const ExportContext& ctx);

struct ReportPart {
    QString title;
    ExportableChart* chart = nullptr;  // one of the two
    const QAbstractItemModel* table = nullptr;
    // Run just before the part is written: one chart can show several things in turn (the
    // attention chart's passes). Empty: nothing to do.
    std::function<void()> prepare;
};
// `path`.md plus a folder `<stem>_files/` holding a PNG and an SVG per chart.
bool exportReport(const QString& path, const QList<ReportPart>& parts, const ExportContext& ctx,
                  QSize chartSize, QString* error = nullptr);

}  // namespace ts::ui
