// Light and dark palettes and the presentation mode (large fonts, high-contrast charts).
// One instance per application; charts listen to `changed` and restyle themselves.
#pragma once

#include <QColor>
#include <QFont>
#include <QIcon>
#include <QObject>
#include <QString>

namespace ts::ui {

enum class ThemeMode { System, Light, Dark };
QString themeModeKey(ThemeMode m);  // "system", "light", "dark"
ThemeMode themeModeFromKey(const QString& key);

// WCAG's contrast ratio of two colours: 1 (the same) to 21 (black on white); text wants 4.5,
// icons and control borders 3.
double contrastRatio(const QColor& a, const QColor& b);

// The toolbar's glyphs that the platform's icon set draws too dark for a dark palette.
enum class Glyph { Run, Stop };

class Theme : public QObject {
    Q_OBJECT
public:
    static Theme& instance();

    void setMode(ThemeMode mode);
    void setPresentation(bool on);
    ThemeMode mode() const { return mode_; }
    bool presentation() const { return presentation_; }
    bool isDark() const;
    // Font scale of presentation mode (1 otherwise).
    double fontScale() const { return presentation_ ? 1.45 : 1.0; }
    // `g` drawn in the current palette's colours (redrawn by whoever listens to `changed`).
    QIcon icon(Glyph g) const;
    QColor glyphColor(Glyph g) const;
    // The border of a check box's indicator: Fusion's is darker than the window, invisible
    // on a dark field; this one keeps 3:1 against the field in every palette.
    static QColor indicatorBorder(const QPalette& p);

Q_SIGNALS:
    void changed();

private:
    Theme();
    void apply();
    ThemeMode mode_ = ThemeMode::System;
    bool presentation_ = false;
    bool systemDark_ = false;
    QFont baseFont_;
};

}  // namespace ts::ui
