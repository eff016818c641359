#include "widgets/job_model.h"

#include <QBrush>
#include <QColor>
#include <QRegularExpression>
#include <QSet>

#include <cmath>

#include "core/store/results_store.h"
#include "core/util/file.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {

namespace {

QDateTime parse_time(const QString& text) {
  QDateTime time = QDateTime::fromString(text, Qt::ISODateWithMs);
  if (!time.isValid()) time = QDateTime::fromString(text, Qt::ISODate);
  return time;
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

JobSnapshot load_jobs(const ResultsStore& db, bool include_ended) {
  JobSnapshot snapshot;
  // Runs written by a command outside the job layer (lmk train --db) are watched too while
  // they run.
  for (const MonitoredRun& run : db.monitored_runs(include_ended)) {
    JobRow row;
    row.run_id = run.run_id;
    row.run_name = QString::fromStdString(run.run_name);
    row.kind = QString::fromStdString(run.kind);
    row.status = QString::fromStdString(run.status);
    row.error_text = QString::fromStdString(run.error_text);
    row.experiment = QString::fromStdString(run.experiment);
    row.has_job = run.job.has_value();
    if (run.job) {
      const JobRecord& job = *run.job;
      row.step = QString::fromStdString(job.step);
      row.executor = QString::fromStdString(job.executor);
      row.external_id = QString::fromStdString(job.external_id);
      row.log_path = QString::fromStdString(job.log_path);
      row.study_dir = QString::fromStdString(job.study_dir);
      row.attempts = static_cast<int>(job.attempts);
      row.ended = job.ended;
      row.progress_done = job.progress_done;
      row.progress_total = job.progress_total;
      row.eta_s = job.eta_s;
      row.progress_text = QString::fromStdString(job.progress_text);
      row.updated = parse_time(QString::fromStdString(job.updated_at));
    } else {
      row.step = row.run_name;
      row.progress_done = row.progress_total = -1;
      row.eta_s = -1;
      row.updated = parse_time(QString::fromStdString(run.since));
    }
    snapshot.rows.push_back(std::move(row));
  }
  return snapshot;
}

const QStringList& training_curve_keys() {
  static const QStringList keys = {QStringLiteral("loss"), QStringLiteral("lr"),
                                   QStringLiteral("tokens_per_s")};
  return keys;
}

RunCurves load_run_curves(const ResultsStore& db, qint64 run_id, const CurveSteps& after,
                          int max_points, const QStringList& keys) {
  RunCurves curves;
  curves.run_id = run_id;
  std::vector<std::pair<std::string, int64_t>> asked;
  for (const QString& key : keys) asked.emplace_back(key.toStdString(), after.value(key, -1));
  for (const MetricCurve& curve : db.metric_curves(run_id, asked, max_points)) {
    CurveSeries series;
    series.key = QString::fromStdString(curve.key);
    series.last_step = curve.last_step;
    for (size_t i = 0; i < curve.steps.size(); ++i) {
      series.steps.push_back(static_cast<double>(curve.steps[i]));
      series.values.push_back(curve.values[i]);
      series.seconds.push_back(curve.seconds[i]);
    }
    curves.series.push_back(std::move(series));
  }
  return curves;
}

TrainingRuns load_training_runs(const ResultsStore& store) {
  TrainingRuns found;
  for (const RunSummary& run : store.runs_logging("loss"))
    found.runs.push_back({run.id, QString::fromStdString(run.experiment),
                          QString::fromStdString(run.name), QString::fromStdString(run.kind),
                          QString::fromStdString(run.status)});
  for (const std::string& key : store.metric_keys_of_runs_logging("loss"))
    found.keys << QString::fromStdString(key);
  return found;
}

RequeueTarget load_requeue_target(const ResultsStore& db, qint64 run_id) {
  const JobSubmission submission = db.job_submission(run_id);
  RequeueTarget target;
  target.config = QString::fromStdString(submission.study_config);
  target.profile = QString::fromStdString(submission.profile);
  target.study_dir = QString::fromStdString(submission.study_dir);
  target.executor = QString::fromStdString(submission.executor);
  target.error = QString::fromStdString(submission.error);
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
