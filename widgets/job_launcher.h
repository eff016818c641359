#pragma once

// Starts work through the job layer of the lmk CLI (docs/USER-GUIDE.md, "Jobs"): lmk submit,
// lmk cancel, lmk jobs. The workbench never runs a step itself.
//
// `lmk submit --executor local` runs its queue in the foreground until the jobs end: the
// launcher starts it detached (its own session, output in DIR/logs/submit-TIME.log, exit status
// in DIR/logs/submit-TIME.exit), so closing the workbench leaves the jobs running; the monitor
// follows them through the store. `--executor slurm` returns once sbatch has run.

#include <QList>
#include <QObject>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <functional>

#include "core/jobs/executor_kind.h"

class QProcess;
class QTimer;

namespace lmk::widgets {

// Runs the lmk CLI (lmk_program()) with `arguments`; `done(exit_code, stdout, stderr)` on
// `owner`'s thread when it ends (exit code -1: it could not start, crashed, or was killed — after
// `timeout_ms` when that is > 0, or by the caller through the returned process, which deletes
// itself once done() ran).
QProcess* run_lmk(
    QObject* owner, const QStringList& arguments, std::function<void(int, QString, QString)> done,
    int timeout_ms = 0,
    const QProcessEnvironment& environment = QProcessEnvironment::systemEnvironment());

struct SubmitRequest {
  QString config;  // the study config (TOML)
  ExecutorKind executor = ExecutorKind::Local;
  QString profile;  // "": lmk's default (full)
  QString db, dir;  // "": the config's
};

// What `lmk submit` says before it records anything: the study folder and the results store.
struct SubmitPlan {
  QString study_dir, db, experiment;
  int steps = 0, to_run = 0;  // all steps, those not done yet
};

class JobLauncher : public QObject {
  Q_OBJECT
 public:
  explicit JobLauncher(QObject* parent = nullptr);
  ~JobLauncher() override;

  // lmk's arguments for the request (without the program).
  static QStringList submit_arguments(const SubmitRequest& request, bool dry_run);
  // Reads the plan from a dry run's output (stderr's summary line, stdout's step lines).
  static SubmitPlan parse_plan(const QString& out, const QString& err);
  // The error of a failed lmk command: its "lmk: error:" lines, else its last line.
  static QString error_text(const QString& output);
  // How a local queue ended, from its log: its "lmk: error:" lines, else lmk submit's own
  // summary ("9 jobs did not finish ..."), else the last line. The log ends with the jobs and
  // study tables, whose last line (a footnote) says nothing about the queue.
  static QString queue_end_text(const QString& log);

  // Checks the request with a dry run, then submits it; submitted() once the jobs are recorded,
  // failed() when lmk refuses (the message names the key or the cause).
  void submit(const SubmitRequest& request);
  // lmk cancel IDS --db DB; cancel_done() with what lmk said.
  void cancel(const QList<qint64>& run_ids, const QString& db);
  // lmk jobs --db DB, output ignored: it brings the store up to date with Slurm and with local
  // jobs whose queue is gone. Does nothing while the last one still runs.
  void sync_jobs(const QString& db);
  // Whether a submission is being checked or recorded.
  bool busy() const { return pending_ > 0; }

 signals:
  void submitted(const QString& db_path, const QString& study_dir, const QString& log_path);
  void failed(const QString& message);
  // A local queue started here ended (exit status 0: every job finished).
  void queue_ended(const QString& db_path, int exit_code, const QString& last_line);
  void cancel_done(bool ok, const QString& message);

 private:
  void start_submit(const SubmitRequest& request, const SubmitPlan& plan);
  void start_detached_queue(const SubmitRequest& request, const SubmitPlan& plan);
  void watch_queues();

  // A detached local queue: submitted() once its log says the jobs are recorded.
  struct Queue {
    QString db, study_dir, log_path, exit_path;
    qint64 pid = 0;  // the sh that writes exit_path: gone without it, the queue died
    bool recorded = false;
    qint64 log_read = 0;  // how much of the log was read (each tick reads what came since)
    QString partial;      // the log's last line, not ended yet
  };
  QList<Queue> queues_;
  QTimer* queue_timer_ = nullptr;
  QProcess* sync_ = nullptr;
  int pending_ = 0;
};

}  // namespace lmk::widgets
