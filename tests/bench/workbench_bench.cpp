// The workbench at scale (issue 7: "stays responsive with 10 000 runs and 1 000 000 metric
// points"): grows a copy of a real results store and times each view on it.
//   lmk_workbench_bench [--store FILE] [--out FILE] [--reuse] [--baseline] [--runs 10000]
//                       [--experiments 10] [--train-runs 100] [--train-steps 10000]
//                       [--long-steps 1000000] [--timeout 300] [--pool-threads N]
//                       [--cases window,results,jobs,plots]
//   lmk_workbench_bench --cases explorer --explore-model DIR --explore-document FILE
//                       [--explore-granularity G] [--explore-max-length N] [--lmk FILE]
// The store: a copy of FILE (default: the GUI tests' fixture, lmk study of the micro profile;
// VACUUM INTO, so a store being written is copied consistently) grown in one transaction by
//   - `runs` eval runs in `experiments` experiments, each a copy of a real eval run (its config,
//     params, eval_results and per-query results with values scaled by 0.8–1.0, attention
//     profiles), named
//     sweep-NNN/<real name>; the last experiment's end still SCHEDULED / RUNNING / FAILED
//     (those without results); jobs rows for the runs of the last half of the experiments;
//   - `train-runs` finished training runs (params of a real one) of `train-steps` steps of loss,
//     lr and tokens_per_s, each with a finished job;
//   - one RUNNING pretraining of `long-steps` steps of the three (its job RUNNING, a log file):
//     the job monitor's worst case, and the run it selects first (it has the lowest new id).
// --baseline times the same cases on the plain copy; --reuse keeps the grown store of an earlier
// run at --out.
//
// Each case starts an action on a shown view (offscreen, 1400 x 900) and waits for the view to
// say it is done (loaded(), the pivot, the curves replotted; a synchronous call: its return).
// Measured: the wall time to done; the GUI thread's stalls, from a 5 ms QTimer (Qt::PreciseTimer)
// that runs through the case and 200 ms after it (the repaint that follows the data): the
// largest gap between two ticks and the 99th percentile of the gaps (5 ms = no stall); the
// process's peak RSS during the case (VmHWM, reset before it through /proc/self/clear_refs) and
// its RSS after it. LMK_BIN is /bin/true: the job monitor's `lmk jobs` sync must not change the
// store under the views. --pool-threads sizes QThreadPool::globalInstance(): the views' loads run
// on it (load_in_background), and so does the painting of Qt's raster engine, which waits for a
// free thread of it (docs/BENCHMARKS.md, "Workbench at scale").
#include <qcustomplot.h>
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSettings>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextStream>
#include <QThread>
#include <QThreadPool>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "widgets/attention_view.h"
#include "widgets/compare_view.h"
#include "widgets/curves_view.h"
#include "widgets/explorer_view.h"
#include "widgets/job_monitor_view.h"
#include "widgets/length_view.h"
#include "widgets/main_window.h"
#include "widgets/results_view.h"
#include "widgets/store_view.h"

using namespace lmk::widgets;

