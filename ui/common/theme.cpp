#include "common/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace ts::ui {

QString themeModeKey(ThemeMode m) {
    switch (m) {
        case ThemeMode::Light: return QStringLiteral("light");
        case ThemeMode::Dark: return QStringLiteral("dark");
        case ThemeMode::System: break;
    }
    return QStringLiteral("system");
}

ThemeMode themeModeFromKey(const QString& key) {
    if (key == QLatin1String("light")) return ThemeMode::Light;
    if (key == QLatin1String("dark")) return ThemeMode::Dark;
    return ThemeMode::System;
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
    if (QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"))) QApplication::setStyle(fusion);
}

bool Theme::isDark() const {
    return mode_ == ThemeMode::Dark || (mode_ == ThemeMode::System && systemDark_);
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
    if (f.pointSizeF() > 0) f.setPointSizeF(baseFont_.pointSizeF() * fontScale());
    else f.setPixelSize(static_cast<int>(baseFont_.pixelSize() * fontScale()));
    QApplication::setFont(f);
    Q_EMIT changed();
}

}  // namespace ts::ui
