#include "widgets/job_model.h"

#include <QBrush>
#include <QColor>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QSqlQuery>

#include <cmath>

#include "core/util/file.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {

namespace {

QDateTime parse_time(const QString& text) {
  QDateTime time = QDateTime::fromString(text, Qt::ISODateWithMs);
  if (!time.isValid()) time = QDateTime::fromString(text, Qt::ISODate);
  return time;
}

QJsonObject json_object(const QString& text) {
  return QJsonDocument::fromJson(text.toUtf8()).object();
}

}  // namespace

QString JobRow::latest() const {
  if ((status == QLatin1String("FAILED") || status == QLatin1String("KILLED")) &&
      !error_text.isEmpty())
    return error_text.simplified();
  return progress_text;
}

double JobRow::eta_at(const QDateTime& now) const {
  if (eta_s < 0 || status != QLatin1String("RUNNING")) return -1;
  const double since = updated.isValid() ? updated.msecsTo(now) / 1000.0 : 0;
  return std::max(0.0, eta_s - std::max(0.0, since));
}

bool JobRow::operator==(const JobRow& o) const {
  return run_id == o.run_id && run_name == o.run_name && kind == o.kind && status == o.status &&
         error_text == o.error_text && experiment == o.experiment && has_job == o.has_job &&
         step == o.step && executor == o.executor && external_id == o.external_id &&
         log_path == o.log_path && study_dir == o.study_dir && attempts == o.attempts &&
         ended == o.ended && progress_done == o.progress_done &&
         progress_total == o.progress_total && eta_s == o.eta_s &&
         progress_text == o.progress_text && updated == o.updated;
}

JobSnapshot load_jobs(const QSqlDatabase& db, bool include_ended) {
  JobSnapshot snapshot;
  snapshot.has_jobs_table = has_table(db, QStringLiteral("jobs"));
  // Runs written by a command outside the job layer (lmk train --db) are watched too while
  // they run.
  const QString running_without_job = QStringLiteral(
      "SELECT r.id, r.name, r.kind, r.status, r.error_text, e.name, 0, r.name, '', '', '', '', "
      "0, 0, -1, -1, NULL, '', COALESCE(r.started_at, r.created_at) "
      "FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE r.status = 'RUNNING'");
  QString sql;
  if (snapshot.has_jobs_table) {
    sql = QStringLiteral(
              "SELECT r.id, r.name, r.kind, r.status, r.error_text, e.name, 1, j.step, "
              "j.executor, j.external_id, j.log_path, j.study_dir, j.attempts, j.ended, "
              "j.progress_done, j.progress_total, j.eta_s, j.progress_text, j.updated_at "
              "FROM jobs j JOIN runs r ON r.id = j.run_id "
              "JOIN experiments e ON e.id = r.experiment_id %1 "
              "UNION ALL %2 AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.run_id = r.id) "
              "ORDER BY 1")
              .arg(include_ended ? QString() : QStringLiteral("WHERE j.ended = 0"),
                   running_without_job);
  } else {
    sql = running_without_job + QStringLiteral(" ORDER BY 1");
  }
  QSqlQuery query = run_query(db, sql);
  while (query.next()) {
    JobRow row;
    row.run_id = query.value(0).toLongLong();
    row.run_name = query.value(1).toString();
    row.kind = query.value(2).toString();
    row.status = query.value(3).toString();
    row.error_text = query.value(4).toString();
    row.experiment = query.value(5).toString();
    row.has_job = query.value(6).toInt() != 0;
    row.step = query.value(7).toString();
    row.executor = query.value(8).toString();
    row.external_id = query.value(9).toString();
    row.log_path = query.value(10).toString();
    row.study_dir = query.value(11).toString();
    row.attempts = query.value(12).toInt();
    row.ended = query.value(13).toInt() != 0;
    row.progress_done = query.value(14).toLongLong();
    row.progress_total = query.value(15).toLongLong();
    row.eta_s = query.value(16).isNull() ? -1 : query.value(16).toDouble();
    row.progress_text = query.value(17).toString();
    row.updated = parse_time(query.value(18).toString());
    snapshot.rows.push_back(std::move(row));
  }
  return snapshot;
}

