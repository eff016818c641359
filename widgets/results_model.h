#pragma once

// The results browser's data (widgets/results_view.h), and all of its SQL but the pivot's
// (widgets/pivot_model.h) and the filter's (widgets/run_filter.h): the runs × benchmarks table
// (fetched a page at a time from the store's query, whose filter and sort run in SQLite), the
// config diff of
// selected runs, and the MTEB-style JSON export of runs.

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QPair>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QVariantList>
#include <QVector>

#include "core/eval/comparison.h"
#include "core/store/runs_table.h"
#include "widgets/run_filter.h"

namespace lmk {
class ResultsStore;
}

namespace lmk::widgets {

// A benchmark column of the runs table: one eval_results dataset and split (group_kind 'all').
struct Benchmark {
  QString dataset;
  QString split;
  QString label;  // the dataset, with " (split)" when the store holds several splits
  bool operator==(const Benchmark& other) const {
    return dataset == other.dataset && split == other.split && label == other.label;
  }
};

// What the results browser offers for a store: read once per load, off the GUI thread.
struct StoreSummary {
  qlonglong run_count = 0;
  QList<QPair<qlonglong, QString>> experiments;  // id, name; by name
  QStringList metrics;                           // every metric of eval_results, sorted
  QList<Benchmark> benchmarks;                   // in the order their first run was written
  QStringList param_keys;                        // every params key, sorted
};

// Reads the summary of `store` (stores without eval_results have no benchmarks).
StoreSummary read_store_summary(const ResultsStore& store);

// The runs table: one row per run (id, experiment, name, kind, status, when it started, how long
// it took, host, device, a failed run's error, the chosen params), then one column per benchmark
// holding the chosen metric: the run's score on the dataset (the mean over all its queries,
// pooled over its parts), shown with ± half the width of its 95 % bootstrap interval and N as
// lmk results prints them — computed off the GUI thread for the rows fetched, the mean alone
// until then. Empty and not-applicable values show as "—". Filtering and sorting are the
// store's query (core/store/runs_table.h, ORDER BY the clicked column), read through the GUI
// thread's reader of the store (store_connection) a page of 256 rows at a time as the view
// scrolls, so both stay right while rows are fetched lazily.
class RunsTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum class ColumnKind { Id, Text, Param, Metric, Duration };
  // The first columns, always present.
  enum FixedColumn {
    IdColumn,
    ExperimentColumn,
    NameColumn,
    KindColumn,
    StatusColumn,
    StartedColumn,
    DurationColumn,
    HostColumn,
    DeviceColumn,
    ErrorColumn
  };

  explicit RunsTableModel(QObject* parent = nullptr);

  // The param columns and benchmark columns (showing `metric`); used by the next reload().
  void set_columns(const QStringList& param_keys, const QList<Benchmark>& benchmarks,
                   const QString& metric);
  // Long format: one row per run and benchmark it has a score on, with a "benchmark" and a
  // "split" column and one "score" column, instead of one column per benchmark (a store whose
  // evaluations each cover one dataset reads better so); used by the next reload().
  void set_long_format(bool long_format);
  bool long_format() const { return long_format_; }
  // The runs shown; used by the next reload(). Returns the filter's error text (empty: none).
  QString set_filter(const RunFilter& filter);
  // Queries the store at `db_path` with this thread's connection (the GUI thread's: the model
  // fetches on it). Returns false, with last_error(), when the store cannot be read.
  bool reload(const QString& db_path);
  // Fetches every row that matches (exports, tests).
  void fetch_all();
  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  bool canFetchMore(const QModelIndex& parent = QModelIndex()) const override;
  void fetchMore(const QModelIndex& parent = QModelIndex()) override;
  // The interval and N of a benchmark cell, once computed (n == 0: not yet, or no per-query
  // results stored).
  lmk::CellSummary cell_summary(int row, int column) const;
  // Whether intervals of fetched rows are still being computed.
  bool summaries_pending() const { return pending_summaries_ > 0; }

