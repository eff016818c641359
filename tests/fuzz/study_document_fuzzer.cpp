// libFuzzer target for the workbench's study config document (widgets/study_document), which
// reads TOML files the user opens and rewrites them keeping their text. On any input it must
// not crash; a document it accepts must read back to the same meaning from its own text, and
// must stay readable after an edit of a value and of the sweep axes.
#include <QString>
#include <QVariant>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "widgets/study_document.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using lmk::widgets::StudyDocument;
  const QString text =
      QString::fromUtf8(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
  StudyDocument document;
  QString error;
  if (!document.load_text(text, &error, QStringLiteral("fuzz.toml"))) {
    check(!error.isEmpty());
    return 0;
  }
  StudyDocument again;
  check(again.load_text(document.to_text(), &error));
  check(again.to_variant() == document.to_variant());

  for (const QString& profile : document.profiles())
    (void)document.effective_value(profile, QStringLiteral("pretrain"),
                                   QStringLiteral("learning_rate"));
  document.set_value({QStringLiteral("pretrain"), QStringLiteral("learning_rate")}, 0.5);
  document.set_sweep_axes(document.sweep_axes());
  StudyDocument edited;
  check(edited.load_text(document.to_text(), &error));
  check(edited.value({QStringLiteral("pretrain"), QStringLiteral("learning_rate")}) ==
        QVariant(0.5));
  return 0;
}
