// The Training view over a real store written by the core's ResultsStore (the writer lmk train
// uses): every run that logged a loss is listed, each ticked run's line is its stored series by
// step or by time since its start, the smoothing is TensorBoard's debiased moving average
// (checked against its closed form, a weighted mean, not against the view's recursion), and a
// click on a legend item hides and shows its run.
#include <qcustomplot.h>
#include <QListWidget>
#include <QSettings>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "core/store/results_store.h"
#include "widgets/training_view.h"

using lmk::widgets::StoreView;
using lmk::widgets::TrainingView;

namespace {

// The smoothed value at i as the mean of the values so far weighted by weight^(age) — the
// closed form of TensorBoard's debiased EMA.
double weighted_mean(const std::vector<double>& values, size_t i, double weight) {
  double sum = 0, norm = 0;
  for (size_t j = 0; j <= i; ++j) {
    sum += std::pow(weight, static_cast<double>(i - j)) * values[j];
    norm += std::pow(weight, static_cast<double>(i - j));
  }
  return sum / norm;
}

void exec(const QString& path, const QString& sql) {
  QSqlDatabase db = QSqlDatabase::contains("direct")
                        ? QSqlDatabase::database("direct", false)
                        : QSqlDatabase::addDatabase("QSQLITE", "direct");
  db.setDatabaseName(path);
  if (!db.open()) qFatal("open %s", qPrintable(path));
  QSqlQuery q(db);
  if (!q.exec(sql)) qFatal("%s: %s", qPrintable(sql), qPrintable(q.lastError().text()));
  db.close();
}

struct Store {
  QString path;
  qint64 train = 0, pretrain = 0, eval = 0;
};

// Two training runs (60 and 25 logged steps, a point every 10 s from a start at midnight) and
// an eval run with step-0 timings, which is no training run.
Store make_store(const QTemporaryDir& dir) {
  Store store;
  store.path = dir.filePath("results.db");
  lmk::ResultsStore results(store.path.toStdString());
  const int64_t experiment = results.get_or_create_experiment("curves");
  store.pretrain = results.create_run(experiment, {"pretrain", "pretrain"});
  store.train = results.create_run(experiment, {"finetune/lmk-32", "train"});
  store.eval = results.create_run(experiment, {"lmk-32/passkey", "eval"});
  for (qint64 run : {store.pretrain, store.train}) {
    results.set_run_status(run, lmk::RunStatus::Running);
    const int steps = run == store.train ? 60 : 25;
    for (int step = 1; step <= steps; ++step) {
      // A falling loss with a deterministic wiggle; a warm-up then decaying learning rate.
      const double loss = 2.0 * std::exp(-step / 15.0) + 0.1 + 0.05 * std::sin(step * 1.7);
      const double lr = 1e-3 * std::min(1.0, step / 10.0) * (1.0 - step / 100.0);
      results.log_metrics(run, step * 10,
                          {{"loss", loss}, {"lr", lr}, {"tokens_per_s", 900.0 + step}});
    }
    results.set_run_status(run, lmk::RunStatus::Finished);
  }
  results.log_metrics(store.eval, 0, {{"search_seconds", 0.5}});
  exec(store.path, "UPDATE runs SET started_at = '2026-01-01T00:00:00.000Z'");
  exec(store.path,
       "UPDATE metrics SET time = strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01T00:00:00', "
       "'+' || step || ' seconds')");
  return store;
}

void load(TrainingView& view, const QString& path) {
  QSignalSpy loaded(&view, &StoreView::loaded);
  view.set_store(path);
  QVERIFY(loaded.count() > 0 || loaded.wait(30000));
}

void wait_loaded(TrainingView& view, const std::function<void()>& change) {
  QSignalSpy loaded(&view, &StoreView::loaded);
  change();
  QVERIFY(loaded.count() > 0 || loaded.wait(30000));
}

}  // namespace

class TrainingTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
  }

  void every_training_run_is_drawn_from_its_stored_series() {
    QTemporaryDir dir;
    const Store store = make_store(dir);
    TrainingView view;
    view.resize(1000, 600);
    view.show();
    load(view, store.path);
    QCOMPARE(view.listed_runs(), (QList<qlonglong>{store.pretrain, store.train}));
    QCOMPARE(view.shown_runs(), (QList<qlonglong>{store.pretrain, store.train}));
    QCOMPARE(view.metric(), QString("loss"));
    QCOMPARE(view.message(), QString());

    const lmk::ResultsStore results(store.path.toStdString(),
                                    lmk::ResultsStore::OpenMode::Existing);
    view.set_smoothing(0.6);
    for (const char* key : {"loss", "lr", "tokens_per_s"}) {
      if (view.metric() != key) wait_loaded(view, [&] { view.set_metric(key); });
      for (qint64 run : {store.pretrain, store.train}) {
        const std::vector<lmk::Metric> series = results.metric_series(run, key);
        const QVector<QPointF> raw = view.raw_curve(run), smooth = view.smoothed_curve(run);
        QCOMPARE(raw.size(), static_cast<qsizetype>(series.size()));
        std::vector<double> values;
        for (const lmk::Metric& m : series) values.push_back(m.value);
        for (size_t i = 0; i < series.size(); ++i) {
          QCOMPARE(raw[i].x(), static_cast<double>(series[i].step));
          QCOMPARE(raw[i].y(), series[i].value);
          QVERIFY2(std::abs(smooth[i].y() - weighted_mean(values, i, 0.6)) <=
                       1e-12 * std::abs(values[i]) + 1e-15,
                   qPrintable(QString("%1 at %2").arg(key).arg(i)));
        }
      }
    }

    // Time since the start: the longest run took 600 s, so the axis is in minutes.
    view.set_x_axis(TrainingView::XAxis::Time);
    QVERIFY(view.plot()->xAxis->label().contains("min"));
    const std::vector<lmk::Metric> series = results.metric_series(store.train, "tokens_per_s");
    const QVector<QPointF> by_time = view.raw_curve(store.train);
    for (size_t i = 0; i < series.size(); ++i)
      QVERIFY(std::abs(by_time[i].x() - series[i].step * 1.0 / 60.0) < 1e-6);

    // No smoothing: one line per run, the raw values.
    view.set_smoothing(0);
    QCOMPARE(view.plot()->graphCount(), 2);
    QCOMPARE(view.smoothed_curve(store.train), view.raw_curve(store.train));
    QVERIFY(view.point_text(store.train, 0).contains("step 10"));
  }

  // A log axis shows all the data, off its edges, and labels every decade it spans (a learning
  // rate decaying to 1.67e-5 fell below the axis, which had a single label).
  void a_log_axis_covers_the_data_and_labels_its_decades() {
    QTemporaryDir dir;
    const QString path = dir.filePath("results.db");
    {
      lmk::ResultsStore results(path.toStdString());
      const qint64 run =
          results.create_run(results.get_or_create_experiment("lr"), {"finetune/cls", "train"});
      int step = 0;
      for (double lr : {5e-5, 4.17e-5, 3.33e-5, 2.5e-5, 1.67e-5})
        results.log_metrics(run, ++step, {{"loss", 1.0 / step}, {"lr", lr}});
      results.set_run_status(run, lmk::RunStatus::Finished);
    }
    TrainingView view;
    view.resize(1000, 600);
    view.show();
    load(view, path);
    wait_loaded(view, [&] { view.set_metric("lr"); });
    view.set_smoothing(0);
    view.set_log_y(true);
    view.plot()->replot();
    QCPAxis* y = view.plot()->yAxis;
    QCOMPARE(y->scaleType(), QCPAxis::stLogarithmic);
    QVERIFY2(y->range().lower < 1.67e-5 && y->range().upper > 5e-5,
             qPrintable(QString("%1 – %2").arg(y->range().lower).arg(y->range().upper)));
    // Off the edges: the lowest point is drawn above the axis rect's bottom.
    QVERIFY(y->coordToPixel(1.67e-5) < y->axisRect()->bottom() - 2);
    QVERIFY(y->coordToPixel(5e-5) > y->axisRect()->top() + 2);
    QVector<double> labelled;
    for (double tick : y->tickVector())
      if (y->range().contains(tick)) labelled << tick;
    QVERIFY2(labelled.size() >= 2, qPrintable(QString::number(labelled.size())));
    for (double decade = 1e-5; decade <= y->range().upper * (1 + 1e-9); decade *= 10)
      if (decade >= y->range().lower * (1 - 1e-9))
        QVERIFY2(std::any_of(labelled.begin(), labelled.end(),
                             [&](double t) { return std::abs(t / decade - 1) < 1e-9; }),
                 qPrintable(QString("no label at %1").arg(decade)));
  }

  void unticking_a_run_or_clicking_its_legend_item_hides_it() {
    QTemporaryDir dir;
    const Store store = make_store(dir);
    TrainingView view;
    view.resize(1000, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    load(view, store.path);
    view.set_smoothing(0.5);
    QCustomPlot* plot = view.plot();
    QCOMPARE(plot->graphCount(), 4);  // raw and smoothed per run
    QCOMPARE(plot->legend->itemCount(), 2);

    // The legend: a click hides both lines of the run, a second shows them again.
    auto visible = [&](const QString& name) {
      int shown = 0;
      for (int i = 0; i < plot->graphCount(); ++i)
        if (plot->graph(i)->name() == name && plot->graph(i)->visible()) ++shown;
      return shown;
    };
    const QString name = view.run_label(store.train);
    QCPAbstractLegendItem* item = nullptr;
    for (int i = 0; i < plot->legend->itemCount(); ++i)
      if (auto* p = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i));
          p && p->plottable()->name() == name)
        item = p;
    QVERIFY(item != nullptr);
    QCOMPARE(visible(name), 2);
    const QPoint center = item->outerRect().center();
    QTest::mouseClick(plot, Qt::LeftButton, {}, center);
    QCOMPARE(visible(name), 0);
    QCOMPARE(visible(view.run_label(store.pretrain)), 2);
    // Hidden stays hidden when the view draws again (another smoothing).
    view.set_smoothing(0.7);
    QCOMPARE(visible(name), 0);
    QTest::mouseClick(plot, Qt::LeftButton, {}, center);
    QCOMPARE(visible(name), 2);

    // Unticked in the list: its curve is not read, its lines are gone.
    wait_loaded(view, [&] { view.set_runs({store.pretrain}); });
    QCOMPARE(view.shown_runs(), QList<qlonglong>{store.pretrain});
    QCOMPARE(plot->graphCount(), 2);
    QVERIFY(view.raw_curve(store.train).isEmpty());
    wait_loaded(view, [&] { view.set_runs({}); });
    QVERIFY(view.message().contains("Tick"));
  }

  void a_store_without_training_runs_says_so() {
    QTemporaryDir dir;
    const QString path = dir.filePath("results.db");
    {
      lmk::ResultsStore results(path.toStdString());
      const int64_t experiment = results.get_or_create_experiment("evals only");
      results.log_metrics(results.create_run(experiment, {"cls/passkey", "eval"}), 0,
                          {{"search_seconds", 0.5}});
    }
    TrainingView view;
    load(view, path);
    QVERIFY(view.listed_runs().isEmpty());
    QVERIFY2(view.message().contains("No training runs"), qPrintable(view.message()));
  }
};

QTEST_MAIN(TrainingTest)
#include "training_test.moc"