  // Sorts in SQL and queries again (rows arrive lazily in the new order).
  void sort(int column, Qt::SortOrder order) override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  // The run id of a fetched row.
  qlonglong run_id(int row) const;
  // The row of run `id` among the fetched rows, or -1.
  int row_of(qlonglong id) const;
  ColumnKind column_kind(int column) const;
  // The column whose header is `label` (a benchmark label, a param key, "status", …), or -1.
  int column_of(const QString& label) const;
  const QString& metric() const { return metric_; }
  const QString& last_error() const { return last_error_; }
  int sort_column() const { return sort_column_; }
  Qt::SortOrder sort_order() const { return sort_order_; }

 signals:
  // A reload failed (the store vanished, stayed locked past the busy timeout, …).
  void query_failed(const QString& error);
  // Intervals of fetched rows arrived (the benchmark cells changed), or their computation
  // failed (the cells keep the mean alone).
  void summaries_ready();

 private:
  struct Column {
    ColumnKind kind;
    QString label;
    QString tooltip;
  };
  // The table as the store queries it (core/store/runs_table.h), sorted by `sort_column`.
  lmk::RunsTableSpec table_spec(int sort_column) const;
  // A fetched cell as the store holds it (null: NULL).
  QVariant stored(int row, int column) const;
  // Reads the next page of query_; throws StoreError.
  void fetch_page();
  // No query, no rows, no columns.
  void clear_table();
  void build_columns();
  // Starts computing the intervals of the fetched rows that have none yet.
  void summarize_fetched_rows();

  QString db_path_;
  lmk::SqlQuery query_;
  bool has_query_ = false;
  bool exhausted_ = true;  // the last page read was not full
  QVector<QVector<QVariant>> rows_;
  QStringList param_keys_;
  QList<Benchmark> benchmarks_;
  QString metric_;
  RunFilter filter_;
  QVector<Column> columns_;
  int sort_column_ = IdColumn;
  Qt::SortOrder sort_order_ = Qt::AscendingOrder;
  QString last_error_;
  // (run id, benchmark index) -> interval and N, for metric_; rows asked for already.
  QHash<QPair<qlonglong, int>, lmk::CellSummary> summaries_;
  QSet<qlonglong> summarized_runs_;
  bool long_format_ = false;
  int pending_summaries_ = 0;
};

// The configuration of several runs side by side: runs.config (JSON, flattened to dotted keys,
// list items as key[i]) merged with the params table.
struct ConfigDiff {
  QList<qlonglong> run_ids;
  QStringList run_labels;       // "#id name"
  QStringList keys;             // every key, sorted
  QVector<QStringList> values;  // [key][run]; a null QString: the run lacks the key
  QVector<bool> differs;        // [key]: not every run holds the same value
};

// The config diff of `run_ids` (in that order; ids not in the store are left out).
ConfigDiff compute_config_diff(const ResultsStore& store, const QList<qlonglong>& run_ids);

// Shows a ConfigDiff: column 0 the key, then one column per run; only the differing keys unless
// show_all. Cells of differing keys have a highlighted background.
class ConfigDiffModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;

  void set_diff(ConfigDiff diff);
  void set_show_all(bool show_all);
  const ConfigDiff& diff() const { return diff_; }
  // The keys shown, in row order.
  QStringList shown_keys() const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  void update_rows();

  ConfigDiff diff_;
  bool show_all_ = false;
  QVector<int> rows_;  // indices into diff_.keys
};

// Writes the results of `run_ids` as MTEB results files: the store layer's export (core/store/
// export.h, as lmk export --format mteb), main_metric's value the main score where no stored
// main_score is. Returns the files written; throws InputError when the store cannot be read,
// std::runtime_error when a file cannot be written.
QStringList export_mteb_results(const ResultsStore& store, const QList<qlonglong>& run_ids,
                                const QString& dir, const QString& main_metric);

}  // namespace lmk::widgets
