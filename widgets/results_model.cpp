#include "widgets/results_model.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QFont>
#include <QMap>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/store/export.h"
#include "core/store/results_store.h"
#include "core/util/error.h"
#include "widgets/plot_data.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {
namespace {

// The rows one fetch reads.
constexpr int64_t kPageRows = 256;

// A cell as Qt's models hold stored values: NULL a valid null (an invalid QVariant means "no
// data for this role", and views and the CSV export then take the display text).
QVariant cell_value(const std::optional<SqlValue>& value) {
  if (!value) return QVariant(QMetaType::fromType<QString>());
  if (const auto* text = std::get_if<std::string>(&*value)) return QString::fromStdString(*text);
  if (const auto* integer = std::get_if<int64_t>(&*value))
    return QVariant::fromValue(static_cast<qlonglong>(*integer));
  return std::get<double>(*value);
}

QString number_text(double value) {
  return std::isnan(value) ? QString() : QString::number(value, 'f', 4);
}

}  // namespace

StoreSummary read_store_summary(const ResultsStore& store) {
  StoreSummary summary;
  summary.run_count = store.count_runs({});
  std::vector<Experiment> experiments = store.experiments();
  std::stable_sort(experiments.begin(), experiments.end(),
                   [](const Experiment& a, const Experiment& b) { return a.name < b.name; });
  for (const Experiment& experiment : experiments)
    summary.experiments.append({experiment.id, QString::fromStdString(experiment.name)});
  for (const std::string& key : store.param_keys())
    summary.param_keys << QString::fromStdString(key);
  const StoredBenchmarks stored = store.benchmarks();
  QSet<QString> splits;
  for (const StoredBenchmark& benchmark : stored.benchmarks)
    splits.insert(QString::fromStdString(benchmark.split));
  for (const StoredBenchmark& benchmark : stored.benchmarks) {
    const QString dataset = QString::fromStdString(benchmark.dataset);
    const QString split = QString::fromStdString(benchmark.split);
    summary.benchmarks.append(
        {dataset, split,
         splits.size() > 1 ? QStringLiteral("%1 (%2)").arg(dataset, split) : dataset});
  }
  for (const std::string& metric : stored.metrics)
    summary.metrics << QString::fromStdString(metric);
  return summary;
}

RunsTableModel::RunsTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int RunsTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RunsTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(columns_.size());
}

QVariant RunsTableModel::stored(int row, int column) const {
  if (row < 0 || row >= rows_.size() || column < 0 || column >= rows_[row].size()) return {};
  return rows_[row][column];
}

void RunsTableModel::clear_table() {
  beginResetModel();
  has_query_ = false;
  exhausted_ = true;
  query_ = {};
  rows_.clear();
  columns_.clear();
  endResetModel();
}

void RunsTableModel::fetch_page() {
  const std::vector<lmk::RunsTableRow> page =
      store_connection(db_path_).runs_table_page(query_, rows_.size(), kPageRows);
  exhausted_ = static_cast<int64_t>(page.size()) < kPageRows;
  if (page.empty()) return;
  const int first = static_cast<int>(rows_.size());
  beginInsertRows(QModelIndex(), first, first + static_cast<int>(page.size()) - 1);
  for (const lmk::RunsTableRow& row : page) {
    QVector<QVariant> values;
    values.reserve(static_cast<int>(row.size()));
    for (const auto& value : row) values.append(cell_value(value));
    rows_.append(values);
  }
  endInsertRows();
}

void RunsTableModel::set_columns(const QStringList& param_keys, const QList<Benchmark>& benchmarks,
                                 const QString& metric) {
  if (metric != metric_ || benchmarks != benchmarks_) {
    summaries_.clear();
    summarized_runs_.clear();
  }
  param_keys_ = param_keys;
  benchmarks_ = benchmarks;
  metric_ = metric;
}

QString RunsTableModel::set_filter(const RunFilter& filter) {
  filter_ = filter;
  return run_filter_error(filter);
}