namespace {

QTextStream& out() {
  static QTextStream stream(stdout);
  return stream;
}

// ---- The store ---------------------------------------------------------------------------------

struct ScaleSpec {
  int eval_runs = 10000;
  int experiments = 10;
  int train_runs = 100;
  int train_steps = 10000;
  int long_steps = 1000000;
};

QSqlQuery exec(const QSqlDatabase& db, const QString& sql, const QVariantList& bindings = {}) {
  QSqlQuery query(db);
  query.setForwardOnly(true);
  bool ok = query.prepare(sql);
  for (const QVariant& value : bindings) query.addBindValue(value);
  ok = ok && query.exec();
  if (!ok)
    throw std::runtime_error(QStringLiteral("%1 (in: %2)")
                                 .arg(query.lastError().text(), sql.simplified())
                                 .toStdString());
  return query;
}

qlonglong scalar(const QSqlDatabase& db, const QString& sql, const QVariantList& bindings = {}) {
  QSqlQuery query = exec(db, sql, bindings);
  return query.next() ? query.value(0).toLongLong() : 0;
}

// A plain connection for the bench's own reads and writes (the views use store_connection).
QSqlDatabase open_plain(const QString& name, const QString& path, bool read_only) {
  QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
  db.setDatabaseName(path);
  if (read_only) db.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
  if (!db.open())
    throw std::runtime_error(
        QStringLiteral("%1: %2").arg(path, db.lastError().text()).toStdString());
  return db;
}

void copy_store(const QString& from, const QString& to) {
  for (const QString& suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")})
    QFile::remove(to + suffix);
  {
    QSqlDatabase source = open_plain(QStringLiteral("bench-source"), from, true);
    exec(source, QStringLiteral("VACUUM INTO ?"), {to});
    source.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("bench-source"));
}

// Training curves of `steps` steps for the runs [first, last]: loss falling towards 0.35, a
// learning rate with 6 % warm-up and linear decay, tokens per second around 7000.
void insert_training_metrics(const QSqlDatabase& db, qlonglong first, qlonglong last, int steps) {
  exec(db,
       QStringLiteral(
           "WITH RECURSIVE s(step) AS (SELECT 1 UNION ALL SELECT step + 1 FROM s WHERE step < ?), "
           "r(id) AS (SELECT id FROM runs WHERE id BETWEEN ? AND ?), "
           "k(key) AS (VALUES ('loss'), ('lr'), ('tokens_per_s')) "
           "INSERT INTO metrics(run_id, key, step, value, time) "
           "SELECT r.id, k.key, s.step, CASE k.key "
           "  WHEN 'loss' THEN 0.35 + 2.5 / (1.0 + s.step * 20.0 / {steps}) "
           "                  + (abs(random()) % 1000) / 20000.0 "
           "  WHEN 'lr' THEN 0.001 * min(s.step / ({steps} * 0.06), "
           "                             ({steps} - s.step) / ({steps} * 0.94)) "
           "  ELSE 6500.0 + abs(random()) % 1500 END, '2026-11-29T12:00:00.000Z' "
           "FROM r CROSS JOIN k CROSS JOIN s")
           .replace(QStringLiteral("{steps}"), QString::number(static_cast<double>(steps), 'f', 1)),
       {steps, first, last});
}

// Grows the copy at `path` as the header says; the long run's log goes to work_dir/logs.
void grow_store(const QString& path, const ScaleSpec& spec, const QString& work_dir) {
  QSqlDatabase db = open_plain(QStringLiteral("bench-writer"), path, false);
  exec(db, QStringLiteral("PRAGMA synchronous = OFF"));
  exec(db, QStringLiteral("PRAGMA temp_store = MEMORY"));
  const qlonglong sources =
      scalar(db, QStringLiteral("SELECT count(*) FROM runs WHERE kind = 'eval'"));
  if (sources == 0) throw std::runtime_error(path.toStdString() + ": no eval runs to copy");
  // The real runs whose config and params the training runs take.
  const qlonglong pretrain_source =
      scalar(db, QStringLiteral("SELECT id FROM runs WHERE kind IN ('pretrain', 'train') "
                                "ORDER BY kind = 'pretrain' DESC, id LIMIT 1"));
  const qlonglong train_source =
      scalar(db, QStringLiteral("SELECT id FROM runs WHERE kind IN ('pretrain', 'train') "
                                "ORDER BY kind = 'train' DESC, id LIMIT 1"));
  if (pretrain_source == 0)
    throw std::runtime_error(path.toStdString() + ": no training run to copy");
  const bool has_attention =
      scalar(db, QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name = "
                                "'attention_profiles'")) > 0;
  const bool has_query_results =
      scalar(db, QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name = "
                                "'eval_queries'")) > 0;
  const bool has_jobs =
      scalar(db, QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name = 'jobs'")) > 0;

  exec(db, QStringLiteral("BEGIN"));
  const qlonglong base = scalar(db, QStringLiteral("SELECT COALESCE(MAX(id), 0) FROM runs"));
  const qlonglong long_run = base + 1;
  const qlonglong first_train = base + 2, last_train = base + 1 + spec.train_runs;
  const qlonglong first_eval = last_train + 1;
  const int per_experiment = (spec.eval_runs + spec.experiments - 1) / spec.experiments;

  exec(db, QStringLiteral("INSERT INTO experiments(name, description) VALUES ('scale-train', "
                          "'lmk_workbench_bench: training runs')"));
  const qlonglong train_experiment = scalar(db, QStringLiteral("SELECT last_insert_rowid()"));
  qlonglong first_experiment = 0;
  for (int e = 0; e < spec.experiments; ++e) {
    exec(db,
         QStringLiteral("INSERT INTO experiments(name, description) VALUES (?, "
                        "'lmk_workbench_bench: copies of the real eval runs')"),
         {QStringLiteral("scale-%1").arg(e, 2, 10, QChar('0'))});
    if (e == 0) first_experiment = scalar(db, QStringLiteral("SELECT last_insert_rowid()"));
  }

  // The long pretraining (still running) and the finished training runs, with their curves.
  const QString run_columns = QStringLiteral(
      "INSERT INTO runs(id, experiment_id, name, kind, config, status, created_at, started_at, "
      "ended_at, host, device, code_revision) ");
  exec(db,
       run_columns + QStringLiteral("SELECT ?, ?, 'long/pretrain', 'pretrain', config, 'RUNNING', "
                                    "created_at, started_at, NULL, host, device, code_revision "
                                    "FROM runs WHERE id = ?"),
       {long_run, train_experiment, pretrain_source});
  exec(db, QStringLiteral("INSERT INTO params SELECT ?, key, value FROM params WHERE run_id = ?"),
       {long_run, pretrain_source});
  exec(db,
       QStringLiteral("WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 "
                      "< ?) ") +
           run_columns +
           QStringLiteral("SELECT ? + k.i, ?, printf('sweep-%03d/finetune', k.i), 'train', "
                          "r.config, 'FINISHED', r.created_at, r.started_at, r.ended_at, r.host, "
                          "r.device, r.code_revision FROM k JOIN runs r ON r.id = ?"),
       {spec.train_runs, first_train, train_experiment, train_source});
  exec(db,
       QStringLiteral("INSERT INTO params SELECT r.id, p.key, p.value FROM runs r JOIN params p "
                      "ON p.run_id = ? WHERE r.id BETWEEN ? AND ?"),
       {train_source, first_train, last_train});
  insert_training_metrics(db, long_run, long_run, spec.long_steps);
  insert_training_metrics(db, first_train, last_train, spec.train_steps);
  exec(db,
       QStringLiteral("INSERT OR REPLACE INTO metric_latest(run_id, key, step, value, time) "
                      "SELECT run_id, key, MAX(step), value, time FROM metrics "
                      "WHERE run_id BETWEEN ? AND ? GROUP BY run_id, key"),
       {long_run, last_train});

  // The eval runs: copy c (0-based) goes into experiment c / per_experiment and copies real eval
  // run (c mod per_experiment) mod sources, so names stay unique within an experiment.
  exec(db,
       QStringLiteral("CREATE TEMP TABLE bench_sources(i INTEGER PRIMARY KEY, run_id INTEGER)"));
  exec(db,
       QStringLiteral("INSERT INTO bench_sources SELECT ROW_NUMBER() OVER (ORDER BY id) - 1, "
                      "id FROM runs WHERE kind = 'eval' AND id <= ?"),
       {base});
  exec(db, QStringLiteral("CREATE TEMP TABLE bench_copies(new_id INTEGER PRIMARY KEY, src_id "
                          "INTEGER, j INTEGER, experiment INTEGER, status TEXT)"));
  exec(db,
       QStringLiteral(
           "WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < {runs}) "
           "INSERT INTO bench_copies SELECT {first} + k.i, s.run_id, k.i % {per}, k.i / {per}, "
           "CASE WHEN k.i / {per} < {experiments} - 1 OR k.i % {per} < {per} - 200 THEN 'FINISHED' "
           "     WHEN k.i % {per} >= {per} - 20 THEN 'FAILED' "
           "     WHEN k.i % {per} >= {per} - 50 THEN 'RUNNING' ELSE 'SCHEDULED' END "
           "FROM k JOIN bench_sources s ON s.i = (k.i % {per}) % {sources}")
           .replace(QStringLiteral("{runs}"), QString::number(spec.eval_runs))
           .replace(QStringLiteral("{first}"), QString::number(first_eval))
           .replace(QStringLiteral("{per}"), QString::number(per_experiment))
           .replace(QStringLiteral("{experiments}"), QString::number(spec.experiments))
           .replace(QStringLiteral("{sources}"), QString::number(sources)));
  exec(db,
       QStringLiteral(
           "INSERT INTO runs(id, experiment_id, name, kind, config, status, created_at, "
           "started_at, ended_at, host, device, code_revision, error_text) "
           "SELECT c.new_id, ? + c.experiment, printf('sweep-%03d/%s', c.j / ?, r.name), 'eval', "
           "r.config, c.status, r.created_at, "
           "CASE WHEN c.status = 'SCHEDULED' THEN NULL ELSE r.started_at END, "
           "CASE WHEN c.status IN ('FINISHED', 'FAILED') THEN r.ended_at END, r.host, r.device, "
           "r.code_revision, CASE WHEN c.status = 'FAILED' THEN "
           "'lmk eval: std::bad_alloc while encoding documents' ELSE '' END "
           "FROM bench_copies c JOIN runs r ON r.id = c.src_id ORDER BY c.new_id"),
       {first_experiment, sources});
  exec(db, QStringLiteral("INSERT INTO params SELECT c.new_id, p.key, p.value FROM bench_copies c "
                          "JOIN params p ON p.run_id = c.src_id ORDER BY c.new_id"));
  exec(db, QStringLiteral("INSERT INTO eval_results(run_id, dataset, split, metric, group_kind, "
                          "group_value, value) SELECT c.new_id, e.dataset, e.split, e.metric, "
                          "e.group_kind, e.group_value, "
                          "e.value * (0.8 + (abs(random()) % 2000) / 10000.0) "
                          "FROM bench_copies c JOIN eval_results e ON e.run_id = c.src_id "
                          "WHERE c.status = 'FINISHED' ORDER BY c.new_id"));
  // Per-query results (schema 4): every copy's queries, their metrics scaled like its results.
  if (has_query_results) {
    exec(db, QStringLiteral("INSERT INTO eval_queries(run_id, dataset, split, part, query_id, "
                            "evidence_position, target_length) SELECT c.new_id, q.dataset, "
                            "q.split, q.part, q.query_id, q.evidence_position, q.target_length "
                            "FROM bench_copies c JOIN eval_queries q ON q.run_id = c.src_id "
                            "WHERE c.status = 'FINISHED' ORDER BY c.new_id"));
    exec(db, QStringLiteral("INSERT INTO query_metrics(query, metric, value) SELECT n.id, "
                            "m.metric, m.value * (0.8 + (abs(random()) % 2000) / 10000.0) "
                            "FROM bench_copies c JOIN eval_queries o ON o.run_id = c.src_id "
                            "JOIN eval_queries n ON n.run_id = c.new_id AND n.dataset = o.dataset "
                            "AND n.split = o.split AND n.part = o.part AND n.query_id = o.query_id "
                            "JOIN query_metrics m ON m.query = o.id "
                            "WHERE c.status = 'FINISHED' ORDER BY n.id"));
  }
  if (has_attention)
    exec(db, QStringLiteral("INSERT INTO attention_profiles SELECT c.new_id, a.dataset, "
                            "a.length_group, a.layer, a.head, a.bin, a.bin_start, a.bin_end, "
                            "a.weight * (0.8 + (abs(random()) % 2000) / 10000.0) "
                            "FROM bench_copies c JOIN attention_profiles a ON a.run_id = c.src_id "
                            "WHERE c.status = 'FINISHED' ORDER BY c.new_id"));

  if (has_jobs) {
    const QString log_dir = QDir(work_dir).filePath(QStringLiteral("logs"));
    QDir().mkpath(log_dir);
    const QString long_log = QDir(log_dir).filePath(QStringLiteral("long-pretrain.log"));
    QFile log(long_log);
    if (!log.open(QIODevice::WriteOnly))
      throw std::runtime_error("cannot write " + long_log.toStdString());
    QTextStream text(&log);
    for (int step = 100; step <= spec.long_steps; step += 100) {
      text << "step " << step << "/" << spec.long_steps + spec.long_steps / 5 << " loss "
           << 0.35 + 2.5 / (1.0 + step * 20.0 / spec.long_steps) << "\n";
      if (step % 1000 == 0)
        text << "{\"event\":\"progress\",\"done\":" << step
             << ",\"total\":" << spec.long_steps + spec.long_steps / 5 << "}\n";
    }
    log.close();
    const QString job_columns = QStringLiteral(
        "INSERT INTO jobs(run_id, executor, study_dir, step, step_key, log_path, external_id, "
        "attempts, ended, progress_done, progress_total, eta_s, progress_text, updated_at) ");
    exec(db,
         job_columns + QStringLiteral("VALUES (?, 'local', ?, 'pretrain', 'long', ?, '', 1, 0, ?, "
                                      "?, 7200, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"),
         {long_run, work_dir, long_log, spec.long_steps, spec.long_steps + spec.long_steps / 5,
          QStringLiteral("step %1/%2").arg(spec.long_steps).arg(spec.long_steps * 6 / 5)});
    exec(db,
         job_columns +
             QStringLiteral("SELECT id, 'local', ?, 'finetune', printf('train-%d', id), "
                            "printf('%s/train-%d.log', ?, id), '', 1, 1, ?, ?, NULL, '', "
                            "'2026-11-29T12:00:00.000Z' FROM runs WHERE id BETWEEN ? AND ?"),
         {work_dir, log_dir, spec.train_steps, spec.train_steps, first_train, last_train});
    exec(db,
         job_columns +
             QStringLiteral(
                 "SELECT c.new_id, CASE WHEN c.experiment % 2 = 0 THEN 'local' ELSE 'slurm' END, "
                 "printf('%s/study-%02d', ?, c.experiment), 'eval', printf('eval-%d', c.new_id), "
                 "printf('%s/eval-%d.log', ?, c.new_id), "
                 "CASE WHEN c.experiment % 2 = 0 THEN '' ELSE printf('%d', 700000 + c.new_id) END, "
                 "CASE c.status WHEN 'FAILED' THEN 2 WHEN 'SCHEDULED' THEN 0 ELSE 1 END, "
                 "c.status IN ('FINISHED', 'FAILED'), "
                 "CASE c.status WHEN 'RUNNING' THEN c.j % 100 ELSE -1 END, "
                 "CASE c.status WHEN 'RUNNING' THEN 100 ELSE -1 END, "
                 "CASE c.status WHEN 'RUNNING' THEN 600.0 - 5 * (c.j % 100) END, "
                 "CASE c.status WHEN 'RUNNING' THEN printf('encoding documents %d/100', c.j % 100) "
                 "ELSE '' END, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                 "FROM bench_copies c WHERE c.experiment >= ? ORDER BY c.new_id"),
         {work_dir, log_dir, spec.experiments / 2});
  }
  exec(db, QStringLiteral("COMMIT"));
  exec(db, QStringLiteral("PRAGMA journal_mode = WAL"));
  db.close();
  db = QSqlDatabase();
  QSqlDatabase::removeDatabase(QStringLiteral("bench-writer"));
}

QString store_facts(const QString& path) {
  QString facts;
  {
    QSqlDatabase db = open_plain(QStringLiteral("bench-facts"), path, true);
    auto count = [&](const QString& table) {
      return scalar(db, QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name = ?"),
                    {table}) > 0
                 ? scalar(db, QStringLiteral("SELECT count(*) FROM %1").arg(table))
                 : -1;
    };
    facts = QStringLiteral(
                "%1 runs (%2 eval), %3 metric points (largest run: %4), %5 "
                "eval_results rows, %6 attention_profiles rows, %7 jobs, %8 MiB")
                .arg(count(QStringLiteral("runs")))
                .arg(scalar(db, QStringLiteral("SELECT count(*) FROM runs WHERE kind = 'eval'")))
                .arg(count(QStringLiteral("metrics")))
                .arg(scalar(db, QStringLiteral("SELECT COALESCE(MAX(n), 0) FROM (SELECT count(*) "
                                               "AS n FROM metrics GROUP BY run_id, key)")))
                .arg(count(QStringLiteral("eval_results")))
                .arg(count(QStringLiteral("attention_profiles")))
                .arg(count(QStringLiteral("jobs")))
                .arg(QFileInfo(path).size() / (1024 * 1024));
    db.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("bench-facts"));
  return facts;
}

// ---- Measuring ---------------------------------------------------------------------------------

long status_mib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(status, line))
    if (line.rfind(prefix, 0) == 0) return std::stol(line.substr(prefix.size())) / 1024;
  return -1;
}

