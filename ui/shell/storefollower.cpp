#include "ui/shell/storefollower.h"

#include <QFileInfo>

namespace ts::ui {

StoreFollower::StoreFollower(QObject* parent, int intervalMs) : QObject(parent) {
    timer_.setInterval(intervalMs);
    connect(&timer_, &QTimer::timeout, this, &StoreFollower::check);
}

QString StoreFollower::signatureOf(const QString& path) {
    QString s;
    for (const QString& p : {path, path + QStringLiteral("-wal")}) {
        const QFileInfo f(p);
        s += f.exists()
                 ? QStringLiteral("%1@%2;").arg(f.size()).arg(f.lastModified().toMSecsSinceEpoch())
                 : QStringLiteral("-;");
    }
    return s;
}

void StoreFollower::markRead(const QString& path) {
    path_ = path;
    seen_ = signatureOf(path);
    if (!path_.isEmpty() && !timer_.isActive()) timer_.start();
}

void StoreFollower::check() {
    if (path_.isEmpty()) return;
    const QString now = signatureOf(path_);
    if (now == seen_) return;
    seen_ = now;  // one refresh per change; History's read marks it again
    Q_EMIT changed();
}

}  // namespace ts::ui
