#pragma once

// The results view's Config diff tab: the configs of the selected runs side by side, differing
// keys highlighted, "Show all keys" for the rest, and a note saying what is compared. The view
// reads the diff off the GUI thread (compute_config_diff) and shows it here.

#include <QWidget>

#include "widgets/results_model.h"

class QCheckBox;
class QLabel;
class QTableView;

namespace lmk::widgets {

class ConfigDiffPanel : public QWidget {
  Q_OBJECT
 public:
  // The diff shows this many runs at most (a table with a column per run).
  static constexpr int kMaxRuns = 50;

  explicit ConfigDiffPanel(QWidget* parent = nullptr);

  ConfigDiffModel* model() const { return model_; }
  QTableView* table() const { return table_; }

  // Fewer than two runs selected: an empty table and how to select.
  void show_hint();
  // The diff of `runs` runs is being read.
  void show_pending(int runs);
  // Shows a computed diff of the first kMaxRuns of `selected` runs.
  void show_diff(ConfigDiff diff, int selected);

 private:
  ConfigDiffModel* model_ = nullptr;
  QTableView* table_ = nullptr;
  QCheckBox* all_keys_ = nullptr;
  QLabel* note_ = nullptr;
};

}  // namespace lmk::widgets