lmk::RunsTableSpec RunsTableModel::table_spec(int sort_column) const {
  lmk::RunsTableSpec spec;
  for (const QString& key : param_keys_) spec.param_keys.push_back(key.toStdString());
  for (const Benchmark& benchmark : benchmarks_)
    spec.benchmarks.emplace_back(benchmark.dataset.toStdString(), benchmark.split.toStdString(),
                                 benchmark.label.toStdString());
  spec.metric = metric_.toStdString();
  spec.long_format = long_format_;
  spec.selection = run_selection(filter_);
  spec.sort_column = static_cast<size_t>(std::max(0, sort_column));
  spec.ascending = sort_order_ == Qt::AscendingOrder;
  return spec;
}

void RunsTableModel::build_columns() {
  static const QMap<QString, QString> field_tips = {
      {QStringLiteral("id"), tr("Run id")},
      {QStringLiteral("started"), tr("When the run started (UTC)")},
      {QStringLiteral("duration"), tr("From start to end (running: not yet ended)")},
      {QStringLiteral("error"), tr("Why a failed run failed")},
      {QStringLiteral("benchmark"), tr("The dataset this row's score is on")}};
  const QString interval =
      tr("the mean over all the dataset's queries, pooled over its parts, ± half the width of "
         "its 95 % percentile bootstrap interval (10000 resamples of the queries), N queries — "
         "as lmk results prints it");
  columns_.clear();
  int benchmark = 0;
  for (const lmk::RunsTableColumn& column : lmk::runs_table_columns(table_spec(0))) {
    const QString name = QString::fromStdString(column.name);
    Column shown{ColumnKind::Text, name, field_tips.value(name)};
    switch (column.kind) {
      case lmk::RunsTableColumnKind::Id:
        shown.kind = ColumnKind::Id;
        break;
      case lmk::RunsTableColumnKind::Text:
        break;
      case lmk::RunsTableColumnKind::Duration:
        shown.kind = ColumnKind::Duration;
        break;
      case lmk::RunsTableColumnKind::Param:
        shown.kind = ColumnKind::Param;
        shown.tooltip = tr("Run param %1").arg(name);
        break;
      case lmk::RunsTableColumnKind::Metric:
        shown.kind = ColumnKind::Metric;
        if (long_format_) {
          shown.tooltip = tr("%1 on the row's benchmark: %2").arg(metric_, interval);
        } else {
          const Benchmark& b = benchmarks_[benchmark++];
          shown.tooltip = tr("%1 on %2 (split %3): %4").arg(metric_, b.dataset, b.split, interval);
        }
        break;
    }
    columns_.append(shown);
  }
}

bool RunsTableModel::reload(const QString& db_path) {
  db_path_ = db_path;
  last_error_.clear();
  if (db_path.isEmpty()) {
    clear_table();
    return true;
  }
  const QString sort_label =
      sort_column_ < columns_.size() ? columns_[sort_column_].label : QStringLiteral("id");
  beginResetModel();
  build_columns();
  sort_column_ = std::max(0, column_of(sort_label));
  query_ = lmk::runs_table_query(table_spec(sort_column_));
  has_query_ = true;
  exhausted_ = false;
  rows_.clear();
  endResetModel();
  try {
    fetch_page();
    summarize_fetched_rows();
  } catch (const std::exception& e) {  // StoreError, or the store's InputError
    last_error_ = QString::fromUtf8(e.what());
    clear_table();
    emit query_failed(last_error_);
    return false;
  }
  return true;
}

void RunsTableModel::fetch_all() {
  // A fetch that brings no row ends it too (it failed: query_failed said why).
  while (canFetchMore()) {
    const int before = rowCount();
    fetchMore();
    if (rowCount() == before) break;
  }
}

bool RunsTableModel::canFetchMore(const QModelIndex& parent) const {
  return !parent.isValid() && has_query_ && !exhausted_;
}

void RunsTableModel::fetchMore(const QModelIndex& parent) {
  if (!canFetchMore(parent)) return;
  try {
    fetch_page();
  } catch (const std::exception& e) {  // the store vanished, stayed locked, ...
    exhausted_ = true;
    last_error_ = QString::fromUtf8(e.what());
    emit query_failed(last_error_);
    return;
  }
  summarize_fetched_rows();
}

