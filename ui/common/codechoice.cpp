#include "ui/common/codechoice.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QToolButton>
#include <QtConcurrent/QtConcurrentRun>

#include "runtime/python_runner.h"
#include "ui/common/checkrow.h"
#include "ui/common/format.h"

namespace ts::ui {

CodeChoice::CodeChoice(bool both, QWidget* parent, Purpose purpose)
    : QGroupBox(tr("Code"), parent), both_(both), purpose_(purpose) {
    setObjectName(QStringLiteral("codeChoice"));
    auto* form = new QFormLayout(this);
    sourceBox_ = makeCheckRow(this, allSources(), sources_);
    sources_[Source::TrainScope]->setText(tr("TrainScope"));
    sources_[Source::TrainScope]->setToolTip(
        tr("TrainScope's own model: C++ on LibTorch, with its attention kernels and fused AdamW"));
    sources_[Source::Python]->setText(tr("your code (Python)"));
    sources_[Source::Python]->setToolTip(
        both ? tr("Your PyTorch model, imported by TrainScope's Python runner and timed the same "
                  "way (forward with "
                  "the loss, backward, optimizer; CUDA events). Tick both to compare them side by "
                  "side (Speedup).")
             : tr("Your PyTorch model, imported by TrainScope's Python runner and run the same "
                  "way"));
    sources_[Source::TrainScope]->setChecked(true);
    code_ = new QLineEdit(qstr(exampleCheckout()), this);  // a first Run has code to run
    code_->setPlaceholderText(tr("a course checkout's folder, or module:callable"));
    code_->setToolTip(
        tr("A course checkout (cs336_basics with BasicsTransformerLM, tests/adapters.py), "
           "module:callable or path/file.py:callable returning an nn.Module built from the point's "
           "vocab_size, context_length, d_model, num_layers, num_heads, d_ff, rope_theta"));
    auto* browse = new QToolButton(this);
    browse->setText(tr("…"));
    browse->setToolTip(tr("Choose a checkout's folder"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Your course checkout"), code_->text());
        if (!dir.isEmpty()) code_->setText(dir);
    });
    auto* codeRow = new QHBoxLayout;
    codeRow->setContentsMargins(0, 0, 0, 0);
    codeRow->addWidget(code_, 1);
    codeRow->addWidget(browse);
    python_ = new QLineEdit(this);
    python_->setPlaceholderText(qstr(defaultPython()));
    python_->setToolTip(tr("The Python interpreter that runs your code (it needs torch); empty: %1")
                            .arg(qstr(defaultPython())));
    check_ = new QPushButton(tr("Check"), this);
    check_->setToolTip(
        tr("Say what your code is (the interpreter, torch, the GPU, the model and optimizer, the "
           "course's adapters), or show the traceback of its import; nothing is run"));
    connect(check_, &QPushButton::clicked, this, &CodeChoice::check);
    auto* pyRow = new QHBoxLayout;
    pyRow->setContentsMargins(0, 0, 0, 0);
    pyRow->addWidget(python_, 1);
    pyRow->addWidget(check_);
    result_ = new QLabel(this);
    result_->setObjectName(QStringLiteral("codeCheck"));
    result_->setWordWrap(true);
    result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    result_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    result_->hide();
    auto* codeLabel = new QLabel(tr("Your c&ode:"), this);
    codeLabel->setBuddy(code_);
    auto* pyLabel = new QLabel(tr("P&ython:"), this);
    pyLabel->setBuddy(python_);
    if (purpose != Purpose::Model) {
        // TrainScope's own are ticked in the lab's panel; here only the user's, on or off.
        setTitle(purpose == Purpose::Attention ? tr("Your attention") : tr("Your DDP classes"));
        sources_[Source::TrainScope]->setChecked(false);
        sources_[Source::TrainScope]->hide();
        sources_[Source::Python]->setText(purpose == Purpose::Attention
                                              ? tr("run your attention (Python)")
                                              : tr("run your classes (Python)"));
        sources_[Source::Python]->setToolTip(
            purpose == Purpose::Attention
                ? tr("Your FlashAttention: a course checkout's get_flashattention_autograd_"
                     "function_pytorch and _triton (tests/adapters.py), a file of those adapter "
                     "functions, or module:Name (an autograd.Function or a callable (q, k, v, "
                     "is_causal) -> o on (batch·heads, seq, d)). Each is checked against float64 "
                     "before it is timed beside the implementations ticked above.")
                : tr("Your DDP classes and sharded optimizer: a course checkout's "
                     "tests/adapters.py (2025: get_ddp_individual_parameters, get_ddp_bucketed; "
                     "2026: get_ddp, get_fsdp), a file of those adapter functions, or "
                     "module:Name. Each is checked against single-process training before it is "
                     "timed beside the strategies ticked above."));
        code_->setPlaceholderText(
            tr("a course checkout's folder, a file of adapter functions, or "
               "module:Name"));
        code_->setToolTip(sources_[Source::Python]->toolTip());
    }
    form->addRow(purpose == Purpose::Model ? tr("Model code:") : tr("Code:"), sourceBox_);
    form->addRow(codeLabel, codeRow);
    form->addRow(pyLabel, pyRow);
    form->addRow(result_);

    for (Source src : allSources()) {
        connect(sources_[src], &QCheckBox::toggled, this, [this, src](bool on) {
            // One source where the lab runs one point: ticking one unticks the other.
            if (!both_ && on)
                for (Source other : allSources())
                    if (other != src) {
                        const QSignalBlocker block(sources_[other]);
                        sources_[other]->setChecked(false);
                    }
            updateEnabled();
            Q_EMIT changed();
        });
    }
    for (QLineEdit* e : {code_, python_})
        connect(e, &QLineEdit::textChanged, this, [this] {
            updateEnabled();
            Q_EMIT changed();
        });
    updateEnabled();
}

std::vector<Source> CodeChoice::sources() const {
    std::vector<Source> out;
    for (Source src : allSources())
        if (sources_[src]->isChecked()) out.push_back(src);
    return out;
}

bool CodeChoice::yours() const { return sources_[Source::Python]->isChecked(); }

PythonCode CodeChoice::code() const {
    PythonCode c;
    c.code = code_->text().trimmed().toStdString();
    c.python = python_->text().trimmed().toStdString();
    return c;
}

QJsonObject CodeChoice::state() const {
    QStringList names;
    for (Source src : sources()) names << qstr(toString(src));
    return {{QStringLiteral("sources"), QJsonArray::fromStringList(names)},
            {QStringLiteral("code"), code_->text()},
            {QStringLiteral("python"), python_->text()}};
}

void CodeChoice::setState(const QJsonObject& o) {
    const QSignalBlocker block(this);
    const QStringList wanted =
        o.contains(QLatin1String("sources")) ? stringsOf(o.value(QLatin1String("sources")))
        : purpose_ == Purpose::Model         ? QStringList{QStringLiteral("trainscope")}
                                             : QStringList{};
    for (Source src : allSources()) {
        const QSignalBlocker b(sources_[src]);
        sources_[src]->setChecked(wanted.contains(qstr(toString(src))));
    }
    if (!both_ && sources().size() > 1) {  // one point, one source: the user's code, as asked
        const QSignalBlocker b(sources_[Source::TrainScope]);
        sources_[Source::TrainScope]->setChecked(false);
    }
    if (sources().empty() && purpose_ == Purpose::Model) {
        const QSignalBlocker b(sources_[Source::TrainScope]);
        sources_[Source::TrainScope]->setChecked(true);
    }
    for (const auto& [key, edit] : {std::pair{"code", code_}, std::pair{"python", python_}})
        if (o.value(QLatin1String(key)).isString()) {
            const QSignalBlocker b(edit);
            edit->setText(o.value(QLatin1String(key)).toString());
        }
    updateEnabled();
}

QWidget* CodeChoice::fieldFor(const QString& m) const {
    if (m.startsWith(QLatin1String("--python"))) return python_;
    if (m.startsWith(QLatin1String("--code")) || m.contains(QLatin1String("Python source")) ||
        m.contains(QLatin1String("user's code")))
        return code_;
    if (m.contains(QLatin1String("torch.compile mode"))) return sourceBox_;
    return nullptr;
}

QString CodeChoice::problem() const {
    if (!yours() || code_->text().trimmed().isEmpty()) return {};
    const PythonCode c = code();
    return qstr(pythonCodeProblem(c.code, c.python, purpose_ != Purpose::Model));
}

void CodeChoice::updateEnabled() {
    code_->setEnabled(yours());
    python_->setEnabled(yours());
    check_->setEnabled(yours() && !code_->text().trimmed().isEmpty());
}

void CodeChoice::check() {
    const PythonCode c = code();
    check_->setEnabled(false);
    result_->setText(tr("Checking %1…").arg(code_->text().trimmed()));
    result_->show();
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher] {
        result_->setText(watcher->result().trimmed());
        updateEnabled();
        watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run([c, adapters = purpose_ != Purpose::Model] {
        CancelToken never;
        return qstr(checkPythonCode(c.code, c.optimizer, c.python, never, 120, adapters).text());
    }));
}

}  // namespace ts::ui