// Resets VmHWM to the current RSS (Linux >= 4.0); false where the kernel refuses.
bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  return clear_refs.good();
}

// The GUI thread's responsiveness: a timer due every 5 ms records when it really fires.
class StallProbe {
 public:
  StallProbe() {
    timer_.setTimerType(Qt::PreciseTimer);
    timer_.setInterval(5);
    QObject::connect(&timer_, &QTimer::timeout, [this] { tick(); });
  }
  void start() {
    gaps_ms_.clear();
    clock_.start();
    last_ns_ = 0;
    timer_.start();
  }
  void stop() {
    tick();
    timer_.stop();
    std::sort(gaps_ms_.begin(), gaps_ms_.end());
  }
  double max_ms() const { return gaps_ms_.empty() ? 0 : gaps_ms_.back(); }
  double percentile_ms(double p) const {
    if (gaps_ms_.empty()) return 0;
    const size_t index = static_cast<size_t>(std::ceil(p * gaps_ms_.size())) - 1;
    return gaps_ms_[std::min(index, gaps_ms_.size() - 1)];
  }

 private:
  void tick() {
    const qint64 now = clock_.nsecsElapsed();
    gaps_ms_.push_back((now - last_ns_) / 1e6);
    last_ns_ = now;
  }
  QTimer timer_;
  QElapsedTimer clock_;
  qint64 last_ns_ = 0;
  std::vector<double> gaps_ms_;
};