void RunsTableModel::set_long_format(bool long_format) {
  long_format_ = long_format;
}

lmk::CellSummary RunsTableModel::cell_summary(int row, int column) const {
  if (column_kind(column) != ColumnKind::Metric) return {};
  int benchmark = column - (static_cast<int>(columns_.size()) - benchmarks_.size());
  if (long_format_) {  // the row's own benchmark
    const QString dataset = stored(row, column - 2).toString(),
                  split = stored(row, column - 1).toString();
    benchmark = -1;
    for (int b = 0; b < benchmarks_.size(); ++b)
      if (benchmarks_[b].dataset == dataset && benchmarks_[b].split == split) benchmark = b;
  }
  if (benchmark < 0) return {};
  return summaries_.value(qMakePair(run_id(row), benchmark));
}

void RunsTableModel::summarize_fetched_rows() {
  if (metric_.isEmpty() || benchmarks_.isEmpty() || db_path_.isEmpty()) return;
  QList<qlonglong> runs;
  for (int row = 0; row < rowCount(); ++row) {
    const qlonglong id = run_id(row);
    if (!summarized_runs_.contains(id)) runs << id;
  }
  if (runs.isEmpty()) return;
  for (qlonglong id : runs) summarized_runs_.insert(id);
  ++pending_summaries_;
  using Summaries = QHash<QPair<qlonglong, int>, lmk::CellSummary>;
  const QList<Benchmark> benchmarks = benchmarks_;
  const QString metric = metric_;
  load_in_background<Summaries>(
      this, db_path_,
      [runs, benchmarks, metric](const ResultsStore& store) {
        // Each cell's per-query values read and summarized by the core, as lmk results does
        // (the same rows, the same resampling, so the same interval).
        const lmk::stats::ResamplingOptions resampling;
        Summaries summaries;
        for (qlonglong id : runs) {
          for (int b = 0; b < benchmarks.size(); ++b) {
            const std::vector<lmk::QueryScore> scores =
                store.query_scores(id, benchmarks[b].dataset.toStdString(),
                                   benchmarks[b].split.toStdString(), metric.toStdString());
            if (!scores.empty())
              summaries.insert(qMakePair(id, b), lmk::summarize_scores(scores, resampling));
          }
        }
        return summaries;
      },
      [this, metric](Summaries summaries, const QString& error) {
        --pending_summaries_;
        if (!error.isEmpty() || metric != metric_) {
          emit summaries_ready();
          return;
        }
        for (auto it = summaries.begin(); it != summaries.end(); ++it)
          summaries_.insert(it.key(), it.value());
        const int first_metric = long_format_
                                     ? static_cast<int>(columns_.size()) - 1
                                     : static_cast<int>(columns_.size()) - benchmarks_.size();
        if (rowCount() > 0 && first_metric < columns_.size())
          emit dataChanged(index(0, first_metric), index(rowCount() - 1, columns_.size() - 1),
                           {Qt::DisplayRole, Qt::ToolTipRole});
        emit summaries_ready();
      });
}

void RunsTableModel::sort(int column, Qt::SortOrder order) {
  if (column < 0 || column >= columns_.size()) return;
  // The header repeats the current order after each reload: nothing to do then.
  if (column == sort_column_ && order == sort_order_ && has_query_) return;
  sort_column_ = column;
  sort_order_ = order;
  if (!db_path_.isEmpty()) reload(db_path_);
}

namespace {

// Param values that mean "not applicable" or "no limit" when 0 (a CLS run's granularity, an
// evaluation at full length): shown as "—" like an empty value.
bool zero_means_none(const QString& key) {
  return key == QLatin1String("granularity") || key.endsWith(QLatin1String("max_length"));
}

QString duration_text(double seconds) {
  if (seconds < 60) return QStringLiteral("%1 s").arg(seconds, 0, 'f', 1);
  if (seconds < 3600) return QStringLiteral("%1 min").arg(seconds / 60, 0, 'f', 1);
  return QStringLiteral("%1 h").arg(seconds / 3600, 0, 'f', 2);
}

}  // namespace

