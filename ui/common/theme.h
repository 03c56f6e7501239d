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
    // Charts in light colours whatever the window's theme, while an export that asked for
    // print colours is written (the window's own palette stays; see PrintColours).
    void setPrintColours(bool on);
    bool printColours() const { return printColours_; }
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
    bool printColours_ = false;
    bool systemDark_ = false;
    QFont baseFont_;
};

// Print colours for as long as it lives, when `on` and the theme is dark (else nothing).
class PrintColours {
public:
    explicit PrintColours(bool on) : on_(on && Theme::instance().isDark()) {
        if (on_) Theme::instance().setPrintColours(true);
    }
    ~PrintColours() {
        if (on_) Theme::instance().setPrintColours(false);
    }
    PrintColours(const PrintColours&) = delete;
    PrintColours& operator=(const PrintColours&) = delete;

private:
    bool on_;
};

}  // namespace ts::ui
