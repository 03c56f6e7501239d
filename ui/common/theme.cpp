#include "ui/common/theme.h"

#include <QApplication>
#include <QPainter>
#include <QPainterPath>
#include <QPalette>
#include <QProxyStyle>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleOption>
#include <cmath>

namespace ts::ui {

QString themeModeKey(ThemeMode m) {
    switch (m) {
        case ThemeMode::Light:
            return QStringLiteral("light");
        case ThemeMode::Dark:
            return QStringLiteral("dark");
        case ThemeMode::System:
            break;
    }
    return QStringLiteral("system");
}

ThemeMode themeModeFromKey(const QString& key) {
    if (key == QLatin1String("light")) return ThemeMode::Light;
    if (key == QLatin1String("dark")) return ThemeMode::Dark;
    return ThemeMode::System;
}

double contrastRatio(const QColor& a, const QColor& b) {
    auto luminance = [](const QColor& c) {
        auto lin = [](double v) {
            return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
        };
        return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF());
    };
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

namespace {

// Fusion, with check-box indicators whose border shows on any field.
class ThemeStyle : public QProxyStyle {
public:
    using QProxyStyle::QProxyStyle;
    void drawPrimitive(PrimitiveElement pe, const QStyleOption* opt, QPainter* p,
                       const QWidget* w) const override {
        QProxyStyle::drawPrimitive(pe, opt, p, w);
        if (pe != PE_IndicatorCheckBox) return;
        p->save();
        p->setRenderHint(QPainter::Antialiasing, false);
        p->setBrush(Qt::NoBrush);
        QColor border = Theme::indicatorBorder(opt->palette);
        if (!(opt->state & State_Enabled)) border.setAlphaF(0.5);
        p->setPen(border);
        p->drawRect(opt->rect.adjusted(0, 0, -1, -1));
        p->restore();
    }
};

QColor mix(const QColor& a, const QColor& b, double t) {
    return QColor::fromRgbF(float(a.redF() * t + b.redF() * (1 - t)),
                            float(a.greenF() * t + b.greenF() * (1 - t)),
                            float(a.blueF() * t + b.blueF() * (1 - t)));
}

QPixmap drawGlyph(Glyph g, const QColor& color, int size, qreal dpr) {
    QPixmap pm(QSize(size, size) * dpr);
    pm.setDevicePixelRatio(dpr);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(color);
    const qreal m = size * 0.18, s = size - 2 * m;
    if (g == Glyph::Run) {
        QPainterPath path;
        path.moveTo(m + s * 0.1, m);
        path.lineTo(m + s, m + s / 2);
        path.lineTo(m + s * 0.1, m + s);
        path.closeSubpath();
        p.drawPath(path);
    } else {
        p.drawRoundedRect(QRectF(m + s * 0.05, m + s * 0.05, s * 0.9, s * 0.9), s * 0.12, s * 0.12);
    }
    return pm;
}

}  // namespace

QColor Theme::indicatorBorder(const QPalette& p) {
    return mix(p.color(QPalette::Text), p.color(QPalette::Base), 0.6);
}

QColor Theme::glyphColor(Glyph g) const {
    const bool dark = isDark();
    if (g == Glyph::Run) return dark ? QColor(0x66, 0xbb, 0x6a) : QColor(0x2e, 0x7d, 0x32);
    return dark ? QColor(0xef, 0x53, 0x50) : QColor(0xc6, 0x28, 0x28);
}

QIcon Theme::icon(Glyph g) const {
    QIcon icon;
    // Dimmed, yet drawn: a disabled Run (while a run goes on) must still be found.
    const QPalette pal = QApplication::palette();
    const QColor disabled = mix(pal.color(QPalette::WindowText), pal.color(QPalette::Window), 0.45);
    for (int size : {16, 22, 24, 32, 48}) {
        icon.addPixmap(drawGlyph(g, glyphColor(g), size, 1.0), QIcon::Normal);
        icon.addPixmap(drawGlyph(g, disabled, size, 1.0), QIcon::Disabled);
    }
    return icon;
}

Theme& Theme::instance() {
    static Theme* theme = new Theme;  // lives as long as the application
    return *theme;
}

Theme::Theme() {
    // The platform's palette before we touch it tells whether the desktop is dark.
    const QPalette p = QApplication::palette();
    systemDark_ = p.color(QPalette::Window).lightnessF() < 0.5;
    baseFont_ = QApplication::font();
    // Fusion draws the same on every platform and honours the palettes below.
    if (QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion")))
        QApplication::setStyle(new ThemeStyle(fusion));
}

bool Theme::isDark() const {
    return !printColours_ &&
           (mode_ == ThemeMode::Dark || (mode_ == ThemeMode::System && systemDark_));
}

void Theme::setPrintColours(bool on) {
    if (printColours_ == on) return;
    printColours_ = on;
    Q_EMIT changed();  // the charts restyle; the application palette is left as it is
}

void Theme::setMode(ThemeMode mode) {
    mode_ = mode;
    apply();
}

void Theme::setPresentation(bool on) {
    presentation_ = on;
    apply();
}

static QPalette darkPalette(bool highContrast) {
    QPalette p;
    const QColor window = highContrast ? QColor(0x10, 0x10, 0x10) : QColor(0x2b, 0x2d, 0x30);
    const QColor base = highContrast ? QColor(0x00, 0x00, 0x00) : QColor(0x1e, 0x1f, 0x22);
    const QColor text = highContrast ? QColor(0xff, 0xff, 0xff) : QColor(0xe6, 0xe6, 0xe6);
    const QColor disabled = highContrast ? QColor(0x9a, 0x9a, 0x9a) : QColor(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, QColor(0x3c, 0x3f, 0x41));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x55, 0x55));
    p.setColor(QPalette::Link, QColor(0x64, 0xb5, 0xf6));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Light, window.lighter(150));
    p.setColor(QPalette::Midlight, window.lighter(125));
    p.setColor(QPalette::Mid, window.darker(120));
    p.setColor(QPalette::Dark, window.darker(160));
    p.setColor(QPalette::Shadow, Qt::black);
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    // Disabled fields keep the dark background instead of Fusion's light default.
    p.setColor(QPalette::Disabled, QPalette::Base, window);
    p.setColor(QPalette::Disabled, QPalette::Button, window);
    p.setColor(QPalette::Disabled, QPalette::Window, window);
    return p;
}

static QPalette lightPalette(bool highContrast) {
    QPalette p = QStyleFactory::create(QStringLiteral("Fusion"))->standardPalette();
    if (highContrast) {
        // Active and inactive only: disabled text must still look disabled.
        for (auto group : {QPalette::Active, QPalette::Inactive}) {
            p.setColor(group, QPalette::Window, Qt::white);
            p.setColor(group, QPalette::Base, Qt::white);
            p.setColor(group, QPalette::WindowText, Qt::black);
            p.setColor(group, QPalette::Text, Qt::black);
            p.setColor(group, QPalette::ButtonText, Qt::black);
        }
    }
    return p;
}

void Theme::apply() {
    QApplication::setPalette(isDark() ? darkPalette(presentation_) : lightPalette(presentation_));
    QFont f = baseFont_;
    if (f.pointSizeF() > 0)
        f.setPointSizeF(baseFont_.pointSizeF() * fontScale());
    else
        f.setPixelSize(static_cast<int>(baseFont_.pixelSize() * fontScale()));
    QApplication::setFont(f);
    Q_EMIT changed();
}

}  // namespace ts::ui
