// The results browser over a copy of the real micro study store: every number the view shows is
// compared with the store queried directly (QSqlQuery on a second connection), never with
// numbers written down here.
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QFont>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <limits>

#include "core/eval/comparison.h"
#include "core/store/export.h"
#include "core/store/results_store.h"
#include "tests/widgets/fixture_store.h"
#include "widgets/plot_export.h"
#include "widgets/results_model.h"
#include "widgets/results_view.h"
#include "widgets/store_connection.h"

using lmk::widgets::PivotRows;
using lmk::widgets::ResultsView;
using lmk::widgets::RunsTableModel;
using lmk::widgets::StoreView;

namespace {

// A copy of the fixture store, so tests can write to it.
QString copy_fixture(const QTemporaryDir& dir, const QString& name = "results.db") {
  const QString path = dir.filePath(name);
  lmk::widgets::testing::copy_fixture_store(path);
  return path;
}

// A connection of the test's own, beside the view's.
QSqlDatabase direct(const QString& path, const QString& name = "direct") {
  QSqlDatabase db = QSqlDatabase::contains(name) ? QSqlDatabase::database(name)
                                                 : QSqlDatabase::addDatabase("QSQLITE", name);
  if (db.databaseName() != path) {
    db.close();
    db.setDatabaseName(path);
  }
  db.setConnectOptions("QSQLITE_BUSY_TIMEOUT=5000");
  if (!db.isOpen()) db.open();
  return db;
}

QSqlQuery sql(const QSqlDatabase& db, const QString& text, const QVariantList& bindings = {}) {
  QSqlQuery query(db);
  if (!query.prepare(text))
    qFatal("%s: %s", qPrintable(text), qPrintable(query.lastError().text()));
  for (const QVariant& value : bindings) query.addBindValue(value);
  if (!query.exec()) qFatal("%s: %s", qPrintable(text), qPrintable(query.lastError().text()));
  return query;
}

QVariant sql_value(const QSqlDatabase& db, const QString& text, const QVariantList& bindings = {}) {
  QSqlQuery query = sql(db, text, bindings);
  return query.next() ? query.value(0) : QVariant();
}

void load(ResultsView& view, const QString& path) {
  QSignalSpy loaded(&view, &StoreView::loaded);
  view.set_store(path);
  QVERIFY(loaded.count() > 0 || loaded.wait(30000));
}

void wait_pivot(ResultsView& view, const std::function<void()>& change) {
  QSignalSpy ready(&view, &ResultsView::pivot_ready);
  change();
  QVERIFY(ready.count() > 0 || ready.wait(30000));
}

// RFC 4180: quoted fields may hold commas, doubled quotes and line breaks.
QVector<QStringList> parse_csv(const QString& text) {
  QVector<QStringList> rows;
  QStringList row;
  QString field;
  bool quoted = false;
  for (int i = 0; i < text.size(); ++i) {
    const QChar c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row << field;
      field.clear();
    } else if (c == '\r') {
    } else if (c == '\n') {
      row << field;
      rows << row;
      row.clear();
      field.clear();
    } else {
      field += c;
    }
  }
  if (!field.isEmpty() || !row.isEmpty()) rows << (row << field);
  return rows;
}

// The CSV file's rows, after checking its shape and header against `model`.
QVector<QStringList> read_csv(const QAbstractItemModel& model, const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QVector<QStringList> rows = parse_csv(QString::fromUtf8(file.readAll()));
  if (rows.size() != model.rowCount() + 1) return {};
  for (int c = 0; c < model.columnCount(); ++c)
    if (rows[0].value(c) != lmk::widgets::header_text(model, c)) return {};
  for (const QStringList& row : rows)
    if (row.size() != model.columnCount()) return {};
  return rows;
}

// A CSV number field: the stored double exactly (no rounding, no best mark), empty for none.
void check_csv_number(const QString& field, double stored) {
  if (std::isnan(stored)) {
    QVERIFY2(field.isEmpty(), qPrintable(field));
    return;
  }
  bool ok = false;
  QCOMPARE(field.toDouble(&ok), stored);
  QVERIFY2(ok, qPrintable(field));
}

// The run's whole-set value of `metric` on `dataset` as stored; NaN when there is none.
double stored_metric(const QSqlDatabase& db, qlonglong run, const QString& dataset,
                     const QString& metric) {
  const QVariant value =
      sql_value(db,
                "SELECT value FROM eval_results WHERE run_id = ? AND dataset = ? AND metric = ? "
                "AND group_kind = 'all'",
                {run, dataset, metric});
  return value.isNull() ? std::numeric_limits<double>::quiet_NaN() : value.toDouble();
}

}  // namespace

class ResultsTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    // These tests read the wide layout (a column per benchmark); the long one has its own.
    QSettings().setValue("results/long", false);
    QVERIFY2(QFile::exists(LMK_WORKBENCH_STUDY_DB), "run ctest -R workbench_fixture_study first");
  }

  // The long layout: a row per run and benchmark it has a score on (a run with none: one row),
  // a benchmark, a split and a score column; each score with its interval and N as in the wide
  // layout.
  void the_long_runs_table_has_a_row_per_run_and_benchmark() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    ResultsView view;
    load(view, path);
    view.set_long_format(true);  // queries the runs again, on this thread
    RunsTableModel* model = view.runs_model();
    QVERIFY(model->long_format());
    model->fetch_all();
    const QSqlDatabase db = direct(path);
    const int scored = sql_value(db,
                                 "SELECT count(*) FROM eval_results WHERE metric = 'ndcg_at_10' "
                                 "AND group_kind = 'all'")
                           .toInt();
    const int unscored = sql_value(db,
                                   "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM "
                                   "eval_results e WHERE e.run_id = r.id AND e.metric = "
                                   "'ndcg_at_10' AND e.group_kind = 'all')")
                             .toInt();
    QCOMPARE(model->rowCount(), scored + unscored);
    const int benchmark = model->column_of("benchmark"), score = model->column_of("score");
    QVERIFY(benchmark >= 0 && score >= 0);
    int checked = 0;
    for (int row = 0; row < model->rowCount(); ++row) {
      const QString dataset = model->index(row, benchmark).data(Qt::EditRole).toString();
      if (dataset.isEmpty()) continue;
      QCOMPARE(model->index(row, score).data(Qt::EditRole).toDouble(),
               stored_metric(db, model->run_id(row), dataset, "ndcg_at_10"));
      ++checked;
    }
    QCOMPARE(checked, scored);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          for (int row = 0; row < model->rowCount(); ++row)
            if (model->cell_summary(row, score).n > 0 &&
                model->index(row, score).data().toString().contains(" ± "))
              return true;
          return false;
        }(),
        30000);
    view.set_long_format(false);
  }

  // A failed run's error is a column and its status tooltip says it (it said "FAILED" alone);
  // the start reads to the second; a run that has not ended has no duration ("—").
  void a_failed_run_says_why_in_its_row() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    {
      const QSqlDatabase db = direct(path);
      sql(db,
          "UPDATE runs SET status = 'FAILED', error_text = 'exit 137: killed (out of memory)' "
          "WHERE id = 3");
      sql(db, "UPDATE runs SET status = 'RUNNING', ended_at = NULL WHERE id = 4");
    }
    ResultsView view;
    load(view, path);
    RunsTableModel* model = view.runs_model();
    model->fetch_all();
    const int failed = model->row_of(3), running = model->row_of(4);
    QVERIFY(failed >= 0 && running >= 0);
    QCOMPARE(model->index(failed, model->column_of("error")).data().toString(),
             QString("exit 137: killed (out of memory)"));
    QCOMPARE(model->index(failed, RunsTableModel::StatusColumn).data(Qt::ToolTipRole).toString(),
             QString("FAILED: exit 137: killed (out of memory)"));
    QCOMPARE(model->index(running, model->column_of("error")).data().toString(), QString("—"));
    QCOMPARE(model->index(running, model->column_of("duration")).data().toString(), QString("—"));
    const QString started =
        sql_value(direct(path), "SELECT started_at FROM runs WHERE id = 3").toString();
    QCOMPARE(model->index(failed, model->column_of("started")).data().toString(),
             started.left(19).replace('T', ' '));
    QVERIFY(model->index(failed, model->column_of("duration")).data().toString().endsWith(" s"));
  }

  void runs_table_holds_every_run_and_its_stored_metrics() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    ResultsView view;
    load(view, path);
    QVERIFY(view.empty_state().isEmpty());
    RunsTableModel* model = view.runs_model();
    model->fetch_all();
    const QSqlDatabase db = direct(path);
    QCOMPARE(model->rowCount(), sql_value(db, "SELECT count(*) FROM runs").toInt());

    // One column per dataset of the results, each cell the run's stored ndcg_at_10.
    QSqlQuery datasets = sql(db, "SELECT DISTINCT dataset FROM eval_results");
    int checked = 0;
    while (datasets.next()) {
      const QString dataset = datasets.value(0).toString();
      const int column = model->column_of(dataset);
      QVERIFY2(column >= 0, qPrintable(dataset));
      QCOMPARE(model->column_kind(column), RunsTableModel::ColumnKind::Metric);
      for (int row = 0; row < model->rowCount(); ++row) {
        const double expected = stored_metric(db, model->run_id(row), dataset, "ndcg_at_10");
        const QVariant shown = model->index(row, column).data(Qt::EditRole);
        if (std::isnan(expected)) {
          QVERIFY(shown.isNull());
          continue;
        }
        QCOMPARE(shown.toDouble(), expected);
        // The mean alone until its interval is computed, then "mean ± half-width (N n)".
        const QString text = model->index(row, column).data().toString();
        QVERIFY2(text == QString::number(expected, 'f', 4) ||
                     text.startsWith(QString::number(expected, 'f', 4) + " ± "),
                 qPrintable(text));
        ++checked;
      }
    }
    QCOMPARE(checked, sql_value(db,
                                "SELECT count(*) FROM eval_results WHERE metric = "
                                "'ndcg_at_10' AND group_kind = 'all' AND value IS NOT NULL")
                          .toInt());

    // Each score with N and its interval, as lmk results prints it (the same resampling): the
    // cells of the rows fetched, computed off the GUI thread.
    QSignalSpy ready(model, &RunsTableModel::summaries_ready);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          for (int row = 0; row < model->rowCount(); ++row)
            for (int column = 0; column < model->columnCount(); ++column)
              if (model->cell_summary(row, column).n > 0) return true;
          return false;
        }(),
        30000);
    int with_interval = 0;
    {
      lmk::ResultsStore store(path.toStdString(), lmk::ResultsStore::OpenMode::Existing);
      for (int row = 0; row < model->rowCount(); ++row) {
        for (int column = 0; column < model->columnCount(); ++column) {
          if (model->column_kind(column) != RunsTableModel::ColumnKind::Metric) continue;
          const lmk::CellSummary summary = model->cell_summary(row, column);
          if (summary.n == 0) continue;
          const QString dataset =
              model->headerData(column, Qt::Horizontal).toString().section(" (", 0, 0);
          const std::vector<lmk::QueryScore> scores =
              store.query_scores(model->run_id(row), dataset.toStdString(), "test", "ndcg_at_10");
          const lmk::CellSummary expected = lmk::summarize_scores(scores, {});
          QCOMPARE(summary.n, expected.n);
          QCOMPARE(model->index(row, column).data().toString(),
                   QString("%1 ± %2 (N %3)")
                       .arg(expected.mean, 0, 'f', 4)
                       .arg(expected.interval.half_width(), 0, 'f', 4)
                       .arg(expected.n));
          ++with_interval;
        }
      }
    }
    QVERIFY(with_interval >= 10);
    // Run details as columns; a failed run says why; "—" where there is no value.
    for (const char* detail : {"started", "duration", "host", "device", "error"})
      QVERIFY2(model->column_of(detail) >= 0, detail);
    const int granularity = model->column_of("granularity");
    for (int row = 0; row < model->rowCount(); ++row) {
      const QString value = model->index(row, granularity).data(Qt::EditRole).toString();
      if (value.isEmpty() || value == "0")
        QCOMPARE(model->index(row, granularity).data().toString(), QString("—"));
    }

    // Another metric: the same columns now hold it.
    view.set_metric("map_at_10");
    QCOMPARE(model->metric(), QString("map_at_10"));
    model->fetch_all();
    const QString dataset = sql_value(db, "SELECT dataset FROM eval_results LIMIT 1").toString();
    const int column = model->column_of(dataset);
    for (int row = 0; row < model->rowCount(); ++row) {
      const double expected = stored_metric(db, model->run_id(row), dataset, "map_at_10");
      if (!std::isnan(expected))
        QCOMPARE(model->index(row, column).data(Qt::EditRole).toDouble(), expected);
    }

    // Params are columns too.
    const int pooling = model->column_of("pooling");
    QVERIFY(pooling >= 0);
    for (int row = 0; row < model->rowCount(); ++row) {
      const QString stored =
          sql_value(db, "SELECT value FROM params WHERE run_id = ? AND key = 'pooling'",
                    {model->run_id(row)})
              .toString();
      QCOMPARE(model->index(row, pooling).data().toString(),
               stored.isEmpty() ? QString("—") : stored);
    }
  }

  void filters_select_exactly_the_matching_runs() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    ResultsView view;
    load(view, path);
    const QSqlDatabase db = direct(path);
    auto ids_shown = [&] {
      view.runs_model()->fetch_all();
      QSet<qlonglong> ids;
      for (int row = 0; row < view.runs_model()->rowCount(); ++row)
        ids.insert(view.runs_model()->run_id(row));
      return ids;
    };
    auto ids_of = [&](const QString& where, const QVariantList& bindings = {}) {
      QSet<qlonglong> ids;
      QSqlQuery query = sql(db,
                            "SELECT r.id FROM runs r JOIN experiments e ON e.id = "
                            "r.experiment_id WHERE " +
                                where,
                            bindings);
      while (query.next()) ids.insert(query.value(0).toLongLong());
      return ids;
    };
    struct Case {
      QString filter, where;
    };
    const QVector<Case> cases = {
        {"pooling=cls",
         "r.id IN (SELECT run_id FROM params WHERE key = 'pooling' AND value = 'cls')"},
        {"pooling=cls max_length=128",
         "r.id IN (SELECT run_id FROM params WHERE key = 'pooling' AND value = 'cls') AND r.id IN "
         "(SELECT run_id FROM params WHERE key = 'max_length' AND value = '128')"},
        {"max_length>=256",
         "r.id IN (SELECT run_id FROM params WHERE key = 'max_length' AND CAST(value AS REAL) "
         ">= 256)"},
        {"pooling!=cls",
         "r.id NOT IN (SELECT run_id FROM params WHERE key = 'pooling' AND "
         "value = 'cls')"},
        {"*pooling=lmk",
         "r.id IN (SELECT run_id FROM params WHERE key GLOB '*pooling' AND "
         "value = 'lmk')"},
        {"name=lmk-*/manpages-*", "r.name GLOB 'lmk-*/manpages-*'"},
        {"kind=eval status=finished", "r.kind = 'eval' AND r.status = 'FINISHED'"},
        {"PASSKEY", "instr(lower(r.name), 'passkey') > 0 OR instr(lower(e.name), 'passkey') > 0"},
        // The table's own columns by the names they show (benchmark was read as a param: 0 runs).
        {"benchmark=needle", "r.id IN (SELECT run_id FROM eval_results WHERE dataset = 'needle')"},
        {"benchmark!=needle",
         "r.id NOT IN (SELECT run_id FROM eval_results WHERE dataset = 'needle')"},
        {"benchmark=*-documents",
         "r.id IN (SELECT run_id FROM eval_results WHERE dataset GLOB '*-documents')"},
        {"split=test", "r.id IN (SELECT run_id FROM eval_results WHERE split = 'test')"},
        {"device=cpu", "r.device = 'cpu'"},
        {"duration>=0", "(julianday(r.ended_at) - julianday(r.started_at)) * 86400.0 >= 0"},
        // Values are bound, never pasted into SQL: this matches nothing and breaks nothing.
        {"pooling=\"cls' OR '1'='1\"", "0"},
    };
    for (const Case& c : cases) {
      view.set_filter_text(c.filter);
      const QSet<qlonglong> expected = ids_of(c.where);
      QVERIFY2(c.where == "0" || !expected.isEmpty(), qPrintable(c.filter));
      QCOMPARE(ids_shown(), expected);
    }
    // The combos add to the text.
    view.set_filter_text("");
    QCOMPARE(ids_shown(), ids_of("1"));
  }

  void sorting_by_a_metric_column_orders_the_rows_in_sql() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    ResultsView view;
    load(view, path);
    RunsTableModel* model = view.runs_model();
    const QSqlDatabase db = direct(path);
    const QString dataset =
        sql_value(db, "SELECT dataset FROM eval_results GROUP BY dataset ORDER BY count(*) DESC")
            .toString();
    const int column = model->column_of(dataset);
    QVERIFY(column >= 0);
    for (Qt::SortOrder order : {Qt::DescendingOrder, Qt::AscendingOrder}) {
      view.runs_table()->sortByColumn(column, order);
      model->fetch_all();
      QCOMPARE(model->rowCount(), sql_value(db, "SELECT count(*) FROM runs").toInt());
      bool seen_null = false;
      double previous = order == Qt::DescendingOrder ? 1e300 : -1e300;
      for (int row = 0; row < model->rowCount(); ++row) {
        const QVariant value = model->index(row, column).data(Qt::EditRole);
        if (value.isNull()) {
          seen_null = true;  // runs without the benchmark come last either way
          continue;
        }
        QVERIFY(!seen_null);
        if (order == Qt::DescendingOrder)
          QVERIFY(value.toDouble() <= previous);
        else
          QVERIFY(value.toDouble() >= previous);
        previous = value.toDouble();
      }
      const QString extreme = order == Qt::DescendingOrder ? "MAX" : "MIN";
      QCOMPARE(model->index(0, column).data(Qt::EditRole).toDouble(),
               sql_value(db,
                         QString("SELECT %1(value) FROM eval_results WHERE dataset = ? AND metric "
                                 "= 'ndcg_at_10' AND group_kind = 'all'")
                             .arg(extreme),
                         {dataset})
                   .toDouble());
    }
    // A param column sorts numbers by value (128 < 512 < 2048), not as text.
    const int length = model->column_of("max_length");
    view.runs_table()->sortByColumn(length, Qt::AscendingOrder);
    model->fetch_all();
    double previous = -1;
    for (int row = 0; row < model->rowCount(); ++row) {
      const QVariant value = model->index(row, length).data(Qt::EditRole);
      if (value.isNull()) break;
      QVERIFY(value.toDouble() >= previous);
      previous = value.toDouble();
    }
  }

  void pivot_holds_the_stored_values_and_marks_the_best() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    ResultsView view;
    load(view, path);
    const QSqlDatabase db = direct(path);
    wait_pivot(view, [&] { view.set_pivot_rows(PivotRows::Pooling); });
    const lmk::widgets::PivotModel* pivot = view.pivot_model();

    // Expected cells from SQL: per pooling and variant (never averaged across variants: lmk-32
    // and lmk-var share pooling lmk), the mean over its runs of each benchmark, where a
    // benchmark is dataset@L for per-length groups, dataset@max_length for datasets run at
    // several max_length, else the dataset. The row: "pooling · variant", or the pooling alone
    // when the variant is named after it.
    QHash<QString, QHash<QString, double>> expected;  // column -> row -> value
    auto row_label = [](const QString& pooling_and_variant) {
      const QString pooling = pooling_and_variant.section('\n', 0, 0);
      const QString variant = pooling_and_variant.section('\n', 1);
      return pooling == variant ? pooling : pooling + " · " + variant;
    };
    const QString variant_sql = "p.value || char(10) || substr(r.name, 1, instr(r.name, '/') - 1)";
    QSqlQuery whole = sql(
        db, "SELECT " + variant_sql +
                ", er.dataset, ml.value, AVG(er.value), "
                "(SELECT count(DISTINCT m.value) FROM params m JOIN eval_results x ON x.run_id = "
                "m.run_id AND m.key = 'max_length' WHERE x.dataset = er.dataset AND x.metric = "
                "'ndcg_at_10' AND x.group_kind = 'all') "
                "FROM eval_results er JOIN params p ON p.run_id = er.run_id AND p.key = 'pooling' "
                "JOIN runs r ON r.id = er.run_id "
                "JOIN params ml ON ml.run_id = er.run_id AND ml.key = 'max_length' "
                "WHERE er.metric = 'ndcg_at_10' AND er.group_kind = 'all' AND er.dataset NOT IN "
                "(SELECT dataset FROM eval_results WHERE group_kind = 'length') GROUP BY 1, 2, 3");
    while (whole.next()) {
      const QString column = whole.value(4).toInt() > 1
                                 ? whole.value(1).toString() + "@" + whole.value(2).toString()
                                 : whole.value(1).toString();
      expected[column][row_label(whole.value(0).toString())] = whole.value(3).toDouble();
    }
    QSqlQuery per_length =
        sql(db, "SELECT " + variant_sql +
                    ", er.dataset, er.group_value, AVG(er.value) FROM eval_results er "
                    "JOIN params p ON p.run_id = er.run_id AND p.key = 'pooling' "
                    "JOIN runs r ON r.id = er.run_id "
                    "WHERE er.metric = 'ndcg_at_10' AND er.group_kind = 'length' GROUP BY 1, 2, 3");
    while (per_length.next())
      expected[per_length.value(1).toString() + "@" + per_length.value(2).toString()]
              [row_label(per_length.value(0).toString())] = per_length.value(3).toDouble();

    QVERIFY(expected.size() >= 4);
    QCOMPARE(pivot->table().columns.size(), expected.size());
    QSet<QString> rows;
    for (const auto& column : expected)
      for (auto cell = column.begin(); cell != column.end(); ++cell) rows.insert(cell.key());
    QVERIFY(rows.contains("lmk · lmk-32") && rows.contains("lmk · lmk-var"));
    QCOMPARE(QSet<QString>(pivot->table().rows.begin(), pivot->table().rows.end()), rows);
    for (auto column = expected.begin(); column != expected.end(); ++column) {
      double best = -1;
      for (auto cell = column->begin(); cell != column->end(); ++cell) {
        QVERIFY2(std::abs(pivot->pivot_value(cell.key(), column.key()) - cell.value()) < 1e-12,
                 qPrintable(cell.key() + " " + column.key()));
        best = std::max(best, cell.value());
      }
      // The highest mean is marked best (* and bold) only where it beats every other row
      // significantly, else it is a tied best; no other cell carries either mark.
      const QString highest = pivot->best_row(column.key());
      QVERIFY(!highest.isEmpty());
      QCOMPARE(pivot->pivot_value(highest, column.key()), best);
      const int col = pivot->table().columns.indexOf(column.key()) + 1;
      const size_t c = static_cast<size_t>(col - 1);
      const lmk::ComparisonTable& comparison = pivot->table().comparison;
      bool beats_all = true;
      const size_t r = static_cast<size_t>(pivot->table().rows.indexOf(highest));
      for (size_t other = 0; other < comparison.rows.size(); ++other) {
        if (other == r || !comparison.present[other][c]) continue;
        const lmk::ComparisonTest* test = comparison.find_test(r, other, c);
        beats_all = beats_all && test && test->significant;
      }
      QCOMPARE(pivot->best_is_significant(column.key()), beats_all);
      for (int row = 0; row < pivot->rowCount(); ++row) {
        const QModelIndex index = pivot->index(row, col);
        const QString text = index.data().toString();
        const bool is_highest = pivot->table().rows[row] == highest;
        QCOMPARE(text.endsWith(" *"), is_highest && beats_all);
        QCOMPARE(index.data(Qt::FontRole).value<QFont>().bold(), is_highest && beats_all);
        QCOMPARE(text.endsWith(" (tie)"), is_highest && !beats_all);
        // mean ± half the width of its interval, from the row's per-query results.
        const lmk::CellSummary& cell = comparison.cells[static_cast<size_t>(row)][c];
        if (!comparison.present[static_cast<size_t>(row)][c]) continue;
        QVERIFY2(cell.per_query && cell.n > 0, qPrintable(text));
        QVERIFY2(text.startsWith(QString::number(pivot->table().values[row][col - 1], 'f', 3) +
                                 " ± " + QString::number(cell.interval.half_width(), 'f', 3)),
                 qPrintable(text));
      }
    }
    QVERIFY(pivot->legend().contains("Fisher's randomization test"));
    QVERIFY(pivot->legend().contains("Holm–Bonferroni"));

    // Variant rows: one run per cell, the run name's first part (cls, mean, lmk-32, lmk-var).
    wait_pivot(view, [&] { view.set_pivot_rows(PivotRows::Variant); });
    QSqlQuery runs = sql(db,
                         "SELECT r.name, er.dataset, ml.value, er.value FROM runs r "
                         "JOIN eval_results er ON er.run_id = r.id JOIN params ml ON ml.run_id = "
                         "r.id AND ml.key = 'max_length' WHERE er.metric = 'ndcg_at_10' AND "
                         "er.group_kind = 'all' AND r.name GLOB '*-passages'");
    int variants = 0;
    while (runs.next()) {
      const QString variant = runs.value(0).toString().section('/', 0, 0);
      // One evaluation length per dataset: the column is the dataset.
      const QString column = runs.value(1).toString();
      QCOMPARE(pivot->pivot_value(variant, column), runs.value(3).toDouble());
      ++variants;
    }
    QVERIFY(variants >= 8);

    // The pivot follows the filter.
    wait_pivot(view, [&] { view.set_filter_text("pooling=mean"); });
    QCOMPARE(pivot->table().rows, QStringList{"mean"});
  }

  // One interval per cell: the pivot's cell and lmk compare's for the same run and group of
  // queries are the same numbers (the same function over the same queries in the same order,
  // whatever each calls the cell), at every length of a multi-part dataset.
  void pivot_cells_are_lmk_compares() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    ResultsView view;
    load(view, path);
    const QSqlDatabase db = direct(path);
    wait_pivot(view, [&] { view.set_pivot_rows(PivotRows::Variant); });
    const lmk::widgets::PivotTable& table = view.pivot_model()->table();
    int compared = 0;
    for (const QString dataset : {"manpages-documents", "passkey"}) {
      // The rows with a run of the dataset, in pivot order, and their newest runs.
      QVector<int> rows;
      QStringList ids;
      for (int r = 0; r < table.rows.size(); ++r) {
        const QVariant id = sql_value(db,
                                      "SELECT MAX(id) FROM runs WHERE name = ? AND kind = 'eval' "
                                      "AND status = 'FINISHED'",
                                      {table.rows[r] + "/" + dataset});
        if (id.isNull()) continue;
        rows << r;
        ids << id.toString();
      }
      QVERIFY2(rows.size() >= 2, qPrintable(dataset));
      QProcess lmk;
      lmk.start(lmk::widgets::lmk_program(),
                QStringList{"compare", "--db", path} + ids +
                    QStringList{"--group", "length", "--format", "csv", "--metric", "ndcg_at_10"});
      QVERIFY(lmk.waitForFinished(60000));
      QVERIFY2(lmk.exitCode() == 0, lmk.readAllStandardError().constData());
      const QVector<QStringList> csv = parse_csv(QString::fromUtf8(lmk.readAllStandardOutput()));
      const QStringList header = csv.value(0);
      for (const QStringList& line : csv) {
        if (line.value(0) != "cell") continue;
        const int row = rows.value(line[header.indexOf("row_key")].at(0).unicode() - 'a', -1);
        const QString group = line[header.indexOf("column")].section("length=", 1);
        const int column = table.columns.indexOf(dataset + "@" + group);
        QVERIFY2(row >= 0 && column >= 0, qPrintable(line.join(",")));
        const lmk::CellSummary& cell = table.comparison.cells[row][column];
        const QString where = table.rows[row] + " " + table.columns[column];
        QCOMPARE(QString::number(cell.n), line[header.indexOf("n")]);
        QVERIFY2(cell.interval.low == line[header.indexOf("ci_low")].toDouble() &&
                     cell.interval.high == line[header.indexOf("ci_high")].toDouble(),
                 qPrintable(where + QString(": pivot %1 – %2, lmk compare %3 – %4")
                                        .arg(cell.interval.low, 0, 'g', 17)
                                        .arg(cell.interval.high, 0, 'g', 17)
                                        .arg(line[header.indexOf("ci_low")],
                                             line[header.indexOf("ci_high")])));
        ++compared;
      }
    }
    QVERIFY(compared >= 8);
  }

  // The eval runs again in a second experiment, same names, half the values: every mode keeps
  // the experiments apart, each row holding its own experiment's stored values.
  // A variant that retrieves every target at one length: with CLS as the baseline its cell is
  // marked ▲, it is the column's significant best (*), and the tooltip names the test against
  // the baseline; the intervals and tests export as lmk compare's CSV.
  void pivot_marks_rows_against_the_baseline() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    const QSqlDatabase db = direct(path);
    const QString run_name =
        sql_value(db, "SELECT name FROM runs WHERE name = 'lmk-32/manpages-passages'").toString();
    const qint64 run = sql_value(db, "SELECT id FROM runs WHERE name = ?", {run_name}).toLongLong();
    sql(db,
        "UPDATE query_metrics SET value = 1 WHERE metric = 'ndcg_at_10' AND query IN "
        "(SELECT id FROM eval_queries WHERE run_id = ?)",
        {run});
    sql(db,
        "UPDATE eval_results SET value = 1 WHERE metric = 'ndcg_at_10' AND run_id = ? AND "
        "group_kind = 'all'",
        {run});
    ResultsView view;
    load(view, path);
    wait_pivot(view, [&] { view.set_pivot_rows(PivotRows::Variant); });
    const lmk::widgets::PivotModel* pivot = view.pivot_model();
    QCOMPARE(pivot->table().baseline, QString("cls"));  // the CLS row until one is chosen
    const QString column = "manpages-passages";         // one evaluation length: the dataset
    const int row = pivot->table().rows.indexOf("lmk-32");
    const int col = pivot->table().columns.indexOf(column) + 1;
    QVERIFY(row >= 0 && col > 0);
    const QString text = pivot->index(row, col).data().toString();
    QVERIFY2(text.startsWith("1.000 ± 0.000 ▲ *"), qPrintable(text));
    QVERIFY(pivot->best_is_significant(column));
    const QString tip = pivot->index(row, col).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains("against cls: +") || tip.contains("against cls: 0.") ||
                 tip.contains("against cls: 1."),
             qPrintable(tip));
    QVERIFY2(tip.contains("Holm-adjusted p"), qPrintable(tip));
    QVERIFY(pivot->index(pivot->table().rows.indexOf("cls"), 0).data().toString() ==
            "cls (baseline)");
    // No baseline: no marks, the best stays.
    wait_pivot(view, [&] { view.set_pivot_baseline(QString()); });
    const QString plain = pivot->index(row, col).data().toString();
    QVERIFY2(!plain.contains("▲") && plain.endsWith(" *"), qPrintable(plain));
    // The intervals and tests as CSV.
    view.export_pivot_tests_csv(dir.filePath("tests.csv"));
    QFile csv(dir.filePath("tests.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QString content = csv.readAll();
    QVERIFY(content.startsWith("kind,row_key,row,"));
    QVERIFY(content.contains("\ntest,"));
    QVERIFY(content.contains(",fisher,holm,0.05\n"));
    // LaTeX and Markdown as lmk compare writes them: the same table, its legend and the test.
    view.export_pivot_latex(dir.filePath("pivot.tex"));
    view.export_pivot_markdown(dir.filePath("pivot.md"));
    QFile tex(dir.filePath("pivot.tex")), markdown(dir.filePath("pivot.md"));
    QVERIFY(tex.open(QIODevice::ReadOnly) && markdown.open(QIODevice::ReadOnly));
    const QString latex = tex.readAll(), md = markdown.readAll();
    QVERIFY2(latex.contains("\\begin{tabular}") && latex.contains("\\caption") &&
                 latex.contains("Holm") && latex.contains("cls"),
             qPrintable(latex.left(400)));
    QVERIFY2(md.contains("| ") && md.contains("|---") && md.contains("Holm") && md.contains("cls"),
             qPrintable(md.left(400)));
    QVERIFY(md.contains("pooled over its parts"));
  }

  void pivot_keeps_experiments_apart() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    const QSqlDatabase db = direct(path);
    lmk::widgets::testing::add_second_experiment(db);
    ResultsView view;
    load(view, path);
    for (const PivotRows mode : {PivotRows::Variant, PivotRows::Pooling}) {
      wait_pivot(view, [&] { view.set_pivot_rows(mode); });
      const lmk::widgets::PivotModel* pivot = view.pivot_model();
      QSqlQuery runs = sql(db,
                           "SELECT x.name, r.name, p.value, er.dataset, ml.value, er.value "
                           "FROM runs r JOIN experiments x ON x.id = r.experiment_id "
                           "JOIN eval_results er ON er.run_id = r.id "
                           "JOIN params p ON p.run_id = r.id AND p.key = 'pooling' "
                           "JOIN params ml ON ml.run_id = r.id AND ml.key = 'max_length' "
                           "WHERE er.metric = 'ndcg_at_10' AND er.group_kind = 'all' "
                           "AND r.name GLOB '*-passages'");
      QSet<QString> experiments;
      int checked = 0;
      while (runs.next()) {
        const QString variant =
            runs.value(0).toString() + ": " + runs.value(1).toString().section('/', 0, 0);
        const QString row =
            mode == PivotRows::Variant ? variant : runs.value(2).toString() + " · " + variant;
        const QString column = runs.value(3).toString();  // one length per dataset
        QVERIFY2(pivot->table().rows.contains(row), qPrintable(row));
        QCOMPARE(pivot->pivot_value(row, column), runs.value(5).toDouble());
        experiments.insert(runs.value(0).toString());
        ++checked;
      }
      QCOMPARE(experiments.size(), 2);
      QVERIFY(checked >= 16);
    }
  }

  void config_diff_lists_exactly_the_differing_keys() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    ResultsView view;
    load(view, path);
    const QSqlDatabase db = direct(path);
    auto id_of = [&](const QString& name) {
      return sql_value(db, "SELECT id FROM runs WHERE name = ?", {name}).toLongLong();
    };
    // Two eval runs (same keys, some values differ), then a training run beside an eval run
    // (keys the other lacks, among them empty values: "" is not the same as missing).
    const QVector<QPair<QString, QString>> pairs = {
        {"cls/manpages-passages", "lmk-32/manpages-documents"},
        {"finetune/cls", "cls/manpages-passages"}};
    for (const auto& pair : pairs) {
      const qlonglong a = std::min(id_of(pair.first), id_of(pair.second));
      const qlonglong b = std::max(id_of(pair.first), id_of(pair.second));
      QVERIFY(a > 0 && b > 0);
      QSignalSpy ready(&view, &ResultsView::diff_ready);
      view.select_runs({a, b});
      QCOMPARE(view.selected_run_ids(), (QList<qlonglong>{a, b}));
      QVERIFY(ready.wait(10000));

      QStringList expected;
      QSqlQuery keys = sql(db,
                           "SELECT key FROM params WHERE run_id IN (?, ?) GROUP BY key "
                           "HAVING count(*) < 2 OR count(DISTINCT value) > 1 ORDER BY key",
                           {a, b});
      while (keys.next()) expected << keys.value(0).toString();
      QCOMPARE(view.diff_model()->shown_keys(), expected);
      // Differing cells are highlighted, and the cells hold the stored values.
      QVERIFY(view.diff_model()->rowCount() > 0);
      const QModelIndex cell = view.diff_model()->index(0, 2);
      QVERIFY(cell.data(Qt::BackgroundRole).isValid());
      const QVariant stored =
          sql_value(db, "SELECT value FROM params WHERE run_id = ? AND key = ?", {b, expected[0]});
      QCOMPARE(cell.data().toString(), stored.isNull() ? QString("—") : stored.toString());
      view.diff_model()->set_show_all(true);
      QCOMPARE(
          view.diff_model()->rowCount(),
          sql_value(db, "SELECT count(DISTINCT key) FROM params WHERE run_id IN (?, ?)", {a, b})
              .toInt());
      view.diff_model()->set_show_all(false);
    }
  }

  void csv_exports_read_back_cell_for_cell() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    ResultsView view;
    load(view, path);
    const QSqlDatabase db = direct(path);
    // Runs: every metric cell is the stored value at full precision; the rest the cell's text.
    const RunsTableModel* runs = view.runs_model();
    view.export_runs_csv(dir.filePath("runs.csv"));
    const QVector<QStringList> run_rows = read_csv(*runs, dir.filePath("runs.csv"));
    QCOMPARE(run_rows.size(), sql_value(db, "SELECT count(*) FROM runs").toInt() + 1);
    int numbers = 0, beyond_four_decimals = 0;
    for (int r = 1; r < run_rows.size(); ++r) {
      const qlonglong id = run_rows[r][0].toLongLong();
      QCOMPARE(id, runs->run_id(r - 1));
      for (int c = 0; c < runs->columnCount(); ++c) {
        const QString& field = run_rows[r][c];
        if (runs->column_kind(c) == RunsTableModel::ColumnKind::Duration) {
          const QVariant seconds = runs->index(r - 1, c).data(Qt::EditRole);
          QCOMPARE(field.isEmpty(), seconds.isNull());
          if (!field.isEmpty()) QCOMPARE(field.toDouble(), seconds.toDouble());
          continue;
        }
        if (runs->column_kind(c) != RunsTableModel::ColumnKind::Metric) {
          // The value itself: "—" and the like are the table's display, not data.
          QCOMPARE(field, runs->index(r - 1, c).data(Qt::EditRole).toString());
          continue;
        }
        check_csv_number(field,
                         stored_metric(db, id, run_rows[0][c].section(" (", 0, 0), runs->metric()));
        numbers += !field.isEmpty();
        beyond_four_decimals += field.section('.', 1).size() > 4;
      }
    }
    QVERIFY(numbers > 10);
    QVERIFY(beyond_four_decimals > 0);

    // Pivot (variant rows): every cell is the mean of its variant's stored results (one run
    // each here), at full precision, without the best mark.
    const lmk::widgets::PivotModel* pivot = view.pivot_model();
    QVERIFY(pivot->rowCount() > 0);
    view.export_pivot_csv(dir.filePath("pivot.csv"));
    const QVector<QStringList> pivot_rows = read_csv(*pivot, dir.filePath("pivot.csv"));
    QCOMPARE(pivot_rows.size(), pivot->rowCount() + 1);
    numbers = 0;
    for (int r = 1; r < pivot_rows.size(); ++r) {
      const QString variant = pivot_rows[r][0];
      for (int c = 1; c < pivot_rows[r].size(); ++c) {
        const QString dataset = pivot_rows[0][c].section('@', 0, 0);
        // Never a null QString: that binds as NULL, and NULL = '' is not true.
        const QString length = pivot_rows[0][c].section('@', 1) + QStringLiteral("");
        const QVariant stored = sql_value(
            db,
            "SELECT AVG(er.value) FROM eval_results er JOIN runs r ON r.id = er.run_id "
            "LEFT JOIN params ml ON ml.run_id = r.id AND ml.key = 'max_length' "
            "WHERE substr(r.name, 1, length(?) + 1) = ? || '/' AND er.dataset = ? "
            "AND er.metric = ? AND ((er.group_kind = 'length' AND er.group_value = ?) OR "
            "(er.group_kind = 'all' AND NOT EXISTS (SELECT 1 FROM eval_results x WHERE "
            "x.dataset = er.dataset AND x.group_kind = 'length') AND (? = '' OR ml.value = ?)))",
            {variant, variant, dataset, runs->metric(), length, length, length});
        check_csv_number(pivot_rows[r][c], stored.isNull()
                                               ? std::numeric_limits<double>::quiet_NaN()
                                               : stored.toDouble());
        numbers += !pivot_rows[r][c].isEmpty();
      }
    }
    QVERIFY(numbers > 10);

    // Ctrl+C on the runs table copies the selected rows as tab-separated text.
    view.show();
    QApplication::setActiveWindow(&view);
    QVERIFY(QTest::qWaitForWindowActive(&view));
    view.select_runs({view.runs_model()->run_id(1), view.runs_model()->run_id(3)});
    view.runs_table()->setFocus();
    QApplication::clipboard()->clear();
    QTest::keySequence(view.runs_table(), QKeySequence::Copy);
    const QStringList lines = QApplication::clipboard()->text().split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);  // the header, then the two rows
    QCOMPARE(lines[1].split('\t').value(RunsTableModel::NameColumn),
             view.runs_model()->index(1, RunsTableModel::NameColumn).data().toString());
    QCOMPARE(lines[2].split('\t').value(RunsTableModel::IdColumn),
             QString::number(view.runs_model()->run_id(3)));
  }

  void mteb_export_writes_the_stored_scores() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    ResultsView view;
    load(view, path);
    const QSqlDatabase db = direct(path);
    QList<qlonglong> ids;
    QSqlQuery evals = sql(db, "SELECT id FROM runs WHERE kind = 'eval' ORDER BY id LIMIT 3");
    while (evals.next()) ids << evals.value(0).toLongLong();
    view.select_runs(ids);
    QSignalSpy exported(&view, &ResultsView::mteb_exported);
    view.export_mteb(dir.filePath("mteb"));
    QVERIFY(exported.wait(10000));
    QCOMPARE(exported[0][1].toString(), QString());
    const QStringList files = exported[0][0].toStringList();
    QCOMPARE(files.size(),
             sql_value(db, QString("SELECT count(*) FROM (SELECT DISTINCT run_id, dataset FROM "
                                   "eval_results WHERE run_id IN (%1, %2, %3))")
                               .arg(ids[0])
                               .arg(ids[1])
                               .arg(ids[2]))
                 .toInt());
    // The store layer's MTEB v2 files, as lmk export writes them: one per (run, dataset) in a
    // folder named after the run.
    QSet<QString> expected;
    for (qlonglong id : ids) {
      const QString name = sql_value(db, "SELECT name FROM runs WHERE id = ?", {id}).toString();
      QSqlQuery datasets = sql(db, QString("SELECT DISTINCT dataset FROM eval_results WHERE "
                                           "run_id = %1 AND group_kind = 'all'")
                                       .arg(id));
      while (datasets.next())
        expected << QDir(dir.filePath("mteb"))
                        .filePath(QString::fromStdString(lmk::safe_file_name(name.toStdString())) +
                                  "/" +
                                  QString::fromStdString(lmk::safe_file_name(
                                      datasets.value(0).toString().toStdString())) +
                                  ".json");
    }
    QCOMPARE(QSet<QString>(files.begin(), files.end()), expected);
    for (const QString& file_path : files) {
      QFile file(file_path);
      QVERIFY(file.open(QIODevice::ReadOnly));
      QJsonParseError error;
      const QJsonObject json = QJsonDocument::fromJson(file.readAll(), &error).object();
      QCOMPARE(error.error, QJsonParseError::NoError);
      const QString run_folder = QFileInfo(file_path).dir().dirName();
      qlonglong run = -1;
      for (qlonglong id : ids) {
        const QString name = sql_value(db, "SELECT name FROM runs WHERE id = ?", {id}).toString();
        if (QString::fromStdString(lmk::safe_file_name(name.toStdString())) == run_folder) run = id;
      }
      QVERIFY(ids.contains(run));
      const QString dataset = json["task_name"].toString();
      const QString split = sql_value(db,
                                      "SELECT split FROM eval_results WHERE run_id = ? AND "
                                      "dataset = ? LIMIT 1",
                                      {run, dataset})
                                .toString();
      const QJsonObject scores = json["scores"].toObject()[split].toArray()[0].toObject();
      QCOMPARE(scores["ndcg_at_10"].toDouble(), stored_metric(db, run, dataset, "ndcg_at_10"));
      QCOMPARE(scores["main_score"].toDouble(), scores["ndcg_at_10"].toDouble());
      QCOMPARE(scores.size() - 3,  // hf_subset, languages, main_score
               sql_value(db,
                         "SELECT count(*) FROM eval_results WHERE run_id = ? AND dataset = ? "
                         "AND split = ? AND group_kind = 'all'",
                         {run, dataset, split})
                   .toInt());
    }
  }

  void empty_stores_say_what_to_do() {
    ResultsView view;
    load(view, QString());
    QVERIFY(view.empty_state().contains("No results store open"));

    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    {
      QSqlDatabase db = direct(path, "emptying");
      sql(db, "PRAGMA foreign_keys = ON");
      sql(db, "DELETE FROM runs");
      QCOMPARE(sql_value(db, "SELECT count(*) FROM eval_results").toInt(), 0);
      db.close();
    }
    QSqlDatabase::removeDatabase("emptying");
    load(view, path);
    QVERIFY2(view.empty_state().startsWith("No runs yet — design a study in the Designer tab"),
             qPrintable(view.empty_state()));
    QCOMPARE(view.runs_model()->rowCount(), 0);
  }

  // A run still writing (an open write transaction, then commits) while the view refreshes: no
  // locking errors (the store is WAL), and the new runs show once committed, RUNNING included.
  void a_concurrent_writer_does_not_disturb_refreshes() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    ResultsView view;
    QSignalSpy messages(&view, &StoreView::status_message);
    load(view, path);
    const QSqlDatabase check = direct(path);
    const int before = sql_value(check, "SELECT count(*) FROM runs").toInt();
    QSqlDatabase writer = direct(path, "writer");
    for (int i = 0; i < 5; ++i) {
      QVERIFY(writer.transaction());
      sql(writer,
          "INSERT INTO runs (experiment_id, name, kind, status) SELECT id, ?, 'eval', 'RUNNING' "
          "FROM experiments LIMIT 1",
          {QString("writer/run-%1").arg(i)});
      sql(writer,
          "INSERT INTO params (run_id, key, value) VALUES (last_insert_rowid(), 'pooling', "
          "'cls')");
      // The view reads while the write transaction is open…
      QSignalSpy loaded(&view, &StoreView::loaded);
      view.refresh();
      QVERIFY(loaded.wait(10000));
      view.runs_model()->fetch_all();
      QCOMPARE(view.runs_model()->rowCount(), before + i);
      QVERIFY2(view.runs_model()->last_error().isEmpty(),
               qPrintable(view.runs_model()->last_error()));
      // …and the writer commits while the view holds its query.
      QVERIFY2(writer.commit(), qPrintable(writer.lastError().text()));
      view.refresh();
      QVERIFY(loaded.wait(10000));
      view.runs_model()->fetch_all();
      QCOMPARE(view.runs_model()->rowCount(), before + i + 1);
    }
    view.set_filter_text("status=running");
    view.runs_model()->fetch_all();
    QCOMPARE(view.runs_model()->rowCount(),
             sql_value(check, "SELECT count(*) FROM runs WHERE status = 'RUNNING'").toInt());
    for (const QList<QVariant>& message : messages)
      QVERIFY2(!message[0].toString().contains("lock", Qt::CaseInsensitive),
               qPrintable(message[0].toString()));
    writer.close();
  }

  // 10 000 runs and ~1 000 000 results: the table fetches lazily, sorts in SQL, and a writer can
  // commit while the view holds its half-fetched query.
  void scales_to_ten_thousand_runs() {
    QTemporaryDir dir;
    const QString path = copy_fixture(dir);
    QElapsedTimer timer;
    timer.start();
    {
      QSqlDatabase db = direct(path, "scale");
      QVERIFY(db.transaction());
      sql(db,
          "INSERT INTO runs (id, experiment_id, name, kind, status) "
          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000) "
          "SELECT 100000 + i, (SELECT MIN(id) FROM experiments), "
          "'scale/v' || (i % 40) || '/b' || (i % 7), 'eval', "
          "CASE WHEN i % 97 = 0 THEN 'RUNNING' ELSE 'FINISHED' END FROM n");
      sql(db,
          "INSERT INTO params (run_id, key, value) "
          "SELECT id, 'pooling', CASE id % 3 WHEN 0 THEN 'cls' WHEN 1 THEN 'mean' ELSE 'lmk' END "
          "FROM runs WHERE id > 100000 UNION ALL "
          "SELECT id, 'max_length', CAST(128 << (id % 3) AS TEXT) FROM runs WHERE id > 100000");
      sql(db,
          "INSERT INTO eval_results (run_id, dataset, split, metric, group_kind, group_value, "
          "value) SELECT r.id, d.dataset, 'test', d.metric, 'all', '', "
          "(abs(random()) % 100000) / 100000.0 FROM runs r, (SELECT DISTINCT dataset, metric "
          "FROM eval_results) d WHERE r.id > 100000");
      QVERIFY(db.commit());
      db.close();
    }
    QSqlDatabase::removeDatabase("scale");
    qInfo("built the 10 000-run store in %lld ms", timer.restart());

    const QSqlDatabase check = direct(path);
    ResultsView view;
    view.resize(1000, 600);
    view.show();  // a hidden view fetches every row at once (see ResultsView::hideEvent)
    load(view, path);
    qInfo("loaded (summary, first page, pivot) in %lld ms", timer.restart());
    RunsTableModel* model = view.runs_model();
    QVERIFY(model->rowCount() < 10000);  // lazily fetched: the first pages only
    QVERIFY(model->canFetchMore());

    // A writer commits while the view's query is half fetched.
    {
      QSqlDatabase writer = direct(path, "scale-writer");
      QVERIFY(
          sql(writer, "UPDATE runs SET status = 'FINISHED' WHERE id = 100097").numRowsAffected() ==
          1);
      writer.close();
    }
    QSqlDatabase::removeDatabase("scale-writer");

    model->fetch_all();
    QCOMPARE(model->rowCount(), sql_value(check, "SELECT count(*) FROM runs").toInt());
    // Hiding the view finishes a half-fetched query (it would hold the WAL back).
    view.runs_table()->sortByColumn(RunsTableModel::IdColumn, Qt::DescendingOrder);
    QVERIFY(model->canFetchMore());
    view.hide();
    QVERIFY(!model->canFetchMore());
    QCOMPARE(model->rowCount(), sql_value(check, "SELECT count(*) FROM runs").toInt());
    view.show();
    const QString dataset = sql_value(check,
                                      "SELECT dataset FROM eval_results WHERE run_id > "
                                      "100000 LIMIT 1")
                                .toString();
    const int column = model->column_of(dataset);
    QVERIFY(column >= 0);
    view.runs_table()->sortByColumn(column, Qt::DescendingOrder);
    QCOMPARE(model->index(0, column).data(Qt::EditRole).toDouble(),
             sql_value(check,
                       "SELECT MAX(value) FROM eval_results WHERE dataset = ? AND metric = "
                       "'ndcg_at_10' AND group_kind = 'all'",
                       {dataset})
                 .toDouble());
    double previous = 2;
    for (int row = 0; row < model->rowCount(); ++row) {
      const QVariant value = model->index(row, column).data(Qt::EditRole);
      if (value.isNull()) break;
      QVERIFY(value.toDouble() <= previous);
      previous = value.toDouble();
    }
    qInfo("fetched and sorted in %lld ms", timer.restart());
    view.set_filter_text("pooling=mean max_length=512");
    model->fetch_all();
    QCOMPARE(model->rowCount(),
             sql_value(check,
                       "SELECT count(*) FROM params p JOIN params q ON q.run_id = p.run_id WHERE "
                       "p.key = 'pooling' AND p.value = 'mean' AND q.key = 'max_length' AND "
                       "q.value = '512'")
                 .toInt());
    qInfo("filtered in %lld ms", timer.restart());
  }
};

QTEST_MAIN(ResultsTest)
#include "results_test.moc"
