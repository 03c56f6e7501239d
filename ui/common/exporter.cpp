#include "ui/common/exporter.h"

#include <QAbstractItemModel>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QMimeData>
#include <QPageSize>
#include <QPainter>
#include <QPalette>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextStream>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/json.h"
#include "core/table.h"
#include "ui/common/format.h"
#include "ui/common/roles.h"

namespace ts::ui {

QColor ExportableChart::backgroundColor() const {
    return QApplication::palette().color(QPalette::Base);
}

QString ExportContext::runTitle() const {
    if (!title.isEmpty()) return title;
    QString t =
        storeRunId > 0 ? QStringLiteral("Run %1").arg(storeRunId) : QStringLiteral("Unsaved run");
    if (!runLabel.isEmpty()) t += QStringLiteral(" — ") + runLabel;
    return t;
}

QStringList ExportContext::lines() const {
    QStringList out;
    out << QStringLiteral("Run: ") + runTitle();
    out << environmentLines(environment);
    if (!configuration.isEmpty()) out << QStringLiteral("Configuration: ") + configuration;
    out << notes;
    return out;
}

std::optional<ImageFormat> imageFormatFor(const QString& path) {
    const QString s = QFileInfo(path).suffix().toLower();
    if (s == QLatin1String("png")) return ImageFormat::Png;
    if (s == QLatin1String("svg")) return ImageFormat::Svg;
    if (s == QLatin1String("pdf")) return ImageFormat::Pdf;
    return std::nullopt;
}

std::optional<TableFormat> tableFormatFor(const QString& path) {
    const QString s = QFileInfo(path).suffix().toLower();
    if (s == QLatin1String("csv")) return TableFormat::Csv;
    if (s == QLatin1String("md") || s == QLatin1String("markdown")) return TableFormat::Markdown;
    return std::nullopt;
}

namespace {

void setError(QString* error, const QString& message) {
    if (error) *error = message;
}

// The footer: run, environment and configuration in a small font under the chart.
QString footerText(const ExportContext& ctx) {
    QStringList env = environmentLines(ctx.environment);
    QString text = ctx.runTitle();
    if (!env.isEmpty()) text += QStringLiteral("  ·  ") + env.join(QStringLiteral("  ·  "));
    if (!ctx.configuration.isEmpty()) text += QStringLiteral("\n") + ctx.configuration;
    for (const QString& n : ctx.notes) text += QStringLiteral("\n") + n;
    return text;
}

QFont footerFont(const QSizeF& size) {
    QFont f = QApplication::font();
    f.setPixelSize(std::max(9, static_cast<int>(std::lround(size.width() / 120.0))));
    return f;
}

// Paints chart and footer into `target`; the background comes from the chart's own colours
// (the chart paints it), the footer takes a colour readable on it.
void paintWithFooter(QPainter& p, ExportableChart& chart, const QRectF& target,
                     const ExportContext& ctx, const QColor& background) {
    const QString text = footerText(ctx);
    const QFont font = footerFont(target.size());
    const QFontMetricsF fm(font);
    const qreal margin = std::max<qreal>(6, target.width() / 160.0);
    const QRectF textArea(target.left() + margin, 0, target.width() - 2 * margin, target.height());
    const QRectF bounds = fm.boundingRect(textArea, Qt::TextWordWrap | Qt::AlignLeft, text);
    const qreal footerH = std::min(bounds.height() + 2 * margin, target.height() / 3);
    p.fillRect(target, background);
    const QRectF chartRect(target.left(), target.top(), target.width(), target.height() - footerH);
    p.save();
    chart.paintChart(p, chartRect);
    p.restore();
    p.save();
    p.setFont(font);
    const bool dark = background.lightnessF() < 0.5;
    p.setPen(dark ? QColor(0xc8, 0xc8, 0xc8) : QColor(0x44, 0x44, 0x44));
    p.drawText(QRectF(target.left() + margin, chartRect.bottom() + margin * 0.5,
                      target.width() - 2 * margin, footerH - margin),
               Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, text);
    p.restore();
}

QString cellText(const QAbstractItemModel& m, int row, int col, bool preferRaw,
                 const QModelIndex& parent = {}) {
    const QModelIndex idx = m.index(row, col, parent);
    if (preferRaw) {
        // See Note [tables other programs read]: the number itself, in its header's unit; a
        // cell that shows nothing measured ("n/a", "—") is empty.
        const QVariant raw = m.data(idx, kValueRole);
        switch (raw.isValid() ? raw.typeId() : QMetaType::UnknownType) {
            case QMetaType::Double:
            case QMetaType::Float:
                return std::isfinite(raw.toDouble())
                           ? QString::number(raw.toDouble(), 'g', QLocale::FloatingPointShortest)
                           : QString();
            case QMetaType::Int:
            case QMetaType::UInt:
            case QMetaType::LongLong:
            case QMetaType::ULongLong:
                return raw.toString();
            case QMetaType::Bool:
                return raw.toBool() ? QStringLiteral("1") : QStringLiteral("0");
            default:
                break;
        }
        const QString shown = m.data(idx, Qt::DisplayRole).toString().trimmed();
        static const QStringList kNothing = {
            QStringLiteral("n/a"),   QStringLiteral("-"),          QStringLiteral("—"),
            QStringLiteral("–"),     QStringLiteral("…"),          QStringLiteral("not measured"),
            QStringLiteral("never"), QStringLiteral("not checked")};
        return kNothing.contains(shown) ? QString() : shown;
    }
    return m.data(idx, Qt::DisplayRole).toString();
}

// Every row of `m` in the order a tree view shows them expanded (a table's rows as they are):
// `visit(parent, row, depth)`.
void forEachRow(const QAbstractItemModel& m,
                const std::function<void(const QModelIndex&, int, int)>& visit,
                const QModelIndex& parent = {}, int depth = 0) {
    for (int r = 0; r < m.rowCount(parent); ++r) {
        visit(parent, r, depth);
        if (const QModelIndex child = m.index(r, 0, parent); m.hasChildren(child))
            forEachRow(m, visit, child, depth + 1);
    }
}

QString csvField(QString s) {
    if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) ||
        s.contains(QLatin1Char('\n')) || s.startsWith(QLatin1Char('#'))) {
        s.replace(QLatin1String("\""), QLatin1String("\"\""));
        return QLatin1Char('"') + s + QLatin1Char('"');
    }
    return s;
}

