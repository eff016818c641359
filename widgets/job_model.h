#pragma once

// The job monitor's data: the jobs of a results store (core/jobs/executor.h) with their runs, the
// training curves of one run, the study a job was submitted from, and a log's tail. Every read
// here runs on a worker thread (load_in_background); JobModel holds what the last read found.

#include <QAbstractTableModel>
#include <QDateTime>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>

namespace lmk {
class ResultsStore;
}

namespace lmk::widgets {

// A job and its run; a run still RUNNING that no job runs (lmk train --db) has has_job false.
struct JobRow {
  qint64 run_id = 0;
  QString run_name, kind, status, error_text, experiment;
  bool has_job = false;
  QString step, executor, external_id, log_path, study_dir;
  int attempts = 0;
  bool ended = false;
  qint64 progress_done = -1, progress_total = -1;
  double eta_s = -1;  // seconds left when the job was last updated; < 0: unknown
  QString progress_text;
  QDateTime updated;

  // Whether a cancel can stop it, and whether submitting its study again would run it.
  bool cancellable() const {
    return has_job && !ended &&
           (status == QLatin1String("SCHEDULED") || status == QLatin1String("RUNNING"));
  }
  bool requeueable() const {
    return has_job && (status == QLatin1String("FAILED") || status == QLatin1String("KILLED"));
  }
  // progress_text, or why the run failed.
  QString latest() const;
  // The ETA counted down from `updated` to `now`; < 0: unknown.
  double eta_at(const QDateTime& now) const;
  bool operator==(const JobRow& other) const;
  bool operator!=(const JobRow& other) const { return !(*this == other); }
};

// What the monitor shows of a store.
struct JobSnapshot {
  QVector<JobRow> rows;  // by run id
};

// Reads the jobs (and RUNNING runs without one) of a store; `include_ended` false leaves out
// the jobs that are over.
JobSnapshot load_jobs(const ResultsStore& db, bool include_ended);

// The training curves of the monitor, in this order.
const QStringList& training_curve_keys();

struct CurveSeries {
  QString key;
  QVector<double> steps, values;  // NaN values are left out
  QVector<double> seconds;        // per point, seconds since the run started
  qint64 last_step = -1;          // the last step read, NaN or not
};
// Per curve key, the last step read; a key not there: none yet.
using CurveSteps = QHash<QString, qint64>;
struct RunCurves {
  qint64 run_id = 0;
  QVector<CurveSeries> series;  // the keys asked for with points after `after`
};
// The run's curves of `keys` (the monitor's by default), each after its own step in `after`
// (the keys are logged by separate commits, so one shared step would skip a point committed
// between them), each cut down to about `max_points` points by taking every k-th and the last
// (a run of a million steps stays quick to draw). One read transaction reads all keys, so they
// come from one snapshot of the store. A point's time counts from the run's start (its first
// metric when the run has no start).
RunCurves load_run_curves(const ResultsStore& db, qint64 run_id, const CurveSteps& after = {},
                          int max_points = 20000, const QStringList& keys = training_curve_keys());

// A run that logged training curves (a loss), and the curve keys such runs logged.
struct TrainingRun {
  qint64 id = 0;
  QString experiment, name, kind, status;
};
struct TrainingRuns {
  QVector<TrainingRun> runs;  // by id
  QStringList keys;           // sorted
};
TrainingRuns load_training_runs(const ResultsStore& store);

// How to submit the study of a job again: the config and profile its submission recorded
// (runs.config of its step's run, else of another run of the same study folder).
struct RequeueTarget {
  QString config, profile, study_dir, executor;
  QString error;  // why there is none
};
RequeueTarget load_requeue_target(const ResultsStore& db, qint64 run_id);

// The last `count` lines of a log (a progress bar's \r segments are lines), "" when unreadable;
// without `progress_events`, the JSON progress events jobs write for the store
// (LMK_PROGRESS_JSON) are left out.
QString read_log_tail(const QString& path, int count = 200, bool progress_events = false);

// The monitor's table: one row per JobRow. Updating keeps rows whose run is still there in place
// (selection and scroll position survive a refresh).
class JobModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    kRun,
    kStep,
    kStatus,
    kAttempts,
    kProgress,
    kEta,
    kLatest,
    kExecutor,
    kExternalId,
    kUpdated,
    kColumnCount
  };
  // Progress as a fraction in [0, 1], or -1 when the job reports none (the delegate's bar).
  static constexpr int kProgressRole = Qt::UserRole + 1;
  // The row's run id (every column).
  static constexpr int kRunIdRole = Qt::UserRole + 2;
  // Sorting: numbers as numbers.
  static constexpr int kSortRole = Qt::UserRole + 3;

  explicit JobModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  void set_rows(QVector<JobRow> rows);
  const QVector<JobRow>& rows() const { return rows_; }
  // The row of a run, nullptr when it is not shown.
  const JobRow* find(qint64 run_id) const;
  // The text shown for a row's progress: "12/40 (30%)", "" when it has none.
  static QString progress_text(const JobRow& row);
  // "1 h 02 min", "35 s"; "" for < 0.
  static QString duration_text(double seconds);

 private:
  QVector<JobRow> rows_;
  QHash<qint64, int> row_of_run_;
  QDateTime now_;  // when the rows came: ETAs count down from their update to it
};

}  // namespace lmk::widgets