QVariant RunsTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.column() >= columns_.size()) return QVariant();
  const Column& column = columns_[index.column()];
  const bool number = column.kind == ColumnKind::Metric || column.kind == ColumnKind::Id ||
                      column.kind == ColumnKind::Duration;
  const QVariant value = stored(index.row(), index.column());
  const bool none = value.isNull() || value.toString().isEmpty() ||
                    (column.kind == ColumnKind::Param && value.toString() == QLatin1String("0") &&
                     zero_means_none(column.label));
  switch (role) {
    case Qt::DisplayRole: {
      if (none) return QStringLiteral("—");
      if (column.kind == ColumnKind::Duration) return duration_text(value.toDouble());
      if (index.column() == StartedColumn) {  // to the second; the tooltip has it all
        const QDateTime when = QDateTime::fromString(value.toString(), Qt::ISODateWithMs);
        if (when.isValid()) return when.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
      }
      if (column.kind != ColumnKind::Metric) return value;
      const lmk::CellSummary summary = cell_summary(index.row(), index.column());
      if (summary.n == 0) return number_text(value.toDouble());
      if (!std::isfinite(summary.interval.half_width()))  // one query: no interval
        return QStringLiteral("%1 (N %2)").arg(value.toDouble(), 0, 'f', 4).arg(summary.n);
      return QStringLiteral("%1 ± %2 (N %3)")
          .arg(value.toDouble(), 0, 'f', 4)
          .arg(summary.interval.half_width(), 0, 'f', 4)
          .arg(summary.n);
    }
    case Qt::EditRole:
      return value;
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::AlignVCenter | (number ? Qt::AlignRight : Qt::AlignLeft));
    case Qt::ToolTipRole: {
      if (column.kind == ColumnKind::Metric) {
        if (value.isNull()) return QVariant();
        const lmk::CellSummary summary = cell_summary(index.row(), index.column());
        if (summary.n == 0) return QString::number(value.toDouble(), 'g', 12);
        return tr("%1; %2").arg(QString::number(value.toDouble(), 'g', 12),
                                QString::fromStdString(lmk::interval_text(summary, 4)));
      }
      if (index.column() == StatusColumn) {
        if (value.toString() == QLatin1String("RUNNING"))
          return tr("Still running: its results may be incomplete");
        const QString error = stored(index.row(), ErrorColumn).toString();
        if (!error.isEmpty()) return tr("%1: %2").arg(value.toString(), error);
      }
      if (none && column.kind == ColumnKind::Param && !value.isNull() &&
          !value.toString().isEmpty())
        return tr("0: not applicable, or no limit");
      return value;
    }
    case Qt::ForegroundRole: {
      if (index.column() != StatusColumn) return QVariant();
      const QString status = value.toString();
      if (status == QLatin1String("RUNNING")) return QBrush(QColor(0x1f, 0x6f, 0xc5));
      if (status == QLatin1String("FAILED")) return QBrush(QColor(0xc0, 0x39, 0x2b));
      if (status == QLatin1String("KILLED") || status == QLatin1String("SCHEDULED"))
        return QBrush(QColor(0x80, 0x80, 0x80));
      return QVariant();
    }
    default:
      return QVariant();
  }
}

QVariant RunsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Horizontal && section >= 0 && section < columns_.size()) {
    if (role == Qt::DisplayRole) return columns_[section].label;
    if (role == Qt::ToolTipRole && !columns_[section].tooltip.isEmpty())
      return columns_[section].tooltip;
  }
  return QAbstractTableModel::headerData(section, orientation, role);
}

qlonglong RunsTableModel::run_id(int row) const {
  return stored(row, IdColumn).toLongLong();
}

int RunsTableModel::row_of(qlonglong id) const {
  for (int row = 0; row < rowCount(); ++row)
    if (run_id(row) == id) return row;
  return -1;
}

RunsTableModel::ColumnKind RunsTableModel::column_kind(int column) const {
  return column >= 0 && column < columns_.size() ? columns_[column].kind : ColumnKind::Text;
}

int RunsTableModel::column_of(const QString& label) const {
  for (int i = 0; i < columns_.size(); ++i)
    if (columns_[i].label == label) return i;
  return -1;
}

