#include "widgets/pivot_model.h"

#include <QFont>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/eval/store_comparison.h"
#include "core/store/results_store.h"
#include "widgets/plot_data.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {
namespace {

QString text_of(const std::string& text) {
  return QString::fromStdString(text);
}

}  // namespace

PivotTable compute_pivot(const ResultsStore& db, const RunFilter& filter, const QString& metric,
                         PivotRows rows, const QString& baseline) {
  PivotTable table;
  table.row_header = text_of(lmk::build_pivot({}, rows).row_header);
  const lmk::Pivot pivot =
      lmk::build_pivot(lmk::pivot_inputs(db, metric.toStdString(), run_selection(filter)), rows);
  for (const std::string& row : pivot.rows) table.rows << text_of(row);
  for (const std::string& column : pivot.columns) table.columns << text_of(column);
  table.values.fill(QVector<double>(table.columns.size(), kNaN), table.rows.size());
  table.sources.fill(QVector<QString>(table.columns.size()), table.rows.size());
  for (int i = 0; i < table.rows.size(); ++i) {
    for (int j = 0; j < table.columns.size(); ++j) {
      const lmk::PivotCell& cell = pivot.cells[static_cast<size_t>(i)][static_cast<size_t>(j)];
      table.values[i][j] = cell.value;
      QStringList runs;
      for (size_t r = 0; r < cell.runs.size(); ++r)
        runs << QStringLiteral("#%1 %2").arg(cell.runs[r]).arg(text_of(cell.run_names[r]));
      table.sources[i][j] = runs.isEmpty()     ? QString()
                            : runs.size() == 1 ? QStringLiteral("run %1").arg(runs.first())
                                               : QStringLiteral("mean of %1 runs: %2")
                                                     .arg(runs.size())
                                                     .arg(runs.join(QStringLiteral(", ")));
    }
  }

  // Intervals and tests from the per-query results, read once per dataset and split.
  std::map<std::pair<std::string, std::string>, std::map<qint64, std::vector<QueryScore>>> read;
  auto scores = [&](int64_t run, const std::string& dataset,
                    const std::string& split) -> std::optional<std::vector<QueryScore>> {
    auto found = read.find({dataset, split});
    if (found == read.end())
      found = read.emplace(std::make_pair(dataset, split),
                           read_query_scores(db, text_of(dataset), text_of(split), metric))
                  .first;
    const auto run_scores = found->second.find(run);
    if (run_scores == found->second.end()) return std::nullopt;
    return run_scores->second;
  };
  lmk::ComparisonOptions options;
  options.refuse_unpaired = false;
  options.all_pairs = true;
  const size_t row_count = pivot.rows.size();
  options.run_tests =
      row_count * (row_count - std::min<size_t>(row_count, 1)) / 2 * pivot.columns.size() <=
      static_cast<size_t>(kMaxPivotTests);
  const int baseline_row = table.rows.indexOf(baseline);
  if (baseline_row >= 0) {
    options.baseline = static_cast<size_t>(baseline_row);
    table.baseline = baseline;
  }
  // A large pivot resamples less, so that its intervals take about a second.
  options.resampling.resamples = pivot.rows.size() * pivot.columns.size() <= 200 ? 10000 : 1000;
  table.comparison = lmk::compare_pivot(pivot, scores, options);
  return table;
}

bool PivotModel::set_table(PivotTable table) {
  auto same_values = [](const QVector<QVector<double>>& a, const QVector<QVector<double>>& b) {
    if (a.size() != b.size()) return false;
    for (int i = 0; i < a.size(); ++i) {
      if (a[i].size() != b[i].size()) return false;
      for (int j = 0; j < a[i].size(); ++j)
        if (a[i][j] != b[i][j] && !(std::isnan(a[i][j]) && std::isnan(b[i][j]))) return false;
    }
    return true;
  };
  // A refresh while runs write recomputes the pivot every few seconds: keep the view still
  // unless something changed.
  if (table.row_header == table_.row_header && table.rows == table_.rows &&
      table.columns == table_.columns && table.sources == table_.sources &&
      table.baseline == table_.baseline && same_values(table.values, table_.values))
    return false;
  beginResetModel();
  table_ = std::move(table);
  const lmk::ComparisonTable& comparison = table_.comparison;
  best_rows_.assign(comparison.columns.size(), std::nullopt);
  best_significant_.assign(comparison.columns.size(), false);
  for (size_t c = 0; c < comparison.columns.size(); ++c) {
    best_rows_[c] = comparison.best_row(c);
    best_significant_[c] = comparison.best_is_significant(c);
  }
  endResetModel();
  return true;
}

double PivotModel::pivot_value(const QString& row_label, const QString& column_label) const {
  const int row = table_.rows.indexOf(row_label);
  const int column = table_.columns.indexOf(column_label);
  return row < 0 || column < 0 ? kNaN : table_.values[row][column];
}