const QStringList& training_curve_keys() {
  static const QStringList keys = {QStringLiteral("loss"), QStringLiteral("lr"),
                                   QStringLiteral("tokens_per_s")};
  return keys;
}

RunCurves load_run_curves(const QSqlDatabase& db, qint64 run_id, const CurveSteps& after,
                          int max_points, const QStringList& keys) {
  RunCurves curves;
  curves.run_id = run_id;
  const int most = std::max(1, max_points);
  // One read transaction: every key from the same snapshot of the store. Each key is an
  // ordered scan of the (run_id, key, step) index, thinned here to every stride-th point and
  // its last one (so the curve ends where the run is); a window function over all keys at once
  // sorts millions of rows instead.
  // Ended however the reads end (a throw included): an open read transaction would pin this
  // pooled thread's connection to an old snapshot for its next reads.
  struct ReadTransaction {
    QSqlDatabase connection;
    bool open;
    explicit ReadTransaction(QSqlDatabase db) : connection(db), open(connection.transaction()) {}
    ~ReadTransaction() {
      if (open) connection.rollback();
    }
  } transaction(db);
  QSqlQuery start = run_query(db,
                              QStringLiteral("SELECT COALESCE(NULLIF(started_at, ''), (SELECT "
                                             "MIN(time) FROM metrics WHERE run_id = ?)) FROM "
                                             "runs WHERE id = ?"),
                              {run_id, run_id});
  const QVariant started = start.next() ? start.value(0) : QVariant();
  for (const QString& key : keys) {
    const qint64 from = after.value(key, -1);
    QSqlQuery count = run_query(
        db,
        QStringLiteral("SELECT COUNT(*) FROM metrics WHERE run_id = ? AND key = ? AND step > ?"),
        {run_id, key, from});
    const qint64 total = count.next() ? count.value(0).toLongLong() : 0;
    if (total == 0) continue;
    const qint64 stride = (total + most - 1) / most;
    QSqlQuery query = run_query(
        db,
        QStringLiteral("SELECT step, value, (julianday(time) - julianday(?)) * 86400.0 FROM "
                       "metrics WHERE run_id = ? AND key = ? AND step > ? ORDER BY step"),
        {started, run_id, key, from});
    CurveSeries series;
    series.key = key;
    for (qint64 n = 0; query.next(); ++n) {
      const qint64 step = query.value(0).toLongLong();
      series.last_step = std::max(series.last_step, step);
      if (n % stride != 0 && n != total - 1) continue;
      if (query.value(1).isNull()) continue;  // NaN
      series.steps.push_back(static_cast<double>(step));
      series.values.push_back(query.value(1).toDouble());
      series.seconds.push_back(query.value(2).isNull() ? NAN : query.value(2).toDouble());
    }
    curves.series.push_back(std::move(series));
  }
  return curves;
}

TrainingRuns load_training_runs(const QSqlDatabase& db) {
  TrainingRuns found;
  // metric_latest holds a row per run and key: small, and what a run logged at a glance.
  QSqlQuery runs = run_query(
      db,
      QStringLiteral("SELECT r.id, e.name, r.name, r.kind, r.status FROM runs r JOIN "
                     "experiments e ON e.id = r.experiment_id WHERE EXISTS (SELECT 1 FROM "
                     "metric_latest m WHERE m.run_id = r.id AND m.key = 'loss') ORDER BY r.id"));
  while (runs.next())
    found.runs.push_back({runs.value(0).toLongLong(), runs.value(1).toString(),
                          runs.value(2).toString(), runs.value(3).toString(),
                          runs.value(4).toString()});
  QSqlQuery keys = run_query(
      db, QStringLiteral("SELECT DISTINCT key FROM metric_latest WHERE run_id IN (SELECT run_id "
                         "FROM metric_latest WHERE key = 'loss') ORDER BY key"));
  while (keys.next()) found.keys << keys.value(0).toString();
  return found;
}