struct Measurement {
  QString store, name;
  double seconds = 0;
  bool timed_out = false;
  double max_stall_ms = 0, p99_gap_ms = 0;
  long peak_rss_mib = 0, rss_mib = 0;
  QString shows;
};

std::vector<Measurement> measurements;
int timeout_ms = 300000;
QStringList cases;
QString store_label;

// Starts `action` (it gets a context object for its connections and the function to call once
// the view is done) and waits for it; see the header for what is measured.
using Done = std::function<void()>;
void measure(const QString& name, const std::function<void(QObject*, const Done&)>& action,
             const std::function<QString()>& shows) {
  const bool peak_reset = reset_peak_rss();
  Measurement m;
  m.store = store_label;
  m.name = name;
  QEventLoop loop;
  auto context = std::make_unique<QObject>();
  bool done = false;
  QElapsedTimer clock;
  QTimer timeout;
  timeout.setSingleShot(true);
  QObject::connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
  StallProbe probe;
  probe.start();
  clock.start();
  timeout.start(timeout_ms);
  action(context.get(), [&] {
    if (done) return;
    done = true;
    m.seconds = clock.nsecsElapsed() / 1e9;
    loop.quit();
  });
  if (!done) loop.exec();
  context.reset();  // later signals reach nothing
  m.timed_out = !done;
  if (!done) m.seconds = clock.nsecsElapsed() / 1e9;
  QTimer::singleShot(200, &loop, &QEventLoop::quit);
  loop.exec();
  probe.stop();
  m.max_stall_ms = probe.max_ms();
  m.p99_gap_ms = probe.percentile_ms(0.99);
  m.peak_rss_mib = peak_reset ? status_mib("VmHWM") : -1;
  m.rss_mib = status_mib("VmRSS");
  m.shows = shows();
  out() << QStringLiteral("%1 | %2: %3 s%4, max stall %5 ms, p99 %6 ms, peak RSS %7 MiB; %8\n")
               .arg(m.store, m.name)
               .arg(m.seconds, 0, 'f', 3)
               .arg(m.timed_out ? QStringLiteral(" (timed out)") : QString())
               .arg(m.max_stall_ms, 0, 'f', 0)
               .arg(m.p99_gap_ms, 0, 'f', 0)
               .arg(m.peak_rss_mib)
               .arg(m.shows);
  out().flush();
  measurements.push_back(m);
}