// Free text (a label, a device's name, a cell) as Markdown shows it, not as markup: "<b>" stays
// "<b>", "*x*" is not emphasis, a "|" does not split a cell, a newline does not end a line (the
// engine's markdownText, which the CLI's reports use too).
QString mdText(const QString& text) {
    return QString::fromStdString(markdownText(text.toStdString()));
}

QString mdCell(const QString& s) { return mdText(s); }

QString htmlEscape(const QString& s) { return s.toHtmlEscaped(); }

// Opens `f` (a QSaveFile on `path`), making its folder first: a fresh profile has no
// ~/Documents, and the first export must not fail for it. Says why when it cannot.
bool openForWriting(QSaveFile& f, const QString& path, QString* error, QIODevice::OpenMode mode) {
    const QString folder = QFileInfo(path).absolutePath();
    if (!QDir().mkpath(folder)) {
        setError(error,
                 QObject::tr("cannot write %1: the folder %2 does not exist and cannot be created")
                     .arg(path, folder));
        return false;
    }
    if (QFileInfo(path).isDir()) {
        setError(error, QObject::tr("cannot write %1: it is a folder").arg(path));
        return false;
    }
    if (!f.open(mode)) {
        setError(error, QObject::tr("cannot write %1: %2").arg(path, f.errorString()));
        return false;
    }
    return true;
}

// "&Attention" → "Attention", "A && B" → "A & B".
QString withoutMnemonic(QString text) {
    text.replace(QLatin1String("&&"), QStringLiteral("\x01"));
    text.remove(QLatin1Char('&'));
    text.replace(QChar(1), QLatin1Char('&'));
    return text;
}

bool writeText(const QString& path, const QString& text, QString* error) {
    QSaveFile f(path);
    if (!openForWriting(f, path, error, QIODevice::WriteOnly | QIODevice::Text)) return false;
    f.write(text.toUtf8());
    if (!f.commit()) {
        setError(error, QObject::tr("cannot write %1: %2").arg(path, f.errorString()));
        return false;
    }
    return true;
}

}  // namespace

