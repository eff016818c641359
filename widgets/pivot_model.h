#pragma once

// The results browser's pivot: the paper's table (core/eval/pivot.h) of one metric over the eval
// runs the filter selects, each cell the mean ± half its 95 % interval over the queries, rows
// marked ▲ / ▼ where they are significantly above / below a chosen baseline row, and the best of
// a column marked only where it beats every other row significantly (else a tied best). Tests:
// Fisher's randomization test over the queries of all pairs of rows, Holm–Bonferroni over the
// table (core/eval/comparison.h); the SQL that reads its inputs is here.

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>
#include <vector>

#include "core/eval/comparison.h"
#include "core/eval/pivot.h"
#include "widgets/results_model.h"

namespace lmk {
class ResultsStore;
}

namespace lmk::widgets {

using PivotRows = lmk::PivotRows;

// Paired tests are run for at most this many pairs of cells in one pivot; a larger pivot (a
// store of many experiments: filter it) shows its intervals without tests, and says so.
inline constexpr int kMaxPivotTests = 400;

struct PivotTable {
  QString row_header;
  QStringList rows;
  QStringList columns;
  QVector<QVector<double>> values;    // [row][column]: the mean of its runs; NaN: no result
  QVector<QVector<QString>> sources;  // [row][column]: the runs behind the value
  lmk::ComparisonTable comparison;    // the cells' intervals and the tests between rows
  QString baseline;                   // the row marked against; empty: none
};

// The pivot of `metric` over the eval runs `filter` selects, compared against `baseline` (a row
// label; empty or absent: no baseline markers).
PivotTable compute_pivot(const ResultsStore& db, const RunFilter& filter, const QString& metric,
                         PivotRows rows, const QString& baseline = QString());

// Shows a PivotTable: column 0 the row labels, then one column per benchmark, each cell
// "mean ± half-width" with ▲ / ▼ against the baseline, and " *" (bold) on a column's significant
// best or " (tied best)" on a highest mean that is not. Edit role: the mean.
class PivotModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;

  // Shows `table`; returns false, leaving the model (and its view's state) alone, when it shows
  // the same table already.
  bool set_table(PivotTable table);
  const PivotTable& table() const { return table_; }
  // The value at row `row_label`, benchmark `column_label`; NaN when there is none.
  double pivot_value(const QString& row_label, const QString& column_label) const;
  // The row label of the highest mean of `column_label` (the first on a tie), or empty.
  QString best_row(const QString& column_label) const;
  // Whether that row beats every other row of the column significantly.
  bool best_is_significant(const QString& column_label) const;
  // The legend of the table's intervals and tests (under the pivot).
  QString legend() const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  PivotTable table_;
  // Per column, computed once per table (data() is called for every cell and role): the row of
  // the highest mean, and whether it beats every other row significantly.
  std::vector<std::optional<size_t>> best_rows_;
  std::vector<bool> best_significant_;
};

}  // namespace lmk::widgets