// Done once `view` emits loaded().
std::function<void(QObject*, const Done&)> until_loaded(StoreView* view,
                                                        const std::function<void()>& start) {
  return [view, start](QObject* context, const Done& done) {
    QObject::connect(view, &StoreView::loaded, context, done);
    start();
  };
}

template <typename View>
std::unique_ptr<View> shown_view() {
  auto view = std::make_unique<View>();
  view->resize(1400, 900);
  view->show();
  QApplication::processEvents();
  return view;
}

// ---- The cases ---------------------------------------------------------------------------------

void main_window_cases(const QString& db) {
  for (int tab : {0, 2}) {
    MainWindow window;
    window.resize(1400, 900);
    window.tabs()->setCurrentIndex(tab);
    window.show();
    QApplication::processEvents();
    const QString tab_title = window.views()[tab]->title();
    measure(
        QStringLiteral("MainWindow::open_store, %1 tab shown: every view loaded").arg(tab_title),
        [&window, db](QObject* context, const Done& done) {
          auto pending = std::make_shared<int>(static_cast<int>(window.views().size()));
          for (StoreView* view : window.views()) {
            auto first = std::make_shared<bool>(true);
            QObject::connect(view, &StoreView::loaded, context, [pending, first, done] {
              if (!*first) return;
              *first = false;
              if (--*pending == 0) done();
            });
          }
          window.open_store(db);
        },
        [] { return QString(); });
  }
}

void results_cases(const QString& db) {
  {
    // A hidden results view fetches every row on the GUI thread (ResultsView::reload_runs; so a
    // half-read query does not hold the WAL back): the tab behind another one in the window.
    ResultsView hidden;
    measure(QStringLiteral("ResultsView, not shown: set_store → loaded"),
            until_loaded(&hidden, [&] { hidden.set_store(db); }),
            [&] { return QStringLiteral("%1 rows fetched").arg(hidden.runs_model()->rowCount()); });
  }
  auto view = shown_view<ResultsView>();
  measure(QStringLiteral("ResultsView: set_store → loaded"),
          until_loaded(view.get(), [&] { view->set_store(db); }), [&] {
            return QStringLiteral("%1 rows fetched, %2 columns, pivot %3 × %4")
                .arg(view->runs_model()->rowCount())
                .arg(view->runs_model()->columnCount())
                .arg(view->pivot_model()->rowCount())
                .arg(view->pivot_model()->columnCount());
          });
  int metric_column = -1;
  for (int c = 0; c < view->runs_model()->columnCount() && metric_column < 0; ++c)
    if (view->runs_model()->column_kind(c) == RunsTableModel::ColumnKind::Metric) metric_column = c;
  measure(
      QStringLiteral("ResultsView: sort by a metric column (descending)"),
      [&](QObject*, const Done& done) {
        view->runs_table()->sortByColumn(std::max(0, metric_column), Qt::DescendingOrder);
        done();
      },
      [&] {
        return QStringLiteral("by %1: first run %2")
            .arg(view->runs_model()->headerData(metric_column, Qt::Horizontal).toString())
            .arg(view->runs_model()->run_id(0));
      });
  measure(
      QStringLiteral("ResultsView: fetch to the end and scroll there"),
      [&](QObject*, const Done& done) {
        view->runs_model()->fetch_all();
        view->runs_table()->scrollToBottom();
        done();
      },
      [&] { return QStringLiteral("%1 rows").arg(view->runs_model()->rowCount()); });
  measure(
      QStringLiteral("ResultsView: filter pooling=lmk → table and pivot"),
      [&](QObject* context, const Done& done) {
        QObject::connect(view.get(), &ResultsView::pivot_ready, context, done);
        view->set_filter_text(QStringLiteral("pooling=lmk"));
      },
      [&] {
        return QStringLiteral("%1 rows fetched, pivot %2 rows")
            .arg(view->runs_model()->rowCount())
            .arg(view->pivot_model()->rowCount());
      });
}

// Done once the monitor's curves are replotted with data of `run`.
std::function<void(QObject*, const Done&)> until_curves(JobMonitorView* monitor, qint64 run) {
  return [monitor, run](QObject* context, const Done& done) {
    QCustomPlot* curves = monitor->curves();
    QObject::connect(curves, &QCustomPlot::afterReplot, context, [monitor, curves, run, done] {
      if (monitor->selected_run() == run && curves->graphCount() > 0 &&
          curves->graph(0)->dataCount() > 0)
        done();
    });
    if (!monitor->select_run(run))
      throw std::runtime_error("the job monitor does not show run " + std::to_string(run));
  };
}

