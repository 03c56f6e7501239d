// Light and dark palettes and the presentation mode (large fonts, high-contrast charts).
// One instance per application; charts listen to `changed` and restyle themselves.
#pragma once

#include <QFont>
#include <QObject>
#include <QString>

namespace ts::ui {

enum class ThemeMode { System, Light, Dark };
QString themeModeKey(ThemeMode m);  // "system", "light", "dark"
ThemeMode themeModeFromKey(const QString& key);

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
