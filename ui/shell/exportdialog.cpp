#include "ui/shell/exportdialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ui/common/theme.h"

namespace ts::ui {

ExportDialog::ExportDialog(Kind kind, const QString& suggestedPath, QSize currentSize,
                           QWidget* parent)
    : QDialog(parent), kind_(kind) {
    setWindowTitle(kind == Kind::Chart   ? tr("Export Chart")
                   : kind == Kind::Table ? tr("Export Table")
                                         : tr("Export Report"));
    auto* form = new QFormLayout;
    format_ = new QComboBox(this);
    if (kind == Kind::Chart) {
        format_->addItem(tr("PNG image"), QStringLiteral("png"));
        format_->addItem(tr("SVG vector image"), QStringLiteral("svg"));
        format_->addItem(tr("PDF document"), QStringLiteral("pdf"));
    } else if (kind == Kind::Table) {
        format_->addItem(tr("CSV (spreadsheets, pandas)"), QStringLiteral("csv"));
        format_->addItem(tr("Markdown table"), QStringLiteral("md"));
        // See Note [tables other programs read]: the CSV is the table alone.
        environment_ =
            new QCheckBox(tr("&Environment beside it, as JSON (name.environment.json)"), this);
        environment_->setObjectName(QStringLiteral("environmentBeside"));
        environment_->setChecked(true);
        environment_->setToolTip(
            tr("The CSV holds the table alone (one header line, numbers), as pandas and "
               "spreadsheets read it; the device, driver, CUDA, LibTorch, commit and "
               "configuration go to a JSON file beside it"));
    } else {
        format_->addItem(tr("Markdown report with images"), QStringLiteral("md"));
    }
    const int fi = format_->findData(QFileInfo(suggestedPath).suffix().toLower());
    if (fi >= 0) format_->setCurrentIndex(fi);
    form->addRow(tr("&Format:"), format_);
    if (environment_) {
        form->addRow(QString(), environment_);
        auto csvOnly = [this] {
            environment_->setEnabled(format_->currentData().toString() == QLatin1String("csv"));
        };
        connect(format_, &QComboBox::currentIndexChanged, this, csvOnly);
        csvOnly();
    }

    if (kind != Kind::Table) {
        preset_ = new QComboBox(this);
        preset_->addItem(
            tr("As on screen (%1 × %2)").arg(currentSize.width()).arg(currentSize.height()),
            currentSize);
        preset_->addItem(tr("Slide, 1280 × 720"), QSize(1280, 720));
        preset_->addItem(tr("Full HD, 1920 × 1080"), QSize(1920, 1080));
        preset_->addItem(tr("Paper column, 800 × 500"), QSize(800, 500));
        preset_->addItem(tr("Custom"), QSize());
        width_ = new QSpinBox(this);
        height_ = new QSpinBox(this);
        for (QSpinBox* s : {width_, height_}) {
            s->setRange(100, 20000);
            s->setSuffix(tr(" px"));
        }
        width_->setValue(kind == Kind::Report ? 1200 : currentSize.width());
        height_->setValue(kind == Kind::Report ? 700 : currentSize.height());
        if (kind == Kind::Report) preset_->setCurrentIndex(4);
        auto* sizeRow = new QHBoxLayout;
        sizeRow->addWidget(width_);
        sizeRow->addWidget(new QLabel(QStringLiteral("×"), this));
        sizeRow->addWidget(height_);
        form->addRow(kind == Kind::Report ? tr("Chart &size:") : tr("&Size:"), preset_);
        form->addRow(QString(), sizeRow);
        colours_ = new QComboBox(this);
        colours_->setObjectName(QStringLiteral("colours"));
        colours_->addItem(tr("As on screen"), false);
        colours_->addItem(tr("Light, for print"), true);
        colours_->setToolTip(
            tr("A dark theme's charts on white paper: light background, dark text"));
        if (Theme::instance().isDark() &&
            QSettings().value(QStringLiteral("export/printColours")).toBool())
            colours_->setCurrentIndex(1);
        if (!Theme::instance().isDark()) colours_->setEnabled(false);  // already light
        form->addRow(tr("&Colours:"), colours_);
        connect(preset_, &QComboBox::currentIndexChanged, this, [this] {
            const QSize s = preset_->currentData().toSize();
            if (s.isValid()) {
                // Both at once: the first alone would not match the preset and flip it to Custom.
                const QSignalBlocker bw(width_), bh(height_);
                width_->setValue(s.width());
                height_->setValue(s.height());
            }
        });
        auto toCustom = [this] {
            const QSize s(width_->value(), height_->value());
            if (preset_->currentData().toSize() != s) {
                const QSignalBlocker block(preset_);
                preset_->setCurrentIndex(preset_->count() - 1);
            }
        };
        connect(width_, &QSpinBox::valueChanged, this, toCustom);
        connect(height_, &QSpinBox::valueChanged, this, toCustom);
    }

    path_ = new QLineEdit(suggestedPath, this);
    path_->setMinimumWidth(420);
    auto* browse = new QPushButton(tr("&Browse…"), this);
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(path_);
    pathRow->addWidget(browse);
    auto* fileLabel = new QLabel(tr("&File:"), this);
    fileLabel->setBuddy(path_);  // a row label with no buddy would show the "&"
    form->addRow(fileLabel, pathRow);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString ext = format_->currentData().toString();
        const QString p = QFileDialog::getSaveFileName(
            this, windowTitle(), path_->text(),
            format_->currentText() + QStringLiteral(" (*.") + ext + QLatin1Char(')'));
        if (!p.isEmpty()) path_->setText(p);
        syncSuffix();
    });
    connect(format_, &QComboBox::currentIndexChanged, this, &ExportDialog::syncSuffix);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
    buttons->button(QDialogButtonBox::Save)->setDefault(true);
    syncSuffix();
}

void ExportDialog::syncSuffix() {
    const QString ext = format_->currentData().toString();
    QFileInfo fi(path_->text());
    if (fi.suffix().toLower() != ext)
        path_->setText(fi.dir().filePath(fi.completeBaseName() + QLatin1Char('.') + ext));
}

QString ExportDialog::path() const { return path_->text(); }

bool ExportDialog::printColours() const {
    const bool on = colours_ && colours_->currentData().toBool();
    if (colours_ && colours_->isEnabled())
        QSettings().setValue(QStringLiteral("export/printColours"), on);
    return on;
}

bool ExportDialog::environmentBeside() const { return environment_ && environment_->isChecked(); }

QSize ExportDialog::size() const {
    return width_ ? QSize(width_->value(), height_->value()) : QSize();
}

}  // namespace ts::ui