QImage renderChartImage(ExportableChart& chart, QSize size, const ExportContext& ctx, qreal dpr) {
    QImage img(size * dpr, QImage::Format_ARGB32_Premultiplied);
    img.setDevicePixelRatio(dpr);
    img.fill(chart.backgroundColor());
    {
        QPainter p(&img);
        p.setRenderHint(QPainter::Antialiasing);
        p.setRenderHint(QPainter::TextAntialiasing);
        paintWithFooter(p, chart, QRectF(QPointF(0, 0), QSizeF(size)), ctx,
                        chart.backgroundColor());
    }
    // The environment also travels as PNG text chunks.
    img.setText(QStringLiteral("Title"), chart.chartTitle());
    img.setText(QStringLiteral("Description"), ctx.lines().join(QLatin1Char('\n')));
    img.setText(QStringLiteral("Software"), QStringLiteral("TrainScope"));
    return img;
}

bool exportChart(ExportableChart& chart, const QString& path, QSize size, const ExportContext& ctx,
                 QString* error) {
    if (size.width() < 100 || size.height() < 80 || size.width() > 20000 || size.height() > 20000) {
        setError(error, QObject::tr("size %1×%2 is outside 100×80 … 20000×20000")
                            .arg(size.width())
                            .arg(size.height()));
        return false;
    }
    const auto format = imageFormatFor(path);
    if (!format) {
        setError(error, QObject::tr("%1: use .png, .svg or .pdf").arg(path));
        return false;
    }
    const QRectF target(QPointF(0, 0), QSizeF(size));
    // Written beside the target and renamed into place when complete: a failed export never
    // leaves a truncated file where a good one stood.
    QSaveFile out(path);
    if (!openForWriting(out, path, error, QIODevice::WriteOnly)) return false;
    switch (*format) {
        case ImageFormat::Png: {
            const QImage img = renderChartImage(chart, size, ctx);
            if (!img.save(&out, "PNG")) {
                setError(error, QObject::tr("cannot write %1").arg(path));
                return false;
            }
            break;
        }
        case ImageFormat::Svg: {
            QSvgGenerator svg;
            svg.setOutputDevice(&out);
            svg.setSize(size);
            svg.setViewBox(QRect(QPoint(0, 0), size));
            svg.setResolution(96);
            svg.setTitle(chart.chartTitle());
            svg.setDescription(ctx.lines().join(QLatin1Char('\n')));
            QPainter p;
            if (!p.begin(&svg)) {
                setError(error, QObject::tr("cannot write %1").arg(path));
                return false;
            }
            p.setRenderHint(QPainter::Antialiasing);
            paintWithFooter(p, chart, target, ctx, chart.backgroundColor());
            p.end();
            break;
        }
        case ImageFormat::Pdf: {
            QPdfWriter pdf(&out);
            pdf.setResolution(96);  // one unit = one pixel of the chosen size
            pdf.setPageSize(QPageSize(QSizeF(size) * 72.0 / 96.0, QPageSize::Point, QString(),
                                      QPageSize::ExactMatch));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            pdf.setTitle(chart.chartTitle());
            pdf.setCreator(QStringLiteral("TrainScope — ") +
                           ctx.lines().join(QStringLiteral("; ")));
            QPainter p;
            if (!p.begin(&pdf)) {
                setError(error, QObject::tr("cannot write %1").arg(path));
                return false;
            }
            p.setRenderHint(QPainter::Antialiasing);
            paintWithFooter(p, chart, target, ctx, chart.backgroundColor());
            p.end();
            break;
        }
    }
    if (out.size() == 0 || !out.commit()) {
        setError(error, QObject::tr("cannot write %1: %2").arg(path, out.errorString()));
        return false;
    }
    return true;
}

QStringList csvHeaders(const QAbstractItemModel& m) {
    QStringList names;
    for (int c = 0; c < m.columnCount(); ++c) {
        const QVariant own = m.headerData(c, Qt::Horizontal, kCsvHeaderRole);
        QString name =
            own.isValid() && !own.toString().isEmpty()
                ? own.toString()
                : QString::fromStdString(csvName(
                      withoutMnemonic(m.headerData(c, Qt::Horizontal).toString()).toStdString()));
        // Two columns of one name ("Forward ms" and "Forward ms" of two runs) are told apart.
        const QString base = name;
        for (int k = 2; names.contains(name); ++k) name = base + QStringLiteral("_%1").arg(k);
        names << name;
    }
    return names;
}

