// The window's look: presentation mode shows the results alone and gives the layout back as it
// was (never saving its own); in both themes the Run/Stop icons and an unchecked check box's
// border stand out from what they are drawn on.
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QDockWidget>
#include <QSettings>
#include <QStackedWidget>
#include <QStyleOptionButton>
#include <QtTest>

#include "common/windowtesting.h"
#include "ui/common/theme.h"
#include "ui/shell/mainwindow.h"

using namespace ts::ui;

namespace {

// The highest contrast of any pixel of `img` inside `rect` against `against`.
double maxContrast(const QImage& img, const QRect& rect, const QColor& against) {
    double best = 1;
    for (int y = rect.top(); y <= rect.bottom(); ++y)
        for (int x = rect.left(); x <= rect.right(); ++x)
            best = std::max(best, contrastRatio(img.pixelColor(x, y), against));
    return best;
}

// The mean colour of an icon's drawn pixels.
QColor inkOf(const QIcon& icon, QIcon::Mode mode = QIcon::Normal) {
    const QImage img = icon.pixmap(32, mode).toImage().convertToFormat(QImage::Format_ARGB32);
    double r = 0, g = 0, b = 0, n = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            const QColor c = img.pixelColor(x, y);
            if (c.alpha() < 200) continue;
            r += c.redF(), g += c.greenF(), b += c.blueF(), ++n;
        }
    return n ? QColor::fromRgbF(float(r / n), float(g / n), float(b / n)) : QColor();
}

}  // namespace

class TestPresentation : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void iconsStandOutInBothThemes_data();
    void iconsStandOutInBothThemes();
    void checkBoxBorderShowsInBothThemes_data();
    void checkBoxBorderShowsInBothThemes();
    void presentationHidesDocksAndRestoresLayout();
    void presentationLayoutIsNeverSaved();

private:
    QTemporaryDir dir_;
    std::unique_ptr<MainWindow> w_;
};

void TestPresentation::initTestCase() {
    QVERIFY(dir_.isValid());
    w_ = freshWindow("tst_presentation", dir_.filePath("results.db"));
    QVERIFY(QTest::qWaitForWindowExposed(w_.get()));
}

void TestPresentation::cleanupTestCase() {
    Theme::instance().setMode(ThemeMode::Light);
    w_.reset();
}

void TestPresentation::iconsStandOutInBothThemes_data() {
    QTest::addColumn<int>("mode");
    QTest::addColumn<bool>("presentation");
    QTest::newRow("light") << int(ThemeMode::Light) << false;
    QTest::newRow("dark") << int(ThemeMode::Dark) << false;
    QTest::newRow("dark, presentation") << int(ThemeMode::Dark) << true;
}

void TestPresentation::iconsStandOutInBothThemes() {
    QFETCH(int, mode);
    QFETCH(bool, presentation);
    Theme::instance().setMode(ThemeMode(mode));
    Theme::instance().setPresentation(presentation);
    const QColor window = QApplication::palette().color(QPalette::Window);
    for (QAction* a : {w_->actions()->runAction(), w_->actions()->stopAction()}) {
        const QColor ink = inkOf(a->icon());
        QVERIFY2(ink.isValid(), qPrintable(a->text()));
        const double c = contrastRatio(ink, window);
        QVERIFY2(
            c >= 3.0,
            qPrintable(
                QStringLiteral("%1 icon: contrast %2 against the window").arg(a->text()).arg(c)));
        // Disabled still shows, and looks unlike the enabled one.
        const QColor off = inkOf(a->icon(), QIcon::Disabled);
        QVERIFY(contrastRatio(off, window) >= 2.0);
        QVERIFY(off != ink);
    }
    Theme::instance().setPresentation(false);
}

void TestPresentation::checkBoxBorderShowsInBothThemes_data() { iconsStandOutInBothThemes_data(); }

