#pragma once

// What the widget tests do to a form as a user would: find a field by its object name, type
// into it (textEdited fires, as it does for a user).

#include <QLineEdit>
#include <QString>
#include <QWidget>
#include <QtTest>

namespace lmk::widgets::testing {

// The child widget named `name`; the test stops when there is none.
template <typename T>
T* child(const QWidget& parent, const QString& name) {
  T* widget = parent.findChild<T*>(name);
  if (widget == nullptr) qFatal("no widget named %s", qPrintable(name));
  return widget;
}

// Replaces the line's text by typing `text` (empty: the line is cleared).
inline void type_into(QLineEdit* line, const QString& text) {
  line->selectAll();
  QTest::keyClick(line, Qt::Key_Backspace);
  QTest::keyClicks(line, text);
}

}  // namespace lmk::widgets::testing
