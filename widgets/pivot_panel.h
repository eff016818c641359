#pragma once

// The results view's Pivot tab: the paper's table of the runs the filter selects (rows of model
// variants × benchmark columns, intervals, marks against a baseline row, the significant best
// per column), its Rows and Baseline choices, a note on how to read it and the legend. The view
// reads the table off the GUI thread (compute_pivot) with the panel's choices and shows it here.

#include <QString>
#include <QWidget>

#include "widgets/pivot_model.h"

class QComboBox;
class QLabel;
class QTableView;

namespace lmk::widgets {

class PivotPanel : public QWidget {
  Q_OBJECT
 public:
  explicit PivotPanel(QWidget* parent = nullptr);

  PivotModel* model() const { return model_; }
  QTableView* table() const { return table_; }

  PivotRows rows() const;
  // Selects `rows`; changed() when that is another choice.
  void set_rows(PivotRows rows);
  // The row marked against (empty: none), and whether the user chose it (else the CLS row is).
  const QString& baseline() const { return baseline_; }
  bool baseline_chosen() const { return baseline_chosen_; }
  // Chooses the baseline row (as the user does in its box); no changed().
  void set_baseline(const QString& row);
  // The note over the table for `metric` (empty: the store has no evaluation results).
  void describe(const QString& metric);
  // Shows a computed table: its rows as the baseline's choices, the table, its legend.
  void show_table(PivotTable table);

 signals:
  // The user chose other rows or another baseline: the pivot is due again.
  void changed();

 private:
  PivotModel* model_ = nullptr;
  QTableView* table_ = nullptr;
  QComboBox* rows_ = nullptr;
  QComboBox* baseline_box_ = nullptr;
  QLabel* note_ = nullptr;
  QLabel* legend_ = nullptr;
  QString baseline_;
  bool baseline_chosen_ = false;
};

}  // namespace lmk::widgets
