// trainscope-needs-libtorch: what the desktop menu's TrainScope shows when no LibTorch is found
// (the launcher, app/launcher.sh.in, starts it instead of the window when there is no terminal
// to print to). Qt alone, no LibTorch: the reason, and a button that runs
// trainscope-setup-torch with its output shown, then starts TrainScope.
//   trainscope-needs-libtorch SETUP_SCRIPT WINDOW_LAUNCHER TORCH_VERSION
#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFont>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QVBoxLayout>
#include <cstdio>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("TrainScope"));
    QApplication::setDesktopFileName(QStringLiteral("org.trainscope.TrainScope"));
    const QStringList args = QApplication::arguments();
    if (args.size() != 4) {
        std::fprintf(stderr, "usage: trainscope-needs-libtorch SETUP WINDOW TORCH_VERSION\n");
        return 2;
    }
    const QString setup = args[1], window = args[2], version = args[3];

    QDialog dialog;
    dialog.setWindowTitle(QObject::tr("TrainScope needs PyTorch"));
    auto* layout = new QVBoxLayout(&dialog);
    auto* text = new QLabel(
        QObject::tr("<p><b>TrainScope needs PyTorch %1's LibTorch</b>, which is not part of the "
                    "package, and none was found.</p>"
                    "<p><b>Install</b> puts it in a folder of your own (pip, from PyPI: about "
                    "3 GB, some minutes), the same as running <tt>trainscope-setup-torch</tt> in "
                    "a terminal. Or set <tt>TRAINSCOPE_PYTHON</tt> to a Python that has torch "
                    "%1, or <tt>TRAINSCOPE_LIBTORCH</tt> to its <tt>torch/lib</tt> folder.</p>")
            .arg(version));
    text->setWordWrap(true);
    text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(text);
    auto* log = new QPlainTextEdit;
    log->setReadOnly(true);
    log->setFont(QFont(QStringLiteral("monospace")));
    log->setMinimumSize(560, 180);
    log->setPlaceholderText(QObject::tr("What the installation does appears here."));
    layout->addWidget(log, 1);
    auto* buttons = new QDialogButtonBox;
    QPushButton* install =
        buttons->addButton(QObject::tr("&Install"), QDialogButtonBox::AcceptRole);
    QPushButton* start =
        buttons->addButton(QObject::tr("&Start TrainScope"), QDialogButtonBox::ActionRole);
    start->setEnabled(false);  // until PyTorch is installed
    QPushButton* close = buttons->addButton(QDialogButtonBox::Close);
    layout->addWidget(buttons);

    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    QObject::connect(&process, &QProcess::readyRead, [&] {
        log->appendPlainText(QString::fromLocal8Bit(process.readAll()).trimmed());
    });
    QObject::connect(&process, &QProcess::finished, [&](int code, QProcess::ExitStatus status) {
        const bool ok = status == QProcess::NormalExit && code == 0;
        log->appendPlainText(
            ok ? QObject::tr("\nDone.")
               : QObject::tr("\nThe installation failed (exit %1): see above.").arg(code));
        install->setEnabled(!ok);
        install->setText(QObject::tr("&Try again"));
        start->setEnabled(ok);
        close->setEnabled(true);
    });
    QObject::connect(install, &QPushButton::clicked, [&] {
        install->setEnabled(false);
        close->setEnabled(false);
        process.start(setup, {});
    });
    QObject::connect(start, &QPushButton::clicked, [&] {
        QProcess::startDetached(window, {});
        dialog.accept();
    });
    QObject::connect(close, &QPushButton::clicked, &dialog, &QDialog::reject);
    dialog.exec();
    if (process.state() != QProcess::NotRunning) process.kill();
    return 2;  // TrainScope itself did not start
}
