// Whose code a lab runs, as every panel that runs a training point offers it: TrainScope's
// model, the user's PyTorch code (a course checkout's folder or module:callable, and the
// interpreter), or — where the lab sweeps — both side by side. Check asks the Python runner
// what the code is, off the UI thread, and shows the answer or the user's traceback.
#pragma once

#include <QGroupBox>
#include <QJsonObject>
#include <QMap>
#include <vector>

#include "benchmark/benchmark.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace ts::ui {

class CodeChoice : public QGroupBox {
    Q_OBJECT
public:
    // What the user's code is for: a model (a training point), or one of the course's problems
    // found through its adapters (an attention function; DDP classes and a sharded optimizer).
    // For the latter, TrainScope's own implementations are chosen beside it in the lab's panel,
    // so the choice is the user's code alone, on or off.
    enum class Purpose { Model, Attention, DataParallel };
    // `both`: the two sources may be ticked together (a sweep over them); otherwise one of them.
    explicit CodeChoice(bool both, QWidget* parent = nullptr, Purpose purpose = Purpose::Model);

    std::vector<Source> sources() const;  // in order; empty when none is ticked
    // The user's code as the fields say it (the timeout and optimizer keep their defaults).
    PythonCode code() const;
    bool yours() const;  // the user's code is ticked

    // {"sources": [...], "code": "...", "python": "..."}; setState reads what it finds, and a
    // state without "sources" (saved before the field) means TrainScope's model.
    QJsonObject state() const;
    void setState(const QJsonObject& state);

    // The fields, for the panel's field registry and its validation.
    QGroupBox* sourceBox() const { return sourceBox_; }
    QLineEdit* codeEdit() const { return code_; }
    QLineEdit* pythonEdit() const { return python_; }
    // The field an engine message is about (a missing interpreter, code that is not there), or
    // null.
    QWidget* fieldFor(const QString& message) const;
    // Why the user's code cannot be what runs, said before Run (pythonCodeProblem); empty when it
    // may.
    QString problem() const;

Q_SIGNALS:
    void changed();

private:
    void check();
    void updateEnabled();

    bool both_;
    Purpose purpose_;
    QMap<Source, QCheckBox*> sources_;
    QGroupBox* sourceBox_;
    QLineEdit *code_, *python_;
    QPushButton* check_;
    QLabel* result_;
};

}  // namespace ts::ui
