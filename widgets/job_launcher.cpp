#include "widgets/job_launcher.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTimer>

#include <cerrno>
#include <functional>

#include <signal.h>
#include <sys/types.h>

#include "core/util/file.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {

namespace {

// The end of a file, enough for its error lines and last line; "" when it cannot be read.
QString read_tail(const QString& path) {
  return QString::fromStdString(read_file_tail(QFile::encodeName(path).toStdString(), 64 * 1024));
}

// Paths as lmk's arguments: absolute, so that one starting with '-' is not read as an option.
QString path_argument(const QString& path) {
  return path.isEmpty() ? path : QFileInfo(path).absoluteFilePath();
}

bool process_alive(qint64 pid) {
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// An attached `lmk submit --executor slurm` only runs sbatch; this long means it hangs.
constexpr int kSubmitTimeoutMs = 120 * 1000;

QString last_line(const QString& text) {
  const QStringList lines =
      text.split(QRegularExpression(QStringLiteral("[\r\n]")), Qt::SkipEmptyParts);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!it->trimmed().isEmpty()) return it->trimmed();
  return {};
}

}  // namespace

QProcess* run_lmk(QObject* owner, const QStringList& arguments,
                  std::function<void(int, QString, QString)> done, int timeout_ms,
                  const QProcessEnvironment& environment) {
  auto* process = new QProcess(owner);
  if (timeout_ms > 0)
    QTimer::singleShot(timeout_ms, process, [process] {
      process->setProperty("timed_out", true);
      process->kill();
    });
  QObject::connect(process, &QProcess::finished, owner,
                   [process, done, timeout_ms](int code, QProcess::ExitStatus status) {
                     process->deleteLater();
                     QString err = QString::fromUtf8(process->readAllStandardError());
                     if (process->property("timed_out").toBool())
                       err += QStringLiteral("\nlmk %1 did not end within %2 s: stopped")
                                  .arg(process->arguments().value(0))
                                  .arg(timeout_ms / 1000);
                     done(status == QProcess::NormalExit ? code : -1,
                          QString::fromUtf8(process->readAllStandardOutput()), err);
                   });
  QObject::connect(
      process, &QProcess::errorOccurred, owner, [process, done](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;
        process->deleteLater();
        done(-1, QString(),
             QStringLiteral("cannot run %1: %2").arg(process->program(), process->errorString()));
      });
  process->setProcessEnvironment(environment);
  process->start(lmk_program(), arguments);
  return process;
}

JobLauncher::JobLauncher(QObject* parent) : QObject(parent) {
  queue_timer_ = new QTimer(this);
  queue_timer_->setInterval(1000);
  connect(queue_timer_, &QTimer::timeout, this, &JobLauncher::watch_queues);
}

JobLauncher::~JobLauncher() = default;

QStringList JobLauncher::submit_arguments(const SubmitRequest& request, bool dry_run) {
  QStringList args = {QStringLiteral("submit"), path_argument(request.config),
                      QStringLiteral("--executor"),
                      QString::fromLatin1(executor_name(request.executor))};
  if (!request.profile.isEmpty()) args << QStringLiteral("--profile") << request.profile;
  if (!request.db.isEmpty()) args << QStringLiteral("--db") << path_argument(request.db);
  if (!request.dir.isEmpty()) args << QStringLiteral("--dir") << path_argument(request.dir);
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

QString JobLauncher::queue_end_text(const QString& log) {
  static const QRegularExpression error(QStringLiteral("^lmk(?: [a-z]+)?: error: "),
                                        QRegularExpression::MultilineOption);
  if (error.match(log).hasMatch()) return error_text(log);
  static const QRegularExpression summary(
      QStringLiteral("^lmk submit: \\d+ jobs? did not finish.*$"),
      QRegularExpression::MultilineOption);
  QString found;
  for (auto it = summary.globalMatch(log); it.hasNext();) found = it.next().captured(0);
  return found.isEmpty() ? last_line(log) : found.trimmed();
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
  if (request.executor == ExecutorKind::Local) {
    start_detached_queue(request, plan);
    return;
  }
  run_lmk(
      this, submit_arguments(request, false),
      [this, plan](int code, const QString& out, const QString& err) {
        --pending_;
        if (code != 0)
          emit failed(error_text(err + out));
        else
          emit submitted(plan.db, plan.study_dir, QString());
      },
      kSubmitTimeoutMs);
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
  if (!process.startDetached(&queue.pid)) {
    --pending_;
    emit failed(QStringLiteral("cannot start %1: %2").arg(program, process.errorString()));
    return;
  }
  queues_ << queue;
  queue_timer_->start();
}

void JobLauncher::watch_queues() {
  static const QRegularExpression recorded(QStringLiteral("lmk submit: \\d+ jobs"));
  for (int i = 0; i < queues_.size();) {
    Queue& queue = queues_[i];
    // Only what the log gained since the last tick: the queue runs for hours.
    QFile log(queue.log_path);
    if (!queue.recorded && log.open(QIODevice::ReadOnly) && log.size() > queue.log_read &&
        log.seek(queue.log_read)) {
      const QByteArray added = log.readAll();
      queue.log_read += added.size();
      const QString text = queue.partial + QString::fromUtf8(added);
      queue.partial = text.mid(text.lastIndexOf(QChar('\n')) + 1).right(4096);
      // The queue's second summary line comes once its jobs are in the store.
      if (text.contains(recorded)) {
        queue.recorded = true;
        --pending_;
        const Queue copy = queue;  // a slot may start another queue (queues_ grows)
        emit submitted(copy.db, copy.study_dir, copy.log_path);
      }
    }
    // Whether the sh is gone is asked first: it writes the exit file before it ends.
    const bool gone = queues_[i].pid > 0 && !process_alive(queues_[i].pid);
    if (!QFileInfo::exists(queues_[i].exit_path) && !gone) {
      ++i;
      continue;
    }
    bool number = false;
    const int code = read_tail(queues_[i].exit_path).trimmed().toInt(&number);
    const Queue ended = queues_.takeAt(i);
    QString why = queue_end_text(read_tail(ended.log_path));
    if (!number)
      why = QStringLiteral("the queue (pid %1) ended without an exit status%2")
                .arg(ended.pid)
                .arg(why.isEmpty() ? QString() : QStringLiteral(": ") + why);
    if (!ended.recorded) {
      --pending_;
      emit failed(why);
    }
    emit queue_ended(ended.db, number ? code : -1, why);
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