void TestPresentation::checkBoxBorderShowsInBothThemes() {
    QFETCH(int, mode);
    QFETCH(bool, presentation);
    Theme::instance().setMode(ThemeMode(mode));
    Theme::instance().setPresentation(presentation);
    QCheckBox box(QStringLiteral("bf16"));
    box.setChecked(false);
    box.resize(box.sizeHint());
    const QImage img = box.grab().toImage();
    QStyleOptionButton opt;
    opt.initFrom(&box);
    const QRect indicator = box.style()->subElementRect(QStyle::SE_CheckBoxIndicator, &opt, &box);
    QVERIFY(indicator.isValid() && img.rect().contains(indicator));
    const QPalette pal = QApplication::palette();
    // The border against the field inside it and against the window around it.
    QVERIFY2(maxContrast(img, indicator, pal.color(QPalette::Base)) >= 3.0,
             "the indicator's border is lost in its field");
    QVERIFY2(maxContrast(img, indicator, pal.color(QPalette::Window)) >= 3.0,
             "the indicator's border is lost in the window");
    QVERIFY(contrastRatio(Theme::indicatorBorder(pal), pal.color(QPalette::Base)) >= 3.0);
    Theme::instance().setPresentation(false);
}

void TestPresentation::presentationHidesDocksAndRestoresLayout() {
    Theme::instance().setMode(ThemeMode::Light);
    auto* experiment = w_->findChild<QDockWidget*>(QStringLiteral("experimentDock"));
    auto* history = w_->findChild<QDockWidget*>(QStringLiteral("historyDock"));
    auto* log = w_->findChild<QDockWidget*>(QStringLiteral("logDock"));
    auto* views = w_->findChild<QStackedWidget*>(QStringLiteral("labViews"));
    QVERIFY(experiment && history && log && views);
    QTest::qWait(50);
    const QSize expBefore = experiment->size(), histBefore = history->size(),
                logBefore = log->size();
    const int viewsBefore = views->height();
    QVERIFY(experiment->isVisible() && history->isVisible() && log->isVisible());
    const double font = QApplication::font().pointSizeF();

    w_->presentation()->setActive(true);
    QVERIFY(w_->presentation()->isActive());
    QVERIFY(!experiment->isVisible() && !history->isVisible() && !log->isVisible());
    QVERIFY(QApplication::font().pointSizeF() > font * 1.3);
    // The results take the window: far taller and wider than beside and above the docks.
    QTRY_VERIFY(views->height() > viewsBefore + histBefore.height() / 2);
    QTRY_VERIFY(views->width() > w_->width() * 0.9);

    w_->presentation()->setActive(false);
    QVERIFY(!w_->presentation()->isActive());
    QCOMPARE(QApplication::font().pointSizeF(), font);
    QTRY_VERIFY(experiment->isVisible() && history->isVisible() && log->isVisible());
    QTRY_COMPARE(experiment->size(), expBefore);
    QTRY_COMPARE(history->size(), histBefore);
    QTRY_COMPARE(log->size(), logBefore);
    QTRY_COMPARE(views->height(), viewsBefore);

    // The View menu's action does the same.
    const auto act = w_->findChildren<QAction*>();
    QAction* presentation = nullptr;
    for (QAction* a : act)
        if (a->text() == QStringLiteral("&Presentation Mode")) presentation = a;
    QVERIFY(presentation);
    presentation->trigger();
    QVERIFY(w_->presentation()->isActive() && !experiment->isVisible());
    presentation->trigger();
    QTRY_COMPARE(experiment->size(), expBefore);
}

void TestPresentation::presentationLayoutIsNeverSaved() {
    QByteArray before;
    QSize dockBefore;
    {
        MainWindow a(MainWindow::Options{dir_.filePath("results.db"), true});
        a.resize(1300, 850);
        a.show();
        QVERIFY(QTest::qWaitForWindowExposed(&a));
        QTest::qWait(50);
        before = a.saveState();
        dockBefore = a.findChild<QDockWidget*>(QStringLiteral("experimentDock"))->size();
        a.presentation()->setActive(true);
        a.close();  // saves the settings while presenting
    }
    QCOMPARE(QSettings().value(QStringLiteral("window/state")).toByteArray(), before);
    // The next start presents again, and leaving gives the user's layout back.
    MainWindow b(MainWindow::Options{dir_.filePath("results.db"), true});
    b.show();
    QVERIFY(QTest::qWaitForWindowExposed(&b));
    QVERIFY(b.presentation()->isActive());
    auto* dock = b.findChild<QDockWidget*>(QStringLiteral("experimentDock"));
    QVERIFY(!dock->isVisible());
    b.presentation()->setActive(false);
    QTRY_VERIFY(dock->isVisible());
    QTRY_COMPARE(dock->width(), dockBefore.width());
}

QTEST_MAIN(TestPresentation)
#include "tst_presentation.moc"
