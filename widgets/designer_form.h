#pragma once

// The designer's form: DesignerView's members that build its fields, fill them from the study
// document and write their edits back are in widgets/designer_form.cpp (declared in
// widgets/designer_view.h); here is what that file shares with designer_view.cpp.

#include <QStringList>

#include <string>
#include <vector>

namespace lmk::widgets::designer_form {

// The core's names (the study's profiles, benchmarks) as a QStringList.
QStringList to_qt(const std::vector<std::string>& values);

}  // namespace lmk::widgets::designer_form
