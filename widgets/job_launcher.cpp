#include "widgets/job_launcher.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTimer>

#include <functional>

#include "widgets/store_connection.h"

namespace lmk::widgets {

namespace {

QString read_text(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

QString last_line(const QString& text) {
  const QStringList lines =
      text.split(QRegularExpression(QStringLiteral("[\r\n]")), Qt::SkipEmptyParts);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!it->trimmed().isEmpty()) return it->trimmed();
  return {};
}

// Runs lmk with `arguments`; `done(exit_code, stdout, stderr)` when it ends (exit code -1: it
// could not start or crashed).
void run_lmk(QObject* owner, const QStringList& arguments,
             std::function<void(int, QString, QString)> done) {
  auto* process = new QProcess(owner);
  QObject::connect(process, &QProcess::finished, owner,
                   [process, done](int code, QProcess::ExitStatus status) {
                     process->deleteLater();
                     done(status == QProcess::NormalExit ? code : -1,
                          QString::fromUtf8(process->readAllStandardOutput()),
                          QString::fromUtf8(process->readAllStandardError()));
                   });
  QObject::connect(
      process, &QProcess::errorOccurred, owner, [process, done](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;
        process->deleteLater();
        done(-1, QString(),
             QStringLiteral("cannot run %1: %2").arg(process->program(), process->errorString()));
      });
  process->start(lmk_program(), arguments);
}

}  // namespace

JobLauncher::JobLauncher(QObject* parent) : QObject(parent) {
  queue_timer_ = new QTimer(this);
  queue_timer_->setInterval(250);
  connect(queue_timer_, &QTimer::timeout, this, &JobLauncher::watch_queues);
}

JobLauncher::~JobLauncher() = default;

QStringList JobLauncher::submit_arguments(const SubmitRequest& request, bool dry_run) {
  QStringList args = {QStringLiteral("submit"), request.config, QStringLiteral("--executor"),
                      request.executor.isEmpty() ? QStringLiteral("local") : request.executor};
  if (!request.profile.isEmpty()) args << QStringLiteral("--profile") << request.profile;
  if (!request.db.isEmpty()) args << QStringLiteral("--db") << request.db;
  if (!request.dir.isEmpty()) args << QStringLiteral("--dir") << request.dir;
  if (dry_run) args << QStringLiteral("--dry-run");
  return args;
}

SubmitPlan JobLauncher::parse_plan(const QString& out, const QString& err) {
  SubmitPlan plan;
  // "lmk submit: NAME, profile P, 1 cell, 38 steps in DIR, results in DB (experiment E)"
  static const QRegularExpression summary(QStringLiteral(
      R"(lmk submit: .*, (\d+) steps in (.+), results in (.+) \(experiment ([^)]+)\))"));
  const QRegularExpressionMatch match = summary.match(err);
  if (match.hasMatch()) {
    plan.steps = match.captured(1).toInt();
    plan.study_dir = match.captured(2);
    plan.db = match.captured(3);
    plan.experiment = match.captured(4);
  }
  static const QRegularExpression run_line(QStringLiteral("^run +\\S"),
                                           QRegularExpression::MultilineOption);
  plan.to_run = static_cast<int>(out.count(run_line));
  return plan;
}

QString JobLauncher::error_text(const QString& output) {
  QStringList errors;
  static const QRegularExpression prefix(QStringLiteral("^lmk(?: [a-z]+)?: error: "));
  for (const QString& line : output.split(QChar('\n'))) {
    if (prefix.match(line).hasMatch()) errors << QString(line).remove(prefix).trimmed();
  }
  return errors.isEmpty() ? last_line(output) : errors.join(QChar('\n'));
}

void JobLauncher::submit(const SubmitRequest& request) {
  ++pending_;
  run_lmk(this, submit_arguments(request, /*dry_run=*/true),
          [this, request](int code, const QString& out, const QString& err) {
            if (code != 0) {
              --pending_;
              emit failed(error_text(err + out));
              return;
            }
            const SubmitPlan plan = parse_plan(out, err);
            if (plan.db.isEmpty()) {
              --pending_;
              emit failed(QStringLiteral("lmk submit did not say where its results go:\n%1")
                              .arg(err.trimmed()));
              return;
            }
            start_submit(request, plan);
          });
}

void JobLauncher::start_submit(const SubmitRequest& request, const SubmitPlan& plan) {
  if (request.executor != QLatin1String("slurm")) {
    start_detached_queue(request, plan);
    return;
  }
  run_lmk(this, submit_arguments(request, false),
          [this, plan](int code, const QString& out, const QString& err) {
            --pending_;
            if (code != 0)
              emit failed(error_text(err + out));
            else
              emit submitted(plan.db, plan.study_dir, QString());
          });
}

void JobLauncher::start_detached_queue(const SubmitRequest& request, const SubmitPlan& plan) {
  const QString logs = QDir(plan.study_dir).filePath(QStringLiteral("logs"));
  if (!QDir().mkpath(logs)) {
    --pending_;
    emit failed(QStringLiteral("cannot create %1").arg(logs));
    return;
  }
  const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmsszzz"));
  Queue queue;
  queue.db = plan.db;
  queue.study_dir = plan.study_dir;
  queue.log_path = QDir(logs).filePath(QStringLiteral("submit-%1.log").arg(stamp));
  queue.exit_path = QDir(logs).filePath(QStringLiteral("submit-%1.exit").arg(stamp));
  // sh keeps the queue's exit status; setsid puts it out of reach of the terminal's hangup.
  QStringList args = {QStringLiteral("-c"),
                      QStringLiteral("log=$1; status=$2; shift 2; \"$@\" >\"$log\" 2>&1; "
                                     "echo $? >\"$status\""),
                      QStringLiteral("lmk-submit"),
                      queue.log_path,
                      queue.exit_path,
                      lmk_program()};
  args << submit_arguments(request, false);
  QString program = QStringLiteral("/bin/sh");
  const QString setsid = QStandardPaths::findExecutable(QStringLiteral("setsid"));
  if (!setsid.isEmpty()) {
    args.prepend(program);
    program = setsid;
  }
  QProcess process;
  process.setProgram(program);
  process.setArguments(args);
  process.setStandardInputFile(QProcess::nullDevice());
  process.setStandardOutputFile(QProcess::nullDevice());
  process.setStandardErrorFile(QProcess::nullDevice());
  if (!process.startDetached()) {
    --pending_;
    emit failed(QStringLiteral("cannot start %1: %2").arg(program, process.errorString()));
    return;
  }
  queues_ << queue;
  queue_timer_->start();
}

void JobLauncher::watch_queues() {
  for (int i = 0; i < queues_.size();) {
    Queue& queue = queues_[i];
    const QString log = read_text(queue.log_path);
    // The queue's second summary line comes once its jobs are in the store.
    if (!queue.recorded &&
        log.contains(QRegularExpression(QStringLiteral("lmk submit: \\d+ jobs")))) {
      queue.recorded = true;
      --pending_;
      emit submitted(queue.db, queue.study_dir, queue.log_path);
    }
    if (!QFileInfo::exists(queue.exit_path)) {
      ++i;
      continue;
    }
    bool number = false;
    const int code = read_text(queue.exit_path).trimmed().toInt(&number);
    const Queue ended = queues_.takeAt(i);
    if (!ended.recorded) {
      --pending_;
      emit failed(error_text(log));
    }
    emit queue_ended(ended.db, number ? code : -1, error_text(log));
  }
  if (queues_.isEmpty()) queue_timer_->stop();
}

void JobLauncher::cancel(const QList<qint64>& run_ids, const QString& db) {
  QStringList args = {QStringLiteral("cancel")};
  for (qint64 id : run_ids) args << QString::number(id);
  args << QStringLiteral("--db") << db;
  run_lmk(this, args, [this](int code, const QString& out, const QString& err) {
    emit cancel_done(code == 0, code == 0 ? (out + err).trimmed() : error_text(err + out));
  });
}

void JobLauncher::sync_jobs(const QString& db) {
  if (sync_ != nullptr) return;
  sync_ = new QProcess(this);
  connect(sync_, &QProcess::finished, this, [this] {
    sync_->deleteLater();
    sync_ = nullptr;
  });
  connect(sync_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart) return;
    sync_->deleteLater();
    sync_ = nullptr;
  });
  sync_->setStandardOutputFile(QProcess::nullDevice());
  sync_->setStandardErrorFile(QProcess::nullDevice());
  sync_->start(lmk_program(), {QStringLiteral("jobs"), QStringLiteral("--db"), db});
}

}  // namespace lmk::widgets