RequeueTarget load_requeue_target(const QSqlDatabase& db, qint64 run_id) {
  RequeueTarget target;
  QSqlQuery job = run_query(
      db,
      QStringLiteral("SELECT j.study_dir, j.executor, r.config FROM jobs j JOIN runs r ON "
                     "r.id = j.run_id WHERE j.run_id = ?"),
      {run_id});
  if (!job.next()) {
    target.error = QStringLiteral("run %1 is not a job").arg(run_id);
    return target;
  }
  target.study_dir = job.value(0).toString();
  target.executor = job.value(1).toString();
  // A training or evaluation step replaces its run's config with its own: the study is then
  // read from another run of the same submission, the nearest first.
  QJsonObject config = json_object(job.value(2).toString());
  if (!config.contains(QStringLiteral("study"))) {
    QSqlQuery others =
        run_query(db,
                  QStringLiteral("SELECT r.config FROM jobs j JOIN runs r ON r.id = j.run_id "
                                 "WHERE j.study_dir = ? AND r.config LIKE '%\"study\"%' "
                                 "ORDER BY abs(r.id - ?) LIMIT 50"),
                  {target.study_dir, run_id});
    while (others.next() && !config.contains(QStringLiteral("study")))
      config = json_object(others.value(0).toString());
  }
  target.config = config.value(QStringLiteral("study")).toString();
  target.profile = config.value(QStringLiteral("profile")).toString();
  if (target.config.isEmpty())
    target.error = QStringLiteral("no run of %1 records the study config it was submitted from")
                       .arg(target.study_dir);
  return target;
}

QString read_log_tail(const QString& path, int count, bool progress_events) {
  // 200 lines of a log are far less than this; progress bars redraw many times per line.
  constexpr size_t kTailBytes = 256 * 1024;
  QString text = QString::fromStdString(read_file_tail(path.toStdString(), kTailBytes));
  text.replace(QStringLiteral("\r\n"), QStringLiteral("\n"));
  QStringList lines;
  for (const QString& line : text.split(QRegularExpression(QStringLiteral("[\r\n]")))) {
    const QString trimmed = line.trimmed();
    if (trimmed.isEmpty()) continue;
    if (!progress_events && trimmed.startsWith(QLatin1String("{\"")) &&
        trimmed.contains(QLatin1String("\"event\":")))
      continue;
    lines << line;
  }
  if (lines.size() > count) lines = lines.mid(lines.size() - count);
  return lines.join(QChar('\n'));
}

JobModel::JobModel(QObject* parent) : QAbstractTableModel(parent) {}

int JobModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int JobModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QString JobModel::progress_text(const JobRow& row) {
  if (row.progress_total <= 0 || row.progress_done < 0) return {};
  const double share = static_cast<double>(row.progress_done) / row.progress_total;
  return QStringLiteral("%1/%2 (%3%)")
      .arg(row.progress_done)
      .arg(row.progress_total)
      .arg(static_cast<int>(std::floor(100 * share)));
}

QString JobModel::duration_text(double seconds) {
  if (seconds < 0) return {};
  const qint64 s = static_cast<qint64>(std::llround(seconds));
  if (s < 60) return QStringLiteral("%1 s").arg(s);
  if (s < 3600) return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
  return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QChar('0'));
}