QString tableToCsv(const QAbstractItemModel& m) {
    QStringList header;
    for (const QString& h : csvHeaders(m)) header << csvField(h);
    QString out = header.join(QLatin1Char(',')) + QLatin1Char('\n');
    forEachRow(m, [&](const QModelIndex& parent, int r, int) {
        QStringList row;
        for (int c = 0; c < m.columnCount(); ++c) row << csvField(cellText(m, r, c, true, parent));
        out += row.join(QLatin1Char(',')) + QLatin1Char('\n');
    });
    return out;
}

QString environmentJson(const ExportContext& ctx) {
    QJsonObject o;
    o.insert(QStringLiteral("run"), ctx.runTitle());
    if (ctx.storeRunId > 0) o.insert(QStringLiteral("store_run_id"), ctx.storeRunId);
    if (!ctx.runLabel.isEmpty()) o.insert(QStringLiteral("label"), ctx.runLabel);
    o.insert(QStringLiteral("environment"),
             QJsonDocument::fromJson(QByteArray::fromStdString(toJson(ctx.environment).dump()))
                 .object());
    if (!ctx.configuration.isEmpty()) o.insert(QStringLiteral("configuration"), ctx.configuration);
    const QJsonDocument spec = QJsonDocument::fromJson(ctx.configurationJson.toUtf8());
    if (spec.isObject()) o.insert(QStringLiteral("configuration_json"), spec.object());
    if (spec.isArray()) o.insert(QStringLiteral("configuration_json"), spec.array());
    if (!ctx.notes.isEmpty())
        o.insert(QStringLiteral("notes"), QJsonArray::fromStringList(ctx.notes));
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented));
}

QString environmentPathFor(const QString& path) {
    const QFileInfo info(path);
    return info.dir().filePath(info.completeBaseName() + QStringLiteral(".environment.json"));
}

QString tableToMarkdown(const QAbstractItemModel& m, const ExportContext& ctx,
                        bool withEnvironment) {
    QString out;
    QStringList header, sep;
    for (int c = 0; c < m.columnCount(); ++c) {
        header << mdCell(m.headerData(c, Qt::Horizontal).toString());
        const QVariant align =
            m.rowCount() ? m.data(m.index(0, c), Qt::TextAlignmentRole) : QVariant();
        sep << ((align.isValid() && (align.toInt() & Qt::AlignRight)) ? QStringLiteral("---:")
                                                                      : QStringLiteral("---"));
    }
    out += QStringLiteral("| ") + header.join(QStringLiteral(" | ")) + QStringLiteral(" |\n");
    out += QStringLiteral("| ") + sep.join(QStringLiteral(" | ")) + QStringLiteral(" |\n");
    // A tree's rows (the autocast report's modules and their ops) come expanded, each child's
    // first cell indented under its parent with no-break spaces (Markdown keeps them).
    forEachRow(m, [&](const QModelIndex& parent, int r, int depth) {
        QStringList row;
        for (int c = 0; c < m.columnCount(); ++c) {
            QString cell = mdCell(cellText(m, r, c, false, parent));
            if (c == 0 && depth > 0)
                cell.prepend(QString(2 * (depth - 1), QChar(0x00A0)) + QStringLiteral("↳ "));
            row << cell;
        }
        out += QStringLiteral("| ") + row.join(QStringLiteral(" | ")) + QStringLiteral(" |\n");
    });
    if (withEnvironment) {
        out += QLatin1Char('\n');
        for (const QString& line : ctx.lines())
            out += QStringLiteral("- ") + mdText(line) + QLatin1Char('\n');
    }
    return out;
}

bool exportTable(const QAbstractItemModel& m, const QString& path, const ExportContext& ctx,
                 QString* error, bool withEnvironment) {
    const auto format = tableFormatFor(path);
    if (!format) {
        setError(error, QObject::tr("%1: use .csv or .md").arg(path));
        return false;
    }
    if (*format == TableFormat::Markdown) return writeText(path, tableToMarkdown(m, ctx), error);
    // See Note [tables other programs read]: the table alone; where it came from beside it.
    if (!writeText(path, tableToCsv(m), error)) return false;
    return !withEnvironment || writeText(environmentPathFor(path), environmentJson(ctx), error);
}