void job_monitor_cases(const QString& db, qint64 long_run, qint64 train_run) {
  auto monitor = shown_view<JobMonitorView>();
  auto shows = [&] {
    const QCustomPlot* curves = monitor->curves();
    return QStringLiteral("%1 jobs; run %2 selected, loss curve %3 points")
        .arg(monitor->model()->rowCount())
        .arg(monitor->selected_run())
        .arg(curves->graphCount() > 0 ? curves->graph(0)->dataCount() : 0);
  };
  measure(QStringLiteral("JobMonitorView: set_store → loaded (selects the running job)"),
          until_loaded(monitor.get(), [&] { monitor->set_store(db); }), shows);
  // A store written by lmk study has no jobs to select.
  if (monitor->model()->find(train_run) != nullptr)
    measure(QStringLiteral("JobMonitorView: select a finished training run → curves"),
            until_curves(monitor.get(), train_run), shows);
  if (monitor->model()->find(long_run) != nullptr)
    measure(QStringLiteral("JobMonitorView: select the longest run → curves"),
            until_curves(monitor.get(), long_run), shows);
  // The monitor polls every 2 s: what a poll costs the GUI thread on this store.
  measure(
      QStringLiteral("JobMonitorView: 5 s of polling"),
      [](QObject* context, const Done& done) { QTimer::singleShot(5000, context, done); }, shows);
}

void plot_cases(const QString& db) {
  {
    auto view = shown_view<CurvesView>();
    measure(QStringLiteral("CurvesView: set_store → loaded"),
            until_loaded(view.get(), [&] { view->set_store(db); }), [&] {
              return QStringLiteral("%1 curves by length, %2 by position")
                  .arg(view->curve_names(CurvesView::Panel::Length).size())
                  .arg(view->curve_names(CurvesView::Panel::Position).size());
            });
  }
  {
    auto view = shown_view<AttentionView>();
    measure(QStringLiteral("AttentionView: set_store → loaded"),
            until_loaded(view.get(), [&] { view->set_store(db); }), [&] {
              return QStringLiteral("%1 + %2 heatmap rows × %3 cells")
                  .arg(view->row_count(0))
                  .arg(view->row_count(1))
                  .arg(view->cell_count(0));
            });
  }
  {
    auto view = shown_view<CompareView>();
    measure(QStringLiteral("CompareView: set_store → loaded (two runs paired and tested)"),
            until_loaded(view.get(), [&] { view->set_store(db); }), [&] {
              return QStringLiteral("%1 queries paired, %2 listed")
                  .arg(view->pair().pairs.size())
                  .arg(view->queries_table()->rowCount());
            });
  }
  {
    auto view = shown_view<LengthView>();
    measure(QStringLiteral("LengthView: set_store → loaded"),
            until_loaded(view.get(), [&] { view->set_store(db); }),
            [&] { return QStringLiteral("%1 datasets").arg(view->datasets_shown().size()); });
  }
}

// The attention explorer on one long document (run with --cases explorer): lmk encode of the
// document (the time the first picture is held against), then in the view the computation
// (lmk attention --explore as a child process, the file read, the picture), opening the file
// again, and the switches that recompute nothing.
struct ExplorerSpec {
  QString lmk, model, document, pooling = QStringLiteral("lmk");
  int granularity = 0, max_length = 0;
};