ConfigDiff compute_config_diff(const ResultsStore& store, const QList<qlonglong>& run_ids) {
  ConfigDiff diff;
  // The params rows: each run's config as the core flattened it (flatten_params), compared by
  // the core's one config diff (differing_keys), as lmk results and lmk compare do.
  std::vector<std::map<std::string, std::string>> configs;
  for (qlonglong id : run_ids) {
    std::string name;
    try {
      name = store.get_run(id).name;
    } catch (const InputError&) {
      continue;  // a run no longer in the store
    }
    diff.run_ids << id;
    diff.run_labels << QStringLiteral("#%1 %2").arg(id).arg(QString::fromStdString(name));
    configs.push_back(store.run_params(id));
  }
  std::set<std::string> keys;
  for (const auto& config : configs)
    for (const auto& entry : config) keys.insert(entry.first);
  const std::set<std::string> differing = lmk::differing_keys(configs);
  for (const std::string& key : keys) {  // sorted
    QStringList values;
    for (const auto& config : configs) {
      const auto it = config.find(key);
      // A null QString when the run lacks the key.
      values << (it == config.end() ? QString() : QString::fromStdString(it->second));
    }
    diff.keys << QString::fromStdString(key);
    diff.values << values;
    diff.differs << (differing.count(key) > 0);
  }
  return diff;
}

void ConfigDiffModel::set_diff(ConfigDiff diff) {
  beginResetModel();
  diff_ = std::move(diff);
  update_rows();
  endResetModel();
}

void ConfigDiffModel::set_show_all(bool show_all) {
  beginResetModel();
  show_all_ = show_all;
  update_rows();
  endResetModel();
}

void ConfigDiffModel::update_rows() {
  rows_.clear();
  for (int i = 0; i < diff_.keys.size(); ++i)
    if (show_all_ || diff_.differs[i]) rows_ << i;
}

QStringList ConfigDiffModel::shown_keys() const {
  QStringList keys;
  for (int i : rows_) keys << diff_.keys[i];
  return keys;
}

int ConfigDiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : rows_.size();
}

int ConfigDiffModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() || diff_.run_ids.isEmpty() ? 0 : diff_.run_ids.size() + 1;
}

QVariant ConfigDiffModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return QVariant();
  const int key = rows_[index.row()];
  const bool differs = diff_.differs[key];
  if (index.column() == 0) {
    if (role == Qt::DisplayRole) return diff_.keys[key];
    if (role == Qt::FontRole && differs) {
      QFont font;
      font.setBold(true);
      return font;
    }
    return QVariant();
  }
  const QString& value = diff_.values[key][index.column() - 1];
  switch (role) {
    case Qt::DisplayRole:
      return value.isNull() ? QStringLiteral("—") : value;
    case Qt::ToolTipRole:
      return value.isNull() ? tr("Not set for this run") : value;
    case Qt::BackgroundRole:
      return differs ? QBrush(QColor(0xff, 0xe0, 0x8a)) : QVariant();
    case Qt::ForegroundRole:
      // Dark text on the highlight whatever the palette; grey for a missing key.
      if (value.isNull()) return QBrush(QColor(0x80, 0x80, 0x80));
      return differs ? QBrush(Qt::black) : QVariant();
    default:
      return QVariant();
  }
}

QVariant ConfigDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  if (section == 0) return QStringLiteral("key");
  return section - 1 < diff_.run_labels.size() ? diff_.run_labels[section - 1] : QVariant();
}

QStringList export_mteb_results(const ResultsStore& store, const QList<qlonglong>& run_ids,
                                const QString& dir, const QString& main_metric) {
  std::vector<RunRecord> runs;
  for (qlonglong id : run_ids) {
    try {
      runs.push_back(store.get_run(id));
    } catch (const InputError&) {
      // A run deleted since it was selected: nothing to export.
    }
  }
  QStringList written;
  for (const std::string& path :
       export_mteb(store, runs, dir.toStdString(), main_metric.toStdString()))
    written << QString::fromStdString(path);
  return written;
}

}  // namespace lmk::widgets