void copyTableToClipboard(const QAbstractItemModel& m, const ExportContext& ctx) {
    // The plain text is the CSV's table with tabs (see Note [tables other programs read]): a
    // spreadsheet gets numbers it can compute with; the HTML flavour shows the table as the
    // window does, for a document.
    auto tsvField = [](QString s) {
        s.replace(QLatin1Char('\t'), QLatin1Char(' '));
        s.replace(QLatin1Char('\n'), QLatin1Char(' '));
        return s;
    };
    QString tsv, html = QStringLiteral("<table><thead><tr>");
    for (int c = 0; c < m.columnCount(); ++c)
        html += QStringLiteral("<th>") + htmlEscape(m.headerData(c, Qt::Horizontal).toString()) +
                QStringLiteral("</th>");
    html += QStringLiteral("</tr></thead><tbody>");
    tsv += csvHeaders(m).join(QLatin1Char('\t')) + QLatin1Char('\n');
    for (int r = 0; r < m.rowCount(); ++r) {
        QStringList row;
        html += QStringLiteral("<tr>");
        for (int c = 0; c < m.columnCount(); ++c) {
            row << tsvField(cellText(m, r, c, true));
            html += QStringLiteral("<td>") + htmlEscape(cellText(m, r, c, false)) +
                    QStringLiteral("</td>");
        }
        html += QStringLiteral("</tr>");
        tsv += row.join(QLatin1Char('\t')) + QLatin1Char('\n');
    }
    html += QStringLiteral("</tbody></table><p><small>") +
            htmlEscape(ctx.lines().join(QStringLiteral(" · "))) + QStringLiteral("</small></p>");
    // The plain text is the table alone: pasted into a spreadsheet, "# Run:" lines after the
    // data became rows of it. The run and device travel in the HTML flavour's footer.
    auto* mime = new QMimeData;
    mime->setText(tsv);
    mime->setHtml(html);
    QApplication::clipboard()->setMimeData(mime);
}

void copyChartToClipboard(ExportableChart& chart, QSize size, const ExportContext& ctx) {
    QApplication::clipboard()->setImage(renderChartImage(chart, size, ctx));
}

bool exportReport(const QString& path, const QList<ReportPart>& parts, const ExportContext& ctx,
                  QSize chartSize, QString* error) {
    const QFileInfo info(path);
    const QString filesName = info.completeBaseName() + QStringLiteral("_files");
    QDir dir = info.absoluteDir();
    if (!dir.mkpath(filesName)) {
        setError(error, QObject::tr("cannot create %1").arg(dir.filePath(filesName)));
        return false;
    }
    QString md;
    md += QStringLiteral("# TrainScope report: ") + mdText(ctx.runTitle()) + QStringLiteral("\n\n");
    md += QStringLiteral("## Environment\n\n");
    for (const QString& line : ctx.lines())
        md += QStringLiteral("- ") + mdText(line) + QLatin1Char('\n');
    md += QLatin1Char('\n');
    int n = 0;
    for (const ReportPart& part : parts) {
        if (part.prepare) part.prepare();
        const QString title = withoutMnemonic(part.title);  // pane titles carry "&" for Alt+key
        md += QStringLiteral("## ") + mdText(title) + QStringLiteral("\n\n");
        if (part.chart) {
            const QString stem = QStringLiteral("%1-%2")
                                     .arg(++n, 2, 10, QLatin1Char('0'))
                                     .arg(part.chart->chartFileStem());
            for (const char* ext : {"png", "svg"}) {
                const QString file = dir.filePath(filesName + QLatin1Char('/') + stem +
                                                  QLatin1Char('.') + QLatin1String(ext));
                if (!exportChart(*part.chart, file, chartSize, ctx, error)) return false;
            }
            md += QStringLiteral("![%1](%2/%3.png)\n\n[SVG](%2/%3.svg)\n\n")
                      .arg(title, filesName, stem);
        }
        if (part.table) md += tableToMarkdown(*part.table, ctx, false) + QLatin1Char('\n');
    }
    const QString json = ctx.configurationJson.trimmed();
    if (!json.isEmpty() && json != QLatin1String("[]") && json != QLatin1String("{}"))
        md += QStringLiteral("## Configuration\n\n```json\n") + ctx.configurationJson +
              QStringLiteral("\n```\n");
    return writeText(path, md, error);
}

}  // namespace ts::ui