void explorer_cases(const ExplorerSpec& spec) {
  if (spec.model.isEmpty() || spec.document.isEmpty())
    throw std::runtime_error(
        "--cases explorer needs --explore-model DIR and --explore-document FILE");
  const QByteArray lmk_bin = qgetenv("LMK_BIN");
  qputenv("LMK_BIN", spec.lmk.toUtf8());  // the view runs the real lmk here
  QTemporaryDir scratch;
  QStringList common = {"--model", spec.model, "--pooling", spec.pooling};
  if (spec.granularity > 0) common << "--granularity" << QString::number(spec.granularity);
  if (spec.max_length > 0) common << "--max-length" << QString::number(spec.max_length);
  {
    QFile document(spec.document);
    if (!document.open(QIODevice::ReadOnly))
      throw std::runtime_error("cannot read " + spec.document.toStdString());
    const QJsonObject line{{QStringLiteral("text"), QString::fromUtf8(document.readAll())}};
    QFile jsonl(scratch.filePath(QStringLiteral("doc.jsonl")));
    if (!jsonl.open(QIODevice::WriteOnly)) throw std::runtime_error("cannot write doc.jsonl");
    jsonl.write(QJsonDocument(line).toJson(QJsonDocument::Compact) + "\n");
  }
  QElapsedTimer clock;
  clock.start();
  QProcess encode;
  encode.start(spec.lmk, QStringList{"encode"} + common +
                             QStringList{"--input", scratch.filePath(QStringLiteral("doc.jsonl")),
                                         "--out", scratch.filePath(QStringLiteral("e.npy"))});
  if (!encode.waitForFinished(-1) || encode.exitCode() != 0)
    throw std::runtime_error("lmk encode failed: " + encode.readAllStandardError().toStdString());
  const double encode_s = clock.nsecsElapsed() / 1e9;
  out() << QStringLiteral("lmk encode of the document: %1 s\n").arg(encode_s, 0, 'f', 1);

  auto view = shown_view<ExplorerView>();
  ExplorerRequest request;
  request.model = spec.model;
  request.pooling = spec.pooling;
  request.granularity = spec.granularity;
  request.max_length = spec.max_length;
  request.document_file = spec.document;
  request.query = QStringLiteral("signal handler");
  const auto describe = [&] {
    if (view->result_count() == 0) return view->message();
    const auto& d = view->result(view->shown_result());
    return QStringLiteral("%1 inputs, %2 pooling tokens, %3 layers x %4 heads")
        .arg(d.length())
        .arg(d.pooling_positions.size())
        .arg(d.layers)
        .arg(d.heads);
  };
  measure(
      QStringLiteral("Explorer: compute → first picture (lmk encode alone: %1 s)")
          .arg(encode_s, 0, 'f', 1),
      [&](QObject* context, const Done& done) {
        QObject::connect(view.get(), &ExplorerView::document_shown, context, done);
        QObject::connect(view.get(), &ExplorerView::finished, context, [done](bool ok) {
          if (!ok) done();
        });
        view->compute(request);
      },
      describe);
  const QString file = scratch.filePath(QStringLiteral("copy.lmkattn"));
  // The computation's own file, copied: the view's scratch folder goes with the view.
  if (view->computed_file().isEmpty() || !QFile::copy(view->computed_file(), file))
    throw std::runtime_error("the explorer wrote no file: " + view->message().toStdString());
  auto reopened = shown_view<ExplorerView>();
  measure(
      QStringLiteral("Explorer: open the file → picture"),
      [&](QObject* context, const Done& done) {
        QObject::connect(reopened.get(), &ExplorerView::document_shown, context, done);
        reopened->open_file(file);
      },
      [&] { return QStringLiteral("%1 MB file").arg(QFileInfo(file).size() / 1000000); });
  ExplorerView* v = reopened.get();
  if (v->result_count() == 0) return;
  const auto& d = v->result(v->shown_result());
  const auto now = [](const std::function<void()>& action) {
    return [action](QObject*, const Done& done) {
      action();
      done();
    };
  };
  const auto shows = [v] {
    return QStringLiteral("layer %1, head %2, pooling tokens %3–%4")
        .arg(v->selection().layer)
        .arg(v->selection().head)
        .arg(v->selection().first_row)
        .arg(v->selection().last_row);
  };
  const int64_t rows = static_cast<int64_t>(d.pooling_positions.size());
  measure(QStringLiteral("Explorer: switch layer"), now([&] { v->set_layer_head(0, -1); }), shows);
  measure(QStringLiteral("Explorer: switch head"), now([&] { v->set_layer_head(0, 2); }), shows);
  measure(QStringLiteral("Explorer: final layer, mean over heads"),
          now([&] { v->set_layer_head(d.layers - 1, -1); }), shows);
  measure(QStringLiteral("Explorer: one landmark"), now([&] { v->set_rows(rows / 2, rows / 2); }),
          shows);
  measure(QStringLiteral("Explorer: a range of landmarks"),
          now([&] { v->set_rows(rows / 4, 3 * rows / 4); }), shows);
  measure(QStringLiteral("Explorer: a token (which landmarks attend to it)"),
          now([&] { v->select_position(d.length() / 2 + 1); }), shows);
  measure(QStringLiteral("Explorer: jump to 80 % (overview click)"),
          now([&] { v->jump_to_fraction(0.8); }), shows);
  measure(QStringLiteral("Explorer: log scale"), now([&] { v->set_log_scale(true); }), shows);
  qputenv("LMK_BIN", lmk_bin);
}

void run_cases(const QString& db) {
  qint64 long_run = 0, train_run = 0;
  {
    QSqlDatabase facts = open_plain(QStringLiteral("bench-runs"), db, true);
    long_run = scalar(facts, QStringLiteral("SELECT COALESCE(MAX(run_id), 0) FROM (SELECT run_id "
                                            "FROM metric_latest WHERE key = 'loss' "
                                            "ORDER BY step DESC LIMIT 1)"));
    train_run = scalar(facts,
                       QStringLiteral("SELECT COALESCE(MAX(id), 0) FROM runs WHERE kind = "
                                      "'train' AND id <> ?"),
                       {long_run});
    facts.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("bench-runs"));
  if (cases.contains(QStringLiteral("window"))) main_window_cases(db);
  if (cases.contains(QStringLiteral("results"))) results_cases(db);
  if (cases.contains(QStringLiteral("jobs"))) job_monitor_cases(db, long_run, train_run);
  if (cases.contains(QStringLiteral("plots"))) plot_cases(db);
}

QString cpu_model() {
  QFile file(QStringLiteral("/proc/cpuinfo"));
  if (!file.open(QIODevice::ReadOnly)) return QStringLiteral("unknown");
  for (const QByteArray& line : file.readAll().split('\n'))
    if (line.startsWith("model name"))
      return QString::fromUtf8(line.mid(line.indexOf(':') + 1)).trimmed();
  return QStringLiteral("unknown");
}