QString PivotModel::best_row(const QString& column_label) const {
  const int column = table_.columns.indexOf(column_label);
  if (column < 0 || static_cast<size_t>(column) >= best_rows_.size()) return QString();
  const auto best = best_rows_[static_cast<size_t>(column)];
  return best ? table_.rows[static_cast<int>(*best)] : QString();
}

bool PivotModel::best_is_significant(const QString& column_label) const {
  const int column = table_.columns.indexOf(column_label);
  return column >= 0 && static_cast<size_t>(column) < best_significant_.size() &&
         best_significant_[static_cast<size_t>(column)];
}

QString PivotModel::legend() const {
  QStringList lines;
  for (const std::string& line : table_.comparison.legend()) lines << text_of(line);
  if (!table_.comparison.options.run_tests)
    lines << tr("Paired tests run for at most %1 pairs of cells: filter the runs for them.")
                 .arg(kMaxPivotTests);
  return lines.join(QLatin1Char('\n'));
}

int PivotModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : table_.rows.size();
}

int PivotModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() || table_.rows.isEmpty() ? 0 : table_.columns.size() + 1;
}

QVariant PivotModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return QVariant();
  const int row = index.row();
  if (index.column() == 0) {
    // Edit role (CSV): the label alone.
    if (role == Qt::EditRole) return table_.rows[row];
    if (role != Qt::DisplayRole) return QVariant();
    return table_.rows[row] + (table_.rows[row] == table_.baseline ? tr(" (baseline)") : QString());
  }
  const int column = index.column() - 1;
  const double value = table_.values[row][column];
  const lmk::ComparisonTable& comparison = table_.comparison;
  const bool compared = !comparison.columns.empty();
  const auto r = static_cast<size_t>(row), c = static_cast<size_t>(column);
  const lmk::CellSummary* cell = compared ? &comparison.cells[r][c] : nullptr;
  const bool highest =
      compared && c < best_rows_.size() && best_rows_[c] == r && !std::isnan(value);
  const bool best = highest && best_significant_[c];
  const bool tied_best = highest && !best && comparison.rows.size() > 1;
  switch (role) {
    case Qt::DisplayRole: {
      if (std::isnan(value)) return QString();
      QString text = QString::number(value, 'f', 3);
      if (cell && cell->per_query && std::isfinite(cell->interval.low))
        text += QStringLiteral(" ± %1").arg(cell->interval.half_width(), 0, 'f', 3);
      const int versus = compared ? comparison.versus_baseline(r, c) : 0;
      if (versus > 0) text += QStringLiteral(" ▲");
      if (versus < 0) text += QStringLiteral(" ▼");
      if (best) text += QStringLiteral(" *");
      if (tied_best) text += tr(" (tie)");
      return text;
    }
    case Qt::EditRole:
      return std::isnan(value) ? QVariant() : QVariant(value);
    case Qt::FontRole: {
      if (!best) return QVariant();
      QFont font;
      font.setBold(true);
      return font;
    }
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole: {
      if (std::isnan(value)) return table_.sources[row][column];
      QString text = QStringLiteral("%1 (%2)").arg(QString::number(value, 'g', 12),
                                                   table_.sources[row][column]);
      if (cell && cell->per_query)
        text += QStringLiteral("\n") + QString::fromStdString(lmk::interval_text(*cell, 4));
      if (compared && comparison.options.baseline && *comparison.options.baseline != r) {
        if (const lmk::ComparisonTest* test =
                comparison.find_test(r, *comparison.options.baseline, c)) {
          const double difference =
              test->row == r ? test->result.difference : -test->result.difference;
          text += tr("\nagainst %1: %2, p = %3, Holm-adjusted p = %4")
                      .arg(table_.baseline)
                      .arg(difference, 0, 'f', 4)
                      .arg(test->result.p_value, 0, 'g', 3)
                      .arg(test->p_adjusted, 0, 'g', 3);
        }
      }
      if (best) text += tr("\nbest in the column: beats every other row significantly");
      if (tied_best) text += tr("\nthe highest mean, but not significantly above every row");
      return text;
    }
    default:
      return QVariant();
  }
}

QVariant PivotModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal)
    return QAbstractTableModel::headerData(section, orientation, role);
  if (role == Qt::ToolTipRole) return legend();
  if (role != Qt::DisplayRole && role != Qt::EditRole) return QVariant();
  if (section == 0) return table_.row_header;
  if (section - 1 >= table_.columns.size()) return QVariant();
  const QString& label = table_.columns[section - 1];
  // Shown over lines ("manpages-", "documents", "@128") so a column is as wide as its numbers,
  // not its name: the whole pivot of a study fits a laptop's screen. The edit role (CSV, copy)
  // keeps the one-line name.
  if (role == Qt::EditRole) return label;
  QString wrapped = label;
  wrapped.replace(QLatin1Char('@'), QStringLiteral("\n@"));
  if (label.size() > 12) wrapped.replace(QLatin1Char('-'), QStringLiteral("-\n"));
  return wrapped;
}

}  // namespace lmk::widgets