QVariant JobModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_.size()) return {};
  const JobRow& row = rows_[index.row()];
  if (role == kRunIdRole) return row.run_id;
  if (role == kProgressRole && index.column() == kProgress) {
    if (row.progress_total <= 0 || row.progress_done < 0) return -1.0;
    return std::min(1.0, static_cast<double>(row.progress_done) / row.progress_total);
  }
  if (role == Qt::ForegroundRole && index.column() == kStatus) {
    if (row.status == QLatin1String("FAILED")) return QBrush(QColor(0xc0, 0x1c, 0x28));
    if (row.status == QLatin1String("KILLED")) return QBrush(QColor(0xb3, 0x5c, 0x00));
    if (row.status == QLatin1String("RUNNING")) return QBrush(QColor(0x1a, 0x5f, 0xb4));
    if (row.status == QLatin1String("FINISHED")) return QBrush(QColor(0x26, 0x80, 0x3a));
    return {};
  }
  if (role == Qt::ToolTipRole) {
    if (index.column() == kLatest) return row.latest();
    if (index.column() == kStep) return row.log_path;
    return {};
  }
  if (role != Qt::DisplayRole && role != kSortRole) return {};
  const bool sorting = role == kSortRole;
  switch (index.column()) {
    case kRun:
      return row.run_id;
    case kStep:
      return row.step;
    case kStatus:
      return row.status;
    case kAttempts:
      return row.has_job ? QVariant(row.attempts) : QVariant();
    case kProgress:
      if (sorting) return data(index, kProgressRole);
      return progress_text(row);
    case kEta: {
      const double eta = row.eta_at(now_);
      if (sorting) return eta;
      return duration_text(eta);
    }
    case kLatest:
      return row.latest();
    case kExecutor:
      return row.has_job ? row.executor : QStringLiteral("(no job)");
    case kExternalId:
      return row.external_id;
    case kUpdated:
      if (sorting) return row.updated;
      return row.updated.isValid() ? row.updated.toLocalTime().toString(QStringLiteral("HH:mm:ss"))
                                   : QString();
    default:
      return {};
  }
}

QVariant JobModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const names[kColumnCount] = {"Run",      "Step",   "Status", "Attempts",
                                                  "Progress", "ETA",    "Latest", "Executor",
                                                  "Job",      "Updated"};
  return section >= 0 && section < kColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

void JobModel::set_rows(QVector<JobRow> rows) {
  now_ = QDateTime::currentDateTimeUtc();
  bool ordered = true;  // load_jobs() gives them by run id
  for (int i = 1; ordered && i < rows.size(); ++i) ordered = rows[i - 1].run_id < rows[i].run_id;
  if (!ordered) {
    beginResetModel();
    rows_ = std::move(rows);
    row_of_run_.clear();
    for (int i = 0; i < rows_.size(); ++i) row_of_run_.insert(rows_[i].run_id, i);
    endResetModel();
    return;
  }
  // Rows that went (a job that ended) are removed, not the model reset: a reset would clear the
  // view's selection, and selecting the run again would reload its curves and log.
  QSet<qint64> wanted;
  for (const JobRow& row : rows) wanted.insert(row.run_id);
  for (int end = static_cast<int>(rows_.size()) - 1; end >= 0;) {
    if (wanted.contains(rows_[end].run_id)) {
      --end;
      continue;
    }
    int first = end;
    while (first > 0 && !wanted.contains(rows_[first - 1].run_id)) --first;
    beginRemoveRows({}, first, end);
    rows_.remove(first, end - first + 1);
    endRemoveRows();
    end = first - 1;
  }
  // What is left is in order and a part of `rows`: update it in place, insert the new rows.
  for (int i = 0; i < rows.size(); ++i) {
    if (i < rows_.size() && rows_[i].run_id == rows[i].run_id) {
      const bool changed = rows_[i] != rows[i];
      rows_[i] = std::move(rows[i]);
      if (changed)
        emit dataChanged(index(i, 0), index(i, kColumnCount - 1));
      else if (rows_[i].status == QLatin1String("RUNNING"))
        emit dataChanged(index(i, kEta), index(i, kEta));  // the countdown moved
      continue;
    }
    int last = i;
    while (last + 1 < rows.size() && (i >= rows_.size() || rows[last + 1].run_id < rows_[i].run_id))
      ++last;
    beginInsertRows({}, i, last);
    for (int k = i; k <= last; ++k) rows_.insert(k, std::move(rows[k]));
    endInsertRows();
    i = last;
  }
  row_of_run_.clear();
  for (int i = 0; i < rows_.size(); ++i) row_of_run_.insert(rows_[i].run_id, i);
}

const JobRow* JobModel::find(qint64 run_id) const {
  const auto it = row_of_run_.constFind(run_id);
  return it == row_of_run_.constEnd() ? nullptr : &rows_[it.value()];
}

}  // namespace lmk::widgets