QString sqlite_version() {
  QString version;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("v"));
    db.setDatabaseName(QStringLiteral(":memory:"));
    if (db.open()) {
      QSqlQuery query = exec(db, QStringLiteral("SELECT sqlite_version()"));
      if (query.next()) version = query.value(0).toString();
      db.close();
    }
  }
  QSqlDatabase::removeDatabase(QStringLiteral("v"));
  return version;
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  // The monitor's `lmk jobs` sync would settle the bench's fake running jobs in the store.
  qputenv("LMK_BIN", "/bin/true");
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("lmk"));
  QApplication::setApplicationName(QStringLiteral("lmk-workbench-bench"));
  QStandardPaths::setTestModeEnabled(true);  // the user's settings stay as they are
  QSettings().clear();

  QCommandLineParser parser;
  parser.addHelpOption();
  const QCommandLineOption store_option(QStringLiteral("store"), QStringLiteral("store to copy"),
                                        QStringLiteral("FILE"),
                                        QStringLiteral(LMK_WORKBENCH_STUDY_DB));
  const QCommandLineOption out_option(
      QStringLiteral("out"), QStringLiteral("the grown store"), QStringLiteral("FILE"),
      QDir::temp().filePath(QStringLiteral("lmk-workbench-bench/results.db")));
  const QCommandLineOption reuse_option(QStringLiteral("reuse"),
                                        QStringLiteral("keep the grown store at --out"));
  const QCommandLineOption baseline_option(QStringLiteral("baseline"),
                                           QStringLiteral("also time the plain copy first"));
  auto number = [](const char* name, const char* help, int value) {
    return QCommandLineOption(QString::fromLatin1(name), QString::fromLatin1(help),
                              QStringLiteral("N"), QString::number(value));
  };
  const ScaleSpec defaults;
  const QCommandLineOption runs_option = number("runs", "eval runs to add", defaults.eval_runs);
  const QCommandLineOption experiments_option =
      number("experiments", "experiments they form", defaults.experiments);
  const QCommandLineOption train_runs_option =
      number("train-runs", "training runs to add", defaults.train_runs);
  const QCommandLineOption train_steps_option =
      number("train-steps", "steps of each", defaults.train_steps);
  const QCommandLineOption long_steps_option =
      number("long-steps", "steps of the long run", defaults.long_steps);
  const QCommandLineOption timeout_option = number("timeout", "seconds per case", 300);
  const QCommandLineOption pool_option =
      number("pool-threads", "QThreadPool::globalInstance()'s threads (0: Qt's default)", 0);
  const QCommandLineOption cases_option(
      QStringLiteral("cases"),
      QStringLiteral("window,results,jobs,plots (default: all) or explorer (alone: no store)"),
      QStringLiteral("LIST"), QStringLiteral("window,results,jobs,plots"));
  const QCommandLineOption lmk_option(
      QStringLiteral("lmk"), QStringLiteral("the lmk the explorer runs"), QStringLiteral("FILE"),
      QStringLiteral(LMK_BINARY_DIR "/app/lmk"));
  const QCommandLineOption explore_model_option(QStringLiteral("explore-model"),
                                                QStringLiteral("explorer: model folder"),
                                                QStringLiteral("DIR"));
  const QCommandLineOption explore_document_option(
      QStringLiteral("explore-document"), QStringLiteral("explorer: the document (text file)"),
      QStringLiteral("FILE"));
  const QCommandLineOption explore_granularity_option =
      number("explore-granularity", "explorer: landmark granularity (0: the folder's)", 0);
  const QCommandLineOption explore_max_length_option =
      number("explore-max-length", "explorer: model inputs at most (0: all)", 0);
  parser.addOptions({store_option, out_option, reuse_option, baseline_option, runs_option,
                     experiments_option, train_runs_option, train_steps_option, long_steps_option,
                     timeout_option, pool_option, cases_option, lmk_option, explore_model_option,
                     explore_document_option, explore_granularity_option,
                     explore_max_length_option});
  parser.process(app);
  ScaleSpec spec;
  spec.eval_runs = parser.value(runs_option).toInt();
  spec.experiments = std::max(1, parser.value(experiments_option).toInt());
  spec.train_runs = parser.value(train_runs_option).toInt();
  spec.train_steps = parser.value(train_steps_option).toInt();
  spec.long_steps = parser.value(long_steps_option).toInt();
  timeout_ms = parser.value(timeout_option).toInt() * 1000;
  cases = parser.value(cases_option).split(QLatin1Char(','));
  if (parser.value(pool_option).toInt() > 0)
    QThreadPool::globalInstance()->setMaxThreadCount(parser.value(pool_option).toInt());

  ExplorerSpec explorer;
  explorer.lmk = parser.value(lmk_option);
  explorer.model = parser.value(explore_model_option);
  explorer.document = parser.value(explore_document_option);
  explorer.granularity = parser.value(explore_granularity_option).toInt();
  explorer.max_length = parser.value(explore_max_length_option).toInt();

  const QString source = parser.value(store_option);
  const QString grown = QFileInfo(parser.value(out_option)).absoluteFilePath();
  const QString work_dir = QFileInfo(grown).absolutePath();
  QDir().mkpath(work_dir);
  try {
    out() << "# lmk_workbench_bench\n\nmachine: " << QThread::idealThreadCount() << " CPUs ("
          << cpu_model() << "), Qt " << qVersion() << ", SQLite " << sqlite_version()
          << ", global thread pool: " << QThreadPool::globalInstance()->maxThreadCount()
          << " threads\n";
    if (cases == QStringList{QStringLiteral("explorer")}) {
      store_label = QStringLiteral("none");
      explorer_cases(explorer);
    } else {
      if (parser.isSet(baseline_option)) {
        const QString plain = QDir(work_dir).filePath(QStringLiteral("plain.db"));
        copy_store(source, plain);
        out() << "baseline store: " << store_facts(plain) << "\n";
        store_label = QStringLiteral("plain");
        run_cases(plain);
      }
      if (!(parser.isSet(reuse_option) && QFileInfo::exists(grown))) {
        QElapsedTimer clock;
        clock.start();
        copy_store(source, grown);
        grow_store(grown, spec, work_dir);
        out() << "grew " << source << " into " << grown << " in "
              << QString::number(clock.elapsed() / 1000.0, 'f', 1) << " s\n";
      }
      out() << "store: " << store_facts(grown) << "\n";
      out().flush();
      store_label = QStringLiteral("grown");
      run_cases(grown);
    }
  } catch (const std::exception& e) {
    QTextStream(stderr) << "lmk_workbench_bench: " << e.what() << "\n";
    return 1;
  }

  out() << "\n| store | case | seconds | max stall ms | p99 gap ms | peak RSS MiB | RSS after MiB "
           "| shows |\n|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const Measurement& m : measurements)
    out() << "| " << m.store << " | " << m.name << " | " << QString::number(m.seconds, 'f', 3)
          << (m.timed_out ? " (timed out)" : "") << " | " << QString::number(m.max_stall_ms, 'f', 0)
          << " | " << QString::number(m.p99_gap_ms, 'f', 0) << " | " << m.peak_rss_mib << " | "
          << m.rss_mib << " | " << m.shows << " |\n";
  return 0;
}
