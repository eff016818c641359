// The three plot views over the real study store built by the core: every heatmap cell is the
// stored attention profile, one colour range spans both panels, the histogram bars are the stored
// length bins with the training length marked, the curve points are the stored evaluation
// results; exports are valid PNG / PDF / SVG and CSV; an empty store shows what to do.
#include <qcustomplot.h>
#include <QAbstractItemView>
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QResizeEvent>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolTip>
#include <QXmlStreamReader>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "core/eval/comparison.h"
#include "core/store/schema.h"
#include "tests/widgets/fixture_store.h"
#include "widgets/attention_view.h"
#include "widgets/compare_view.h"
#include "widgets/curves_view.h"
#include "widgets/length_view.h"
#include "widgets/needle_map_view.h"
#include "widgets/plot_export.h"
#include "widgets/plot_view.h"

using lmk::widgets::AttentionBin;
using lmk::widgets::AttentionView;
using lmk::widgets::CompareView;
using lmk::widgets::CurvesView;
using lmk::widgets::LengthBin;
using lmk::widgets::LengthView;
using lmk::widgets::NeedleMapView;
using lmk::widgets::PlotView;
using lmk::widgets::StoreView;

namespace {

// The test's own connection to the fixture store: expected values come from here, not from
// the views' queries.
QSqlQuery query(const QString& sql, const QVariantList& bindings = {},
                const QString& connection = QStringLiteral("expected")) {
  QSqlDatabase db = QSqlDatabase::database(connection);
  QSqlQuery q(db);
  if (!q.prepare(sql)) qFatal("prepare: %s", qPrintable(q.lastError().text()));
  for (const QVariant& value : bindings) q.addBindValue(value);
  if (!q.exec()) qFatal("exec: %s", qPrintable(q.lastError().text()));
  return q;
}

QStringList strings(const QString& sql, const QVariantList& bindings = {}) {
  QSqlQuery q = query(sql, bindings);
  QStringList out;
  while (q.next()) out << q.value(0).toString();
  return out;
}

// A copy of the fixture store in `dir` whose eval runs (their params, results and attention
// profiles) appear a second time in experiment "second-study", at half the stored values and
// with the same run names; connection "copy" reads it.
QString two_experiment_copy(const QTemporaryDir& dir) {
  const QString path = dir.filePath("two-experiments.db");
  lmk::widgets::testing::copy_fixture_store(path);
  QSqlDatabase db = QSqlDatabase::contains("copy") ? QSqlDatabase::database("copy")
                                                   : QSqlDatabase::addDatabase("QSQLITE", "copy");
  db.close();
  db.setDatabaseName(path);
  if (!db.open()) qFatal("cannot open %s", qPrintable(path));
  lmk::widgets::testing::add_second_experiment(db);
  return path;
}

// Runs `action` and waits for the view's loaded().
bool loads(StoreView& view, const std::function<void()>& action) {
  QSignalSpy spy(&view, &StoreView::loaded);
  action();
  return spy.count() > 0 || spy.wait(30000);
}

QString series(const QString& run_name) {
  return run_name.left(run_name.lastIndexOf('/'));
}

double middle(const QString& range) {
  const QStringList parts = QString(range).remove('%').split('-');
  return (parts[0].toDouble() + parts[1].toDouble()) / 2;
}

using Points = std::map<QString, std::map<double, double>>;  // series -> x -> y

Points curve_points(const CurvesView& view, CurvesView::Panel panel) {
  Points points;
  for (const QString& name : view.curve_names(panel))
    for (const QPointF& p : view.curve(panel, name)) points[name][p.x()] = p.y();
  return points;
}

// One run's stored per-query values of a metric on a dataset (of one part when given).
std::vector<lmk::QueryScore> stored_scores(qint64 run, const QString& dataset,
                                           const QString& metric, const QString& part = "*") {
  QSqlQuery q = query(
      "SELECT q.part, q.query_id, m.value FROM eval_queries q JOIN query_metrics m "
      "ON m.query = q.id WHERE q.run_id = ? AND q.dataset = ? AND m.metric = ? "
      "AND (? = '*' OR q.part = ?)",
      {run, dataset, metric, part, part});
  std::vector<lmk::QueryScore> scores;
  while (q.next())
    scores.push_back({q.value(0).toString().toStdString(),
                      q.value(1).toString().toStdString(),
                      q.value(2).toDouble(),
                      {},
                      {}});
  return scores;
}

// The id of the eval run called `name`.
qint64 run_named(const QString& name) {
  QSqlQuery q = query("SELECT id FROM runs WHERE name = ? ORDER BY id DESC", {name});
  return q.next() ? q.value(0).toLongLong() : -1;
}

// The stored weights of one profile, by bin: (start, end, weight).
QVector<std::array<double, 3>> stored_profile(qint64 run_id, const QString& dataset,
                                              const QString& length_group, int layer, int head) {
  QSqlQuery q = query(
      "SELECT bin_start, bin_end, weight FROM attention_profiles WHERE run_id = ? AND dataset = ? "
      "AND length_group = ? AND layer = ? AND head = ? ORDER BY bin",
      {run_id, dataset, length_group, layer, head});
  QVector<std::array<double, 3>> bins;
  while (q.next())
    bins.append({q.value(0).toDouble(), q.value(1).toDouble(), q.value(2).toDouble()});
  return bins;
}

void check_png(const QString& path, int width, int height) {
  QFile file(path);
  QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(path));
  QVERIFY(file.read(4) == QByteArray("\x89PNG", 4));
  QImage image(path);
  QVERIFY(!image.isNull());
  QCOMPARE(image.size(), QSize(width, height));
  // Something is drawn: more than a handful of colours.
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 7)
    for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
  QVERIFY2(colours.size() > 8, qPrintable(QString::number(colours.size())));
}

void check_exports(PlotView& view, const QString& folder, const QString& name) {
  const QString png = folder + "/" + name + ".png";
  view.export_to(png, 900, 500);
  check_png(png, 900, 500);
  const QString pdf = folder + "/" + name + ".pdf";
  view.export_to(pdf, 900, 500);
  QFile pdf_file(pdf);
  QVERIFY(pdf_file.open(QIODevice::ReadOnly));
  QVERIFY(pdf_file.read(5) == "%PDF-");
  QVERIFY(pdf_file.size() > 1000);
  const QString svg = folder + "/" + name + ".svg";
  view.export_to(svg, 900, 500);
  QFile svg_file(svg);
  QVERIFY(svg_file.open(QIODevice::ReadOnly));
  QXmlStreamReader xml(&svg_file);
  bool saw_svg = false;
  int elements = 0;
  while (!xml.atEnd()) {
    if (xml.readNext() == QXmlStreamReader::StartElement) {
      ++elements;
      if (elements == 1) saw_svg = xml.name() == QLatin1String("svg");
    }
  }
  QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
  QVERIFY(saw_svg);
  QVERIFY(elements > 20);
}

}  // namespace

class PlotsTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo::exists(LMK_WORKBENCH_STUDY_DB),
             "the fixture store is missing: ctest -R workbench_fixture_study");
    QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "expected");
    db.setDatabaseName(LMK_WORKBENCH_STUDY_DB);
    db.setConnectOptions("QSQLITE_OPEN_READONLY");
    QVERIFY(db.open());
  }

  // Every cell of every row, for every stored dataset, is the stored bin's weight; the rows of a
  // panel are exactly the stored profiles of its pooling.
  void attention_cells_equal_the_stored_profiles() {
    AttentionView view;
    view.resize(1200, 700);
    view.show();
    QVERIFY(loads(view, [&] { view.set_store(LMK_WORKBENCH_STUDY_DB); }));
    view.set_log_color(false);  // cells hold the stored shares as they are
    QVERIFY(view.message().isEmpty());
    const QStringList poolings = strings(
        "SELECT DISTINCT p.value FROM params p JOIN attention_profiles a "
        "ON a.run_id = p.run_id WHERE p.key = 'pooling' ORDER BY 1");
    QVERIFY(poolings.contains("cls"));
    QCOMPARE(view.pooling(0), QString("cls"));
    QCOMPARE(view.pooling(1), poolings.contains("lmk") ? QString("lmk") : poolings.value(1));
    const QStringList datasets = strings("SELECT DISTINCT dataset FROM attention_profiles");
    QVERIFY(datasets.size() >= 2);
    int checked_cells = 0;
    for (const QString& dataset : datasets) {
      QSqlQuery choice = query(
          "SELECT MAX(layer), MIN(head) FROM attention_profiles WHERE dataset = ?", {dataset});
      QVERIFY(choice.next());
      const int layer = choice.value(0).toInt();
      const int head = choice.value(1).toInt();
      if (view.dataset() != dataset) QVERIFY(loads(view, [&] { view.set_dataset(dataset); }));
      // CLS on the left; every other pooling in turn on the right.
      for (const QString& pooling : poolings) {
        const int panel = pooling == "cls" ? 0 : 1;
        view.set_pooling(panel, pooling);
        QCOMPARE(view.pooling(panel), pooling);
        QSqlQuery rows = query(
            "SELECT COUNT(DISTINCT a.run_id || '/' || a.length_group) FROM attention_profiles a "
            "JOIN params p ON p.run_id = a.run_id AND p.key = 'pooling' "
            "WHERE a.dataset = ? AND a.layer = ? AND a.head = ? AND p.value = ?",
            {dataset, layer, head, pooling});
        QVERIFY(rows.next());
        QCOMPARE(view.row_count(panel), rows.value(0).toInt());
        QVERIFY(view.row_count(panel) > 0);
        for (int r = 0; r < view.row_count(panel); ++r) {
          const auto& row = view.row(panel, r);
          QCOMPARE(row.pooling, pooling);
          const auto stored = stored_profile(row.run_id, dataset, row.length_group, layer, head);
          QCOMPARE(view.cell_count(panel), stored.size());
          for (int b = 0; b < stored.size(); ++b) {
            QCOMPARE(view.cell_value(panel, r, b), stored[b][2]);
            ++checked_cells;
          }
          const QString name = strings("SELECT name FROM runs WHERE id = ?", {row.run_id}).value(0);
          QCOMPARE(view.row_labels(panel)[r],
                   row.length_group == "all" ? name : name + "@" + row.length_group);
        }
      }
    }
    QVERIFY(checked_cells > 100);
    QVERIFY(poolings.size() >= 2);
  }

  // One colour scale: both maps use it and its range, the smallest to the largest share shown;
  // its top colour is not white (white read as missing data).
  void attention_panels_share_one_colour_range() {
    AttentionView view;
    view.resize(1200, 700);
    QVERIFY(loads(view, [&] { view.set_store(LMK_WORKBENCH_STUDY_DB); }));
    view.set_log_color(false);
    double smallest = std::numeric_limits<double>::infinity();
    double largest = -smallest;
    // The extreme stored weights over the rows shown, from the store.
    for (int panel = 0; panel < 2; ++panel)
      for (int r = 0; r < view.row_count(panel); ++r) {
        QSqlQuery q = query(
            "SELECT MIN(weight), MAX(weight) FROM attention_profiles WHERE run_id = ? AND "
            "dataset = ? AND length_group = ? AND layer = (SELECT MAX(layer) FROM "
            "attention_profiles WHERE run_id = ? AND dataset = ?) AND head = -1",
            {view.row(panel, r).run_id, view.dataset(), view.row(panel, r).length_group,
             view.row(panel, r).run_id, view.dataset()});
        QVERIFY(q.next());
        smallest = std::min(smallest, q.value(0).toDouble());
        largest = std::max(largest, q.value(1).toDouble());
      }
    QVERIFY(largest > smallest);
    QCOMPARE(view.color_range(0), view.color_range(1));
    QCOMPARE(view.color_range(0), view.color_scale()->dataRange());
    QCOMPARE(view.color_range(0).lower, smallest);
    QCOMPARE(view.color_range(0).upper, largest);
    QVERIFY(view.color_scale()->gradient().color(1.0, QCPRange(0, 1)) != qRgb(255, 255, 255));
    const auto maps = view.plot()->findChildren<QCPColorMap*>();
    QCOMPARE(maps.size(), 2);
    for (QCPColorMap* map : maps) QCOMPARE(map->colorScale(), view.color_scale());
  }

  // The colour scale is logarithmic by default, from the smallest positive share shown to the
  // largest (a share of 0 held at that lower end: the lowest colour); each layer in the list
  // says global or local as its model's config.json does (read here with Qt's JSON, not the
  // core's reader); the hover names the bin as the x axis does.
  void attention_log_colour_scale_and_layer_kinds() {
    AttentionView view;
    view.resize(1200, 700);
    QVERIFY(loads(view, [&] { view.set_store(LMK_WORKBENCH_STUDY_DB); }));
    QVERIFY(view.log_color());
    QCOMPARE(view.color_scale()->dataScaleType(), QCPAxis::stLogarithmic);
    double smallest_positive = std::numeric_limits<double>::infinity(), largest = 0;
    for (int panel = 0; panel < 2; ++panel)
      for (int r = 0; r < view.row_count(panel); ++r)
        for (const AttentionBin& bin : view.row(panel, r).bins)
          if (std::isfinite(bin.weight)) {
            if (bin.weight > 0) smallest_positive = std::min(smallest_positive, bin.weight);
            largest = std::max(largest, bin.weight);
          }
    QCOMPARE(view.color_range(0).lower, smallest_positive);
    QCOMPARE(view.color_range(1).upper, largest);
    // The log colour bar labels every decade of its range, and at least two values.
    view.plot()->replot();
    QCPAxis* bar = view.color_scale()->axis();
    QVector<double> labelled;
    for (double tick : bar->tickVector())
      if (bar->range().contains(tick)) labelled << tick;
    QVERIFY2(labelled.size() >= 2, qPrintable(QString::number(labelled.size())));
    for (int k = -12; k <= 1; ++k) {
      const double decade = std::pow(10.0, k);
      if (decade < bar->range().lower || decade > bar->range().upper) continue;
      QVERIFY2(std::any_of(labelled.begin(), labelled.end(),
                           [&](double t) { return std::abs(t / decade - 1) < 1e-9; }),
               qPrintable(QString("no label at %1").arg(decade)));
    }
    int checked = 0;
    for (int panel = 0; panel < 2; ++panel)
      for (int r = 0; r < view.row_count(panel); ++r)
        for (int c = 0; c < view.cell_count(panel); ++c) {
          const double stored = view.row(panel, r).bins[c].weight;
          QCOMPARE(view.cell_value(panel, r, c), std::max(stored, smallest_positive));
          ++checked;
        }
    QVERIFY(checked > 20);

    // The layer's kind from each run's model folder.
    const QPoint layer_head(view.row(0, 0).run_id, 0);
    const QString model =
        strings("SELECT value FROM params WHERE run_id = ? AND key = 'model'", {layer_head.x()})
            .value(0);
    QFile file(model + "/config.json");
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
    const QJsonObject config = QJsonDocument::fromJson(file.readAll()).object();
    const int layer =
        strings("SELECT MAX(layer) FROM attention_profiles WHERE dataset = ?", {view.dataset()})
            .value(0)
            .toInt();
    const QString type = config["layer_types"].toArray().at(layer).toString();
    QVERIFY(!type.isEmpty());
    const QString expected =
        type == "full_attention"
            ? QString("global")
            : QString("local, window %1").arg(config["local_attention"].toInt());
    QCOMPARE(view.layer_kind(layer), expected);
    QVERIFY2(view.layer_head_text().contains("(" + expected + ")"),
             qPrintable(view.layer_head_text()));
    QVERIFY(view.color_scale()->label().contains(expected));

    // The hover names the bin as the axis does.
    const QString axis = view.plot()->axisRects().at(0)->axis(QCPAxis::atBottom)->label();
    const auto& bin = view.row(0, 0).bins[1];
    QVERIFY2(
        view.describe(0, (bin.start + bin.end) / 2, 0)
            .contains(
                QString("%1 %2–%3").arg(axis).arg(bin.start, 0, 'g', 4).arg(bin.end, 0, 'g', 4)),
        qPrintable(view.describe(0, (bin.start + bin.end) / 2, 0)));
  }

  // On a log axis every cell shows the stored bin its centre falls in; the length-group choice
  // keeps that group's rows only; hovering names the run, bin and exact weight.
  void attention_log_axis_groups_and_hover() {
    AttentionView view;
    view.resize(1200, 700);
    QVERIFY(loads(view, [&] { view.set_store(LMK_WORKBENCH_STUDY_DB); }));
    const QString dataset =
        strings("SELECT dataset FROM attention_profiles WHERE length_group != 'all' LIMIT 1")
            .value(0);
    QVERIFY(!dataset.isEmpty());
    if (view.dataset() != dataset) QVERIFY(loads(view, [&] { view.set_dataset(dataset); }));
    const QStringList groups = strings(
        "SELECT DISTINCT length_group FROM attention_profiles WHERE dataset = ? "
        "ORDER BY CAST(length_group AS INTEGER) DESC",
        {dataset});
    view.set_length_group(groups.front());
    view.set_log_color(false);  // cells hold the stored shares as they are
    QVERIFY(view.row_count(0) > 0);
    for (int panel = 0; panel < 2; ++panel)
      for (const QString& label : view.row_labels(panel))
        QVERIFY2(label.endsWith("@" + groups.front()), qPrintable(label));

    view.set_log_x(true);
    QCOMPARE(
        view.plot()->findChildren<QCPAxisRect*>().front()->axis(QCPAxis::atBottom)->scaleType(),
        QCPAxis::stLogarithmic);
    int checked = 0;
    for (int panel = 0; panel < 2; ++panel) {
      QVERIFY(view.cell_count(panel) > 20);
      for (int r = 0; r < view.row_count(panel); ++r) {
        const auto& row = view.row(panel, r);
        QSqlQuery layer =
            query("SELECT MAX(layer) FROM attention_profiles WHERE dataset = ?", {dataset});
        QVERIFY(layer.next());
        const auto stored =
            stored_profile(row.run_id, dataset, row.length_group, layer.value(0).toInt(), -1);
        for (int c = 0; c < view.cell_count(panel); ++c) {
          const double x = view.cell_center(panel, c);
          double expected = std::numeric_limits<double>::quiet_NaN();
          for (const auto& bin : stored)
            if (bin[0] <= x && x < bin[1]) expected = bin[2];
          QVERIFY(!std::isnan(expected));
          QCOMPARE(view.cell_value(panel, r, c), expected);
          ++checked;
        }
        const QString hover = view.describe(panel, (stored[3][0] + stored[3][1]) / 2, r);
        QVERIFY2(hover.contains(row.label()) && hover.contains("bin 4 of") &&
                     hover.contains(QString::number(stored[3][2], 'g', 5)),
                 qPrintable(hover));
      }
    }
    QVERIFY(checked > 100);
    QVERIFY(view.describe(0, 0.5, view.row_count(0)).isEmpty());

    // A real mouse move over a cell of the right panel shows that cell's text as the tooltip.
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.plot()->replot();
    QCPAxisRect* right = view.plot()->axisRects().at(1);
    const double x = view.cell_center(1, view.cell_count(1) / 2);
    const QPoint pixel(qRound(right->axis(QCPAxis::atBottom)->coordToPixel(x)),
                       qRound(right->axis(QCPAxis::atLeft)->coordToPixel(1)));
    QTest::mouseMove(view.plot(), pixel);
    QTRY_COMPARE(QToolTip::text(), view.describe(1, x, 1));
    QVERIFY(!QToolTip::text().isEmpty());
  }

  // The bars are the stored bins (bounds and counts), on a log axis; the training length of the
  // fine-tuning / pretraining runs is marked; the percentiles are listed.
  void histogram_bars_equal_the_stored_bins() {
    LengthView view;
    view.resize(1000, 600);
    QVERIFY(loads(view, [&] { view.set_store(LMK_WORKBENCH_STUDY_DB); }));
    QVERIFY(view.message().isEmpty());
    QCOMPARE(view.plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
    const QStringList datasets =
        strings("SELECT DISTINCT dataset FROM length_histograms ORDER BY dataset");
    QVERIFY(datasets.size() >= 2);
    QCOMPARE(view.datasets_shown(), datasets);
    for (const QString& dataset : datasets) {
      QSqlQuery q = query(
          "SELECT lo, hi, count FROM length_histograms WHERE dataset = ? "
          "ORDER BY bin_index",
          {dataset});
      QVector<LengthBin> expected;
      while (q.next())
        expected.append(
            {q.value(0).toLongLong(), q.value(1).toLongLong(), q.value(2).toLongLong()});
      const QVector<LengthBin> bars = view.bars(dataset);
      QCOMPARE(bars.size(), expected.size());
      for (int i = 0; i < bars.size(); ++i) {
        QCOMPARE(bars[i].lo, expected[i].lo);
        QCOMPARE(bars[i].hi, expected[i].hi);
        QCOMPARE(bars[i].count, expected[i].count);
      }
      // Hovering a bar names its bin as the axis does, from the stored bounds ([lo, hi)).
      for (const LengthBin& bin : expected) {
        if (bin.count == 0 || bin.hi == std::numeric_limits<qint64>::max() || bin.lo == 0) continue;
        const QString hover = view.describe((bin.lo + bin.hi) / 2.0, bin.count / 2.0);
        QVERIFY2(hover.contains(QString("document length %1–%2 tokens: %3 documents")
                                    .arg(bin.lo)
                                    .arg(bin.hi - 1)
                                    .arg(bin.count)),
                 qPrintable(hover));
        QVERIFY(view.describe((bin.lo + bin.hi) / 2.0, bin.count + 1.0).isEmpty());
        break;
      }
      QSqlQuery p = query(
          "SELECT value FROM length_percentiles WHERE dataset = ? AND "
          "percentile = 50",
          {dataset});
      QVERIFY(p.next());
      QVERIFY2(view.percentile_text().contains(QString("%1: ").arg(dataset)) &&
                   view.percentile_text().contains(
                       QString("p50 %1").arg(p.value(0).toDouble(), 0, 'f', 0)),
               qPrintable(view.percentile_text()));
    }
    // Each drawn bar spans its bin: centre ± half its width.
    for (int i = 0; i < view.plot()->plottableCount(); ++i) {
      auto* bars = qobject_cast<QCPBars*>(view.plot()->plottable(i));
      QVERIFY(bars);
      const double lo = bars->property("lo").toDouble();
      const double hi = bars->property("hi").toDouble();
      const double key = bars->data()->constBegin()->key;
      QVERIFY(std::abs(key - bars->width() / 2 - lo) <= 1e-9 * hi + 1e-9);
      QVERIFY(std::abs(key + bars->width() / 2 - hi) <= 1e-9 * hi);
    }
    const QStringList trained = strings(
        "SELECT DISTINCT CAST(p.value AS INTEGER) FROM params p JOIN runs r ON r.id = p.run_id "
        "WHERE (r.kind = 'train' AND p.key = 'train.passage_max_length') "
        "   OR (r.kind = 'pretrain' AND p.key = 'train.max_length') ORDER BY 1");
    QVERIFY(!trained.isEmpty());
    QStringList marked;
    for (qint64 tokens : view.training_lengths_marked()) marked << QString::number(tokens);
    QCOMPARE(marked, trained);
    const auto lines = view.plot()->findChildren<QCPItemStraightLine*>();
    QCOMPARE(lines.size(), trained.size());
    QCOMPARE(lines.front()->point1->key(), trained.front().toDouble());

    view.set_dataset(datasets.back());
    QCOMPARE(view.datasets_shown(), QStringList{datasets.back()});
  }

  // Metric vs length: the per-length results where stored, else the whole-split results of the
  // runs evaluated at a max_length; metric vs evidence position at each stored length.
  void curve_points_equal_the_eval_results() {
    CurvesView view;
    view.resize(1200, 600);
    QVERIFY(loads(view, [&] { view.set_store(LMK_WORKBENCH_STUDY_DB); }));
    QVERIFY(view.message().isEmpty());
    QCOMPARE(view.metric(), QString("ndcg_at_10"));
    QCOMPARE(view.plot()->findChildren<QCPAxisRect*>().size(), 2);
    int checked = 0;
    bool saw_length_groups = false;
    bool saw_max_lengths = false;
    int with_positions = 0;
    for (const QString& metric : {QString("ndcg_at_10"), QString("recall_at_10")}) {
      for (const QString& dataset :
           strings("SELECT DISTINCT dataset FROM eval_results ORDER BY dataset")) {
        if (view.dataset() != dataset) QVERIFY(loads(view, [&] { view.set_dataset(dataset); }));
        if (view.metric() != metric) QVERIFY(loads(view, [&] { view.set_metric(metric); }));
        // Expected, by length.
        Points expected;
        QSqlQuery length = query(
            "SELECT r.name, e.group_value, e.value FROM eval_results e JOIN runs r "
            "ON r.id = e.run_id WHERE e.dataset = ? AND e.metric = ? AND e.group_kind = 'length'",
            {dataset, metric});
        while (length.next())
          expected[series(length.value(0).toString())][length.value(1).toDouble()] =
              length.value(2).toDouble();
        if (!expected.empty()) {
          saw_length_groups = true;
        } else {
          QSqlQuery whole = query(
              "SELECT r.name, CAST(p.value AS INTEGER), e.value FROM eval_results e "
              "JOIN runs r ON r.id = e.run_id JOIN params p ON p.run_id = e.run_id "
              "AND p.key = 'max_length' WHERE e.dataset = ? AND e.metric = ? "
              "AND e.group_kind = 'all' AND CAST(p.value AS INTEGER) > 0",
              {dataset, metric});
          while (whole.next())
            expected[series(whole.value(0).toString())][whole.value(1).toDouble()] =
                whole.value(2).toDouble();
          saw_max_lengths = saw_max_lengths || !expected.empty();
        }
        QCOMPARE(curve_points(view, CurvesView::Panel::Length), expected);
        for (const auto& [name, points] : expected) checked += points.size();

        // Expected, by evidence position at the chosen length.
        const qint64 at = view.position_length();
        Points by_position;
        QSqlQuery position = query(
            "SELECT r.name, e.group_value, e.value FROM eval_results e JOIN runs r "
            "ON r.id = e.run_id LEFT JOIN params p ON p.run_id = e.run_id AND p.key = "
            "'max_length' WHERE e.dataset = ? AND e.metric = ? AND "
            "((e.group_kind = 'position' AND COALESCE(CAST(p.value AS INTEGER), 0) = ?) "
            " OR e.group_kind = 'position@' || ?)",
            {dataset, metric, at, at});
        while (position.next())
          by_position[series(position.value(0).toString())][middle(position.value(1).toString())] =
              position.value(2).toDouble();
        // The code task has no evidence positions: no curves by position.
        if (!by_position.empty()) ++with_positions;
        QCOMPARE(curve_points(view, CurvesView::Panel::Position), by_position);
        for (const auto& [name, points] : by_position) checked += points.size();
      }
    }
    QVERIFY(saw_length_groups);
    QVERIFY(saw_max_lengths);
    QVERIFY(with_positions > 4);
    QVERIFY(checked > 100);
    QCOMPARE(view.x_axis(CurvesView::Panel::Length)->scaleType(), QCPAxis::stLogarithmic);
  }

  // Runs of two experiments share names but not results: each experiment has its own lines and
  // rows, named after it, holding its own values.
  void experiments_are_never_mixed() {
    QTemporaryDir dir;
    const QString path = two_experiment_copy(dir);
    const QString prefix = "SELECT x.name || ': ' || r.name, ";
    const QString joins =
        " FROM eval_results e JOIN runs r ON r.id = e.run_id "
        "JOIN experiments x ON x.id = r.experiment_id ";
    CurvesView curves;
    QVERIFY(loads(curves, [&] { curves.set_store(path); }));
    int checked = 0;
    for (const QString& dataset :
         strings("SELECT DISTINCT dataset FROM eval_results ORDER BY dataset")) {
      if (curves.dataset() != dataset) QVERIFY(loads(curves, [&] { curves.set_dataset(dataset); }));
      Points expected;
      QSqlQuery length = query(prefix + "e.group_value, e.value" + joins +
                                   "WHERE e.dataset = ? AND e.metric = ? AND "
                                   "e.group_kind = 'length'",
                               {dataset, curves.metric()}, "copy");
      while (length.next())
        expected[series(length.value(0).toString())][length.value(1).toDouble()] =
            length.value(2).toDouble();
      if (expected.empty()) {
        QSqlQuery whole = query(prefix + "CAST(p.value AS INTEGER), e.value" + joins +
                                    "JOIN params p ON p.run_id = e.run_id AND p.key = "
                                    "'max_length' WHERE e.dataset = ? AND e.metric = ? AND "
                                    "e.group_kind = 'all' AND CAST(p.value AS INTEGER) > 0",
                                {dataset, curves.metric()}, "copy");
        while (whole.next())
          expected[series(whole.value(0).toString())][whole.value(1).toDouble()] =
              whole.value(2).toDouble();
      }
      QCOMPARE(curve_points(curves, CurvesView::Panel::Length), expected);
      for (const auto& [name, points] : expected) {
        QVERIFY2(name.startsWith("second-study: ") || name.startsWith("pooling-vs-length"),
                 qPrintable(name));
        checked += points.size();
      }
    }
    QVERIFY(checked > 20);

    AttentionView attention;
    QVERIFY(loads(attention, [&] { attention.set_store(path); }));
    attention.set_log_color(false);
    const QString dataset = attention.dataset();
    QSqlQuery choice =
        query("SELECT MAX(layer), MIN(head) FROM attention_profiles WHERE dataset = ?", {dataset},
              "copy");
    QVERIFY(choice.next());
    const int layer = choice.value(0).toInt();
    const int head = choice.value(1).toInt();
    int rows = 0;
    for (int panel = 0; panel < 2; ++panel) {
      QSqlQuery count = query(
          "SELECT COUNT(DISTINCT a.run_id || '/' || a.length_group) FROM attention_profiles a "
          "JOIN params p ON p.run_id = a.run_id AND p.key = 'pooling' "
          "WHERE a.dataset = ? AND a.layer = ? AND a.head = ? AND p.value = ?",
          {dataset, layer, head, attention.pooling(panel)}, "copy");
      QVERIFY(count.next());
      QCOMPARE(attention.row_count(panel), count.value(0).toInt());
      for (int r = 0; r < attention.row_count(panel); ++r) {
        const auto& row = attention.row(panel, r);
        QSqlQuery run = query(
            "SELECT x.name || ': ' || r.name FROM runs r JOIN experiments x "
            "ON x.id = r.experiment_id WHERE r.id = ?",
            {row.run_id}, "copy");
        QVERIFY(run.next());
        const QString name = run.value(0).toString();
        QCOMPARE(attention.row_labels(panel)[r],
                 row.length_group == "all" ? name : name + "@" + row.length_group);
        QSqlQuery bins = query(
            "SELECT weight FROM attention_profiles WHERE run_id = ? AND dataset = ? AND "
            "length_group = ? AND layer = ? AND head = ? ORDER BY bin",
            {row.run_id, dataset, row.length_group, layer, head}, "copy");
        for (int b = 0; bins.next(); ++b)
          QCOMPARE(attention.cell_value(panel, r, b), bins.value(0).toDouble());
        ++rows;
      }
    }
    QVERIFY(rows >= 4);
  }

  // The length x depth map: a panel per run (CLS first), each cell the mean of the run's stored
  // per-query values at that length and evidence depth (rounded to 0.1) with its N written in
  // it; every panel on one colour range; the hover names run, length, depth and N.
  // Every list of the plot views is as wide as its longest item once the store is loaded
  // (dataset names such as "python-docs-documents · test" were cut).
  void every_list_is_as_wide_as_its_longest_item() {
    AttentionView attention;
    CurvesView curves;
    NeedleMapView needle;
    CompareView compare;
    for (lmk::widgets::PlotView* view :
         std::initializer_list<lmk::widgets::PlotView*>{&attention, &curves, &needle, &compare}) {
      view->resize(1400, 900);
      view->show();
      QVERIFY(loads(*view, [&] { view->set_store(LMK_WORKBENCH_STUDY_DB); }));
      QApplication::processEvents();
      for (QComboBox* combo : view->findChildren<QComboBox*>()) {
        if (!combo->isVisible() || combo->count() == 0) continue;
        int longest = 0;
        for (int i = 0; i < combo->count(); ++i)
          longest = std::max(longest, combo->fontMetrics().horizontalAdvance(combo->itemText(i)));
        // The box, or where a view keeps it short (Compare's run choosers), its popup.
        QVERIFY2(combo->width() >= longest || combo->view()->minimumWidth() >= longest,
                 qPrintable(QString("%1: a list %2 px wide (popup %3) for items of %4 px")
                                .arg(view->title())
                                .arg(combo->width())
                                .arg(combo->view()->minimumWidth())
                                .arg(longest)));
      }
    }
  }

  void needle_map_cells_are_the_stored_queries() {
    NeedleMapView view;
    view.resize(1400, 600);
    QVERIFY(loads(view, [&] { view.set_store(LMK_WORKBENCH_STUDY_DB); }));
    QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
    QCOMPARE(view.dataset(), QString("needle"));  // the map's own subject first
    QCOMPARE(view.metric(), QString("ndcg_at_1"));
    int single = 0;  // cells of one query
    for (const QString& dataset : {QString("needle"), QString("passkey")}) {
      if (view.dataset() != dataset) QVERIFY(loads(view, [&] { view.set_dataset(dataset); }));
      const QVector<lmk::widgets::MapRun>& runs = view.runs();
      QVERIFY(runs.size() >= 4);
      QCOMPARE(runs.front().pooling, QString("cls"));
      // The grid: every length part and rounded depth of the runs shown, from the store.
      QStringList marks;
      for (const auto& run : runs) marks << QString::number(run.run_id);
      const QString in = "(" + marks.join(',') + ")";
      QStringList lengths =
          strings("SELECT DISTINCT part FROM eval_queries WHERE dataset = ? AND run_id IN " + in,
                  {dataset});
      std::sort(lengths.begin(), lengths.end(),
                [](const QString& a, const QString& b) { return a.toLongLong() < b.toLongLong(); });
      QList<int> depths;
      for (const QString& d :
           strings("SELECT DISTINCT CAST(ROUND(evidence_position * 10) AS "
                   "INTEGER) FROM eval_queries WHERE dataset = ? AND run_id IN " +
                       in,
                   {dataset}))
        depths << d.toInt();
      std::sort(depths.begin(), depths.end());
      // The columns: every stored depth, on its regular grid (a depth no query has is an empty
      // column, so the axis stays proportional).
      const QVector<double>& columns = view.depths();
      for (int d : depths)
        QVERIFY2(std::any_of(columns.begin(), columns.end(),
                             [&](double c) { return std::llround(c * 10) == d; }),
                 qPrintable(QString::number(d)));
      for (int c = 1; c < columns.size(); ++c)
        QVERIFY(std::abs((columns[c] - columns[c - 1]) - (columns[1] - columns[0])) < 1e-9);
      int checked = 0;
      for (int p = 0; p < runs.size(); ++p) {
        QCOMPARE(view.color_map(p)->colorScale(), view.color_scale());
        QCOMPARE(view.color_range(p).lower, 0.0);
        QCOMPARE(view.color_range(p).upper, 1.0);
        std::map<std::pair<QString, int>, std::pair<double, int>> cells;  // (part, depth) -> sum, n
        QSqlQuery q = query(
            "SELECT q.part, q.evidence_position, m.value FROM eval_queries q JOIN query_metrics m "
            "ON m.query = q.id WHERE q.run_id = ? AND q.dataset = ? AND m.metric = 'ndcg_at_1'",
            {runs[p].run_id, dataset});
        while (q.next()) {
          auto& [sum, n] = cells[{q.value(0).toString(),
                                  static_cast<int>(std::llround(q.value(1).toDouble() * 10))}];
          sum += q.value(2).toDouble();
          ++n;
        }
        // Where each column is drawn: its tick (labelled with its depth), its N label and the
        // colour map's cell all at one coordinate (they were a column apart when depths were
        // missing from the grid).
        auto* ticker =
            dynamic_cast<QCPAxisTickerText*>(view.color_map(p)->keyAxis()->ticker().data());
        QVERIFY(ticker);
        for (int c = 0; c < columns.size(); ++c) {
          const double x = NeedleMapView::column_coordinate(c);
          if (columns.size() <= 11) QCOMPARE(ticker->ticks().value(x), QString::number(columns[c]));
          for (int r = 0; r < lengths.size(); ++r) {
            int key = -1, value = -1;
            view.color_map(p)->data()->coordToCell(x, r, &key, &value);
            QCOMPARE(key, c);
            QCOMPARE(value, r);
            QCOMPARE(view.cell_label(p, r, c)->position->coords(), QPointF(x, r));
          }
        }
        for (int r = 0; r < lengths.size(); ++r) {
          for (int c = 0; c < columns.size(); ++c) {
            const auto found =
                cells.find({lengths[r], static_cast<int>(std::llround(columns[c] * 10))});
            if (found == cells.end()) {
              QVERIFY(std::isnan(view.cell_value(p, r, c)));
              QCOMPARE(view.cell_text(p, r, c), QString());
              continue;
            }
            const auto [sum, n] = found->second;
            QVERIFY(std::abs(view.cell_value(p, r, c) - sum / n) < 1e-12);
            QCOMPARE(view.cell_text(p, r, c), QString::number(n));
            const QString hover = view.describe(p, r, c);
            QVERIFY2(hover.contains(QString("length %1 tokens").arg(lengths[r])) &&
                         hover.contains(QString("N = %1").arg(n)),
                     qPrintable(hover));
            // One query has no interval, and the cell says so (it said "CI nan – nan").
            QVERIFY2(!hover.contains("nan"), qPrintable(hover));
            QCOMPARE(hover.contains("no interval from one query"), n == 1);
            QCOMPARE(hover.contains("95 % CI"), n > 1);
            single += n == 1;
            ++checked;
          }
        }
      }
      // 4 runs x 2 lengths x several of the 11 depths: the passkey fills all 11; a needle sits
      // at a sentence boundary of real text, 6 of them in a 128-token micro document.
      QVERIFY2(checked >= 4 * 2 * 5, qPrintable(QString::number(checked)));
    }
    QVERIFY(single > 0);  // the micro study has one query per length and depth
    QTemporaryDir dir;
    check_exports(view, dir.path(), "needle-map");
  }

  // A plot is redrawn only once it has a size: at 0 × 0 QCustomPlot paints into null pixmaps and
  // Qt warns ("QPainter::begin: Paint device returned engine == 0") for each buffer.
  void a_plot_without_a_size_is_not_drawn_into_null_pixmaps() {
    static QStringList warnings;
    warnings.clear();
    const QtMessageHandler previous = qInstallMessageHandler(
        [](QtMsgType, const QMessageLogContext&, const QString& text) { warnings << text; });
    QCustomPlot plot;
    plot.resize(0, 0);
    plot.setViewport(plot.rect());  // as its resizeEvent would, before the view is laid out
    plot.addGraph()->setData({0, 1}, {0, 1});
    lmk::widgets::replot_when_sized(&plot);
    QVERIFY2(warnings.filter("QPainter").isEmpty(), qPrintable(warnings.join('\n')));
    plot.replot();  // what the views did
    const bool warned = !warnings.filter("QPainter").isEmpty();
    qInstallMessageHandler(previous);
    QVERIFY2(warned, "a replot at 0 x 0 no longer warns: the check above proves nothing");
    plot.resize(300, 200);
    plot.setViewport(plot.rect());
    warnings.clear();
    lmk::widgets::replot_when_sized(&plot);
    QVERIFY(warnings.filter("QPainter").isEmpty());
    QVERIFY(!plot.toPixmap(300, 200).isNull());
    // A plot in a page never laid out gets a 0 × 0 resize when the window is grabbed, and
    // QCustomPlot replots in its resizeEvent: the workbench's plots ignore such a resize.
    lmk::widgets::ignore_empty_resizes(&plot);
    warnings.clear();
    qInstallMessageHandler(
        [](QtMsgType, const QMessageLogContext&, const QString& text) { warnings << text; });
    QResizeEvent empty(QSize(0, 0), QSize(300, 200));
    QCoreApplication::sendEvent(&plot, &empty);
    qInstallMessageHandler(previous);
    QVERIFY2(warnings.filter("QPainter").isEmpty(), qPrintable(warnings.join('\n')));
    QCOMPARE(plot.viewport().size(), QSize(300, 200));
  }

  void plots_export_to_png_pdf_and_svg() {
    QTemporaryDir dir;
    AttentionView attention;
    LengthView lengths;
    CurvesView curves;
    for (PlotView* view : std::initializer_list<PlotView*>{&attention, &lengths, &curves}) {
      view->resize(1000, 600);
      QVERIFY(loads(*view, [&] { view->set_store(LMK_WORKBENCH_STUDY_DB); }));
    }
    check_exports(attention, dir.path(), "attention");
    check_exports(lengths, dir.path(), "lengths");
    check_exports(curves, dir.path(), "curves");
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, curves.export_to(dir.filePath("plot.bmp")));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, curves.export_to(dir.filePath("plot")));
    for (const char* suffix : {"png", "pdf", "svg"}) {
      const QString unwritable = dir.filePath(QString("missing/folder/plot.") + suffix);
      try {
        curves.export_to(unwritable);
        QFAIL(qPrintable("no error for " + unwritable));
      } catch (const std::runtime_error& e) {
        QVERIFY2(QString(e.what()).contains(unwritable), e.what());
      }
    }
  }

  void tables_export_as_rfc4180_csv_and_tsv() {
    QStandardItemModel model(3, 2);
    model.setHorizontalHeaderLabels({"run", "note, with comma"});
    model.setItem(0, 0, new QStandardItem("cls/corpus@256"));
    model.setItem(0, 1, new QStandardItem("plain"));
    model.setItem(1, 0, new QStandardItem("say \"hi\""));
    model.setItem(1, 1, new QStandardItem("two\nlines"));
    model.setItem(2, 0, new QStandardItem(""));
    model.setItem(2, 1, new QStandardItem("tab\there"));
    const QString csv = lmk::widgets::table_as_csv(model);
    QCOMPARE(csv, QString("run,\"note, with comma\"\r\n"
                          "cls/corpus@256,plain\r\n"
                          "\"say \"\"hi\"\"\",\"two\nlines\"\r\n"
                          ",tab\there\r\n"));
    QTemporaryDir dir;
    const QString path = dir.filePath("table.csv");
    lmk::widgets::export_table_csv(model, path);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(file.readAll()), csv);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                             lmk::widgets::export_table_csv(model, dir.filePath("no/dir/t.csv")));

    const QModelIndexList selection = {model.index(1, 1), model.index(2, 1), model.index(2, 0)};
    QCOMPARE(lmk::widgets::table_as_tsv(model, selection),
             QString("run\tnote, with comma\n\ttwo lines\n\ttab here\n"));
    QCOMPARE(lmk::widgets::table_as_tsv(model, {model.index(0, 0)}, false),
             QString("cls/corpus@256\n"));
    QVERIFY(lmk::widgets::table_as_tsv(model, {}).isEmpty());
  }

  // A store with the schema and no rows (and no store at all): each view says what to do and
  // still reports loaded().
  // Each curve point has the interval of its queries' mean (the run's per-query results of the
  // point's group), its N in the hover, and is hollow below the min-N setting.
  // A line breaks where its position bins do not touch (an empty bin between them) and nowhere
  // else; bands lie on a layer under the lines; the hover names a point as its axis does.
  void curve_lines_break_at_empty_bins_and_bands_lie_under_them() {
    CurvesView view;
    view.resize(1200, 600);
    QVERIFY(loads(view, [&] { view.set_store(LMK_WORKBENCH_STUDY_DB); }));
    if (view.dataset() != "manpages-documents")
      QVERIFY(loads(view, [&] { view.set_dataset("manpages-documents"); }));
    if (view.metric() != "ndcg_at_10") QVERIFY(loads(view, [&] { view.set_metric("ndcg_at_10"); }));
    int gaps = 0, names = 0;
    for (qint64 length : {0, 128}) {
      view.set_position_length(length);
      for (const QString& name : view.curve_names(CurvesView::Panel::Position)) {
        const qint64 run = run_named(name + "/manpages-documents");
        QVERIFY(run > 0);
        QStringList bins = strings(
            "SELECT group_value FROM eval_results WHERE run_id = ? AND metric = 'ndcg_at_10' "
            "AND group_kind = ? AND value IS NOT NULL",
            {run, length == 0 ? QString("position") : QString("position@%1").arg(length)});
        std::sort(bins.begin(), bins.end(), [](const QString& a, const QString& b) {
          return a.section('-', 0, 0).toDouble() < b.section('-', 0, 0).toDouble();
        });
        QVector<double> expected;
        for (int i = 1; i < bins.size(); ++i) {
          const double end = bins[i - 1].section('-', 1).remove('%').toDouble();
          const double start = bins[i].section('-', 0, 0).toDouble();
          if (end < start)
            expected << ((bins[i - 1].section('-', 0, 0).toDouble() + end) / 2 +
                         (start + bins[i].section('-', 1).remove('%').toDouble()) / 2) /
                            2;
        }
        QCOMPARE(view.gaps(CurvesView::Panel::Position, name), expected);
        // The band breaks where the line does (it does not bridge an empty bin).
        if (view.band_layer(CurvesView::Panel::Position, name) != nullptr) {
          QCOMPARE(view.gaps(CurvesView::Panel::Position, name, "high"), expected);
          QCOMPARE(view.gaps(CurvesView::Panel::Position, name, "low"), expected);
        }
        gaps += expected.size();
        ++names;
        if (QCPLayer* band = view.band_layer(CurvesView::Panel::Position, name))
          QVERIFY(band->index() < view.line_layer(CurvesView::Panel::Position, name)->index());
        const QString text = view.point_text(CurvesView::Panel::Position, name, 0);
        QVERIFY2(text.contains("evidence position " + bins[0].section('-', 0, 0) + "–"),
                 qPrintable(text));
      }
    }
    QVERIFY(names >= 4);
    QVERIFY(gaps >= 4);  // the fixture's runs lack 20-30 % at every length, and more at 128
    QVERIFY(view.point_text(CurvesView::Panel::Length,
                            view.curve_names(CurvesView::Panel::Length).value(0), 0)
                .contains("evaluation length "));
  }

  void curve_bands_are_the_query_intervals_and_few_queries_are_hollow() {
    CurvesView view;
    view.resize(1200, 600);
    QVERIFY(loads(view, [&] { view.set_store(LMK_WORKBENCH_STUDY_DB); }));
    QVERIFY(loads(view, [&] { view.set_dataset("passkey"); }));
    QVERIFY(loads(view, [&] { view.set_metric("ndcg_at_1"); }));
    QVERIFY2(view.note().startsWith("Bands: 95 %"), qPrintable(view.note()));
    int checked = 0;
    for (const QString& name : view.curve_names(CurvesView::Panel::Length)) {
      const QVector<QPointF> points = view.curve(CurvesView::Panel::Length, name);
      const QVector<QPair<double, double>> band = view.band(CurvesView::Panel::Length, name);
      QCOMPARE(band.size(), points.size());
      for (int i = 0; i < points.size(); ++i) {
        const QString length = QString::number(points[i].x());
        const qint64 run = run_named(name + "/passkey");
        const std::vector<lmk::QueryScore> scores =
            stored_scores(run, "passkey", "ndcg_at_1", length);
        QVERIFY(!scores.empty());
        double sum = 0;
        for (const lmk::QueryScore& s : scores) sum += s.value;
        QVERIFY(std::abs(sum / scores.size() - points[i].y()) < 1e-12);
        // The tables' function and seed: the point's interval is lmk compare's.
        const lmk::CellSummary expected =
            lmk::summarize_scores(scores, {view.resamples(), 0, 0.95});
        QCOMPARE(band[i].first, expected.interval.low);
        QCOMPARE(band[i].second, expected.interval.high);
        QVERIFY(band[i].first <= points[i].y() && points[i].y() <= band[i].second);
        const QString text = view.point_text(CurvesView::Panel::Length, name, i);
        QVERIFY2(text.contains(QString("N %1").arg(scores.size())), qPrintable(text));
        ++checked;
      }
      // Every point of the micro study has fewer queries than 20: all hollow; none below 1.
      view.set_min_queries(100);
      QCOMPARE(view.hollow_points(CurvesView::Panel::Length, name).size(), points.size());
      view.set_min_queries(1);
      QVERIFY(view.hollow_points(CurvesView::Panel::Length, name).isEmpty());
      view.set_min_queries(20);
    }
    QVERIFY(checked >= 8);  // 4 poolings x 2 lengths
    // By evidence position too: each bucket's band holds its point.
    for (const QString& name : view.curve_names(CurvesView::Panel::Position)) {
      const QVector<QPointF> points = view.curve(CurvesView::Panel::Position, name);
      const QVector<QPair<double, double>> band = view.band(CurvesView::Panel::Position, name);
      QCOMPARE(band.size(), points.size());
      for (int i = 0; i < points.size(); ++i)
        QVERIFY(band[i].first <= points[i].y() + 1e-12 && points[i].y() <= band[i].second + 1e-12);
    }
  }

  // Two runs query by query: the scatter holds each shared query's (A, B), the test is the one
  // lmk compare runs on the same queries, the queries that differ most come first, and a click
  // shows the query's text and target from the dataset folder.
  void compare_panel_pairs_queries_and_tests_them() {
    CompareView view;
    view.resize(1200, 800);
    QVERIFY(loads(view, [&] { view.set_store(LMK_WORKBENCH_STUDY_DB); }));
    const qint64 cls = run_named("cls/manpages-passages"),
                 lmk = run_named("lmk-32/manpages-passages");
    QVERIFY(cls > 0 && lmk > 0);
    QVERIFY(loads(view, [&] { view.set_runs(cls, lmk); }));
    QCOMPARE(view.run_a(), cls);
    QCOMPARE(view.run_b(), lmk);
    QVERIFY(view.message().isEmpty());
    const std::vector<lmk::QueryScore> a = stored_scores(cls, "manpages-passages", "ndcg_at_10");
    const std::vector<lmk::QueryScore> b = stored_scores(lmk, "manpages-passages", "ndcg_at_10");
    const lmk::widgets::RunPair& pair = view.pair();
    QCOMPARE(static_cast<size_t>(pair.pairs.size()), a.size());
    std::map<QString, std::pair<double, double>> expected;
    for (const auto& s : a) expected[QString::fromStdString(s.query_id)].first = s.value;
    for (const auto& s : b) expected[QString::fromStdString(s.query_id)].second = s.value;
    for (const lmk::widgets::QueryPair& p : pair.pairs) {
      QCOMPARE(p.a, expected.at(p.query_id).first);
      QCOMPARE(p.b, expected.at(p.query_id).second);
    }
    // The scatter: one point per query.
    QCPGraph* points = nullptr;
    for (int i = 0; i < view.plot()->graphCount(); ++i)
      if (view.plot()->graph(i)->name() == "queries") points = view.plot()->graph(i);
    QVERIFY(points);
    QCOMPARE(points->dataCount(), pair.pairs.size());
    // The test is lmk compare's on these runs (same labels, same seed).
    QVERIFY(pair.compared);
    const lmk::ComparisonTable table = lmk::compare_table(
        {"#" + std::to_string(cls) + " cls/manpages-passages",
         "#" + std::to_string(lmk) + " lmk-32/manpages-passages"},
        {"manpages-passages/test ndcg_at_10"}, {{{true, a, NAN}}, {{true, b, NAN}}}, {});
    QCOMPARE(table.tests.size(), size_t{1});
    QCOMPARE(pair.comparison.p_value, table.tests[0].result.p_value);
    QCOMPARE(pair.comparison.difference_interval.low,
             table.tests[0].result.difference_interval.low);
    QVERIFY2(view.summary().contains("Fisher's randomization test"), qPrintable(view.summary()));
    // The most different queries first.
    QTableWidget* listed = view.queries_table();
    QVERIFY(listed->rowCount() > 0);
    for (int row = 1; row < listed->rowCount(); ++row)
      QVERIFY(std::abs(listed->item(row, 4)->text().toDouble()) <=
              std::abs(listed->item(row - 1, 4)->text().toDouble()) + 1e-4);
    // A click: the query text and its target, from the dataset folder.
    QSignalSpy shown(&view, &CompareView::details_shown);
    view.show_details(0);
    QVERIFY(shown.count() > 0 || shown.wait(10000));
    const QString folder =
        strings("SELECT value FROM params WHERE run_id = ? AND key = 'dataset'", {cls}).value(0);
    const QString query_id = listed->item(0, 1)->text();
    QFile queries(folder + "/queries.jsonl");
    QVERIFY(queries.open(QIODevice::ReadOnly));
    QString text;
    while (!queries.atEnd()) {
      const QJsonObject line = QJsonDocument::fromJson(queries.readLine()).object();
      if (line["_id"].toString() == query_id) text = line["text"].toString();
    }
    QVERIFY(!text.isEmpty());
    QVERIFY2(view.details().contains(text.left(30).toHtmlEscaped()), qPrintable(view.details()));
    QVERIFY2(view.details().contains("target: "), qPrintable(view.details()));
    // Another test, and the exports.
    QVERIFY(loads(view, [&] { view.set_test(lmk::stats::PairedTest::Student); }));
    QCOMPARE(view.pair().comparison.test, lmk::stats::PairedTest::Student);
    QTemporaryDir dir;
    view.export_queries_csv(dir.filePath("queries.csv"));
    QFile csv(dir.filePath("queries.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QCOMPARE(QString(csv.readAll()).count("\r\n"), pair.pairs.size() + 1);
    check_exports(view, dir.path(), "compare");

    // Runs of different dataset folders (here the same task name) are not paired, as lmk
    // compare refuses them: the view says why and shows no pair.
    const QString copy = dir.filePath("other-folder.db");
    lmk::widgets::testing::copy_fixture_store(copy);
    {
      QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "other-folder");
      db.setDatabaseName(copy);
      QVERIFY(db.open());
      QSqlQuery q(db);
      QVERIFY(
          q.prepare("UPDATE params SET value = '/elsewhere/manpages-passages' "
                    "WHERE run_id = ? AND key = 'dataset'"));
      q.addBindValue(lmk);
      QVERIFY(q.exec());
      QCOMPARE(q.numRowsAffected(), 1);
      db.close();
    }
    QSqlDatabase::removeDatabase("other-folder");
    CompareView refused;
    QVERIFY(loads(refused, [&] { refused.set_store(copy); }));
    // A pair that compares first, then the refused one: nothing of the first pair stays.
    const qint64 mean = run_named("mean/manpages-passages");
    QVERIFY(loads(refused, [&] { refused.set_runs(cls, mean); }));
    QVERIFY(refused.queries_table()->rowCount() > 0);
    QSignalSpy details(&refused, &CompareView::details_shown);
    refused.show_details(0);
    QVERIFY(details.count() > 0 || details.wait(10000));
    QVERIFY(!refused.details().isEmpty());
    QVERIFY(loads(refused, [&] { refused.set_runs(cls, lmk); }));
    QCOMPARE(refused.queries_table()->rowCount(), 0);
    QVERIFY2(refused.details().isEmpty(), qPrintable(refused.details()));
    QCOMPARE(refused.plot()->graphCount(), 0);
    QVERIFY_THROWS_EXCEPTION(std::exception,
                             refused.export_queries_csv(dir.filePath("refused.csv")));
    QVERIFY(!QFile::exists(dir.filePath("refused.csv")));
    QVERIFY2(refused.message().contains("evaluated different dataset folders"),
             qPrintable(refused.message()));
    QVERIFY2(refused.message().contains("/elsewhere/manpages-passages"),
             qPrintable(refused.message()));
    QVERIFY(refused.pair().pairs.isEmpty());
    // Nothing to export: CSV… is off while no pair with shared queries is shown.
    QVERIFY(view.findChild<QPushButton*>("compare_csv")->isEnabled());
    QVERIFY(!refused.findChild<QPushButton*>("compare_csv")->isEnabled());

    // Another store opened (File › Open recent) in a view showing a pair: the run ids of the
    // old store name other runs there; the view starts from the new store's own first pair.
    QVERIFY(loads(view, [&] { view.set_store(copy); }));
    QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
    QVERIFY(!view.pair().pairs.isEmpty());
    QVERIFY(!(view.run_a() == cls && view.run_b() == lmk));
    QVERIFY(view.findChild<QPushButton*>("compare_csv")->isEnabled());
  }

  void an_empty_store_shows_what_to_do() {
    QTemporaryDir dir;
    const QString path = dir.filePath("empty.db");
    {
      QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "empty");
      db.setDatabaseName(path);
      QVERIFY(db.open());
      QSqlQuery q(db);
      for (const auto& migration : lmk::store_schema::migrations())
        for (const QString& statement : QString(migration.sql).split(';', Qt::SkipEmptyParts))
          if (!statement.trimmed().isEmpty()) QVERIFY2(q.exec(statement), qPrintable(statement));
      QVERIFY(q.exec(QString("PRAGMA application_id = %1").arg(lmk::store_schema::kApplicationId)));
      QVERIFY(
          q.exec(QString("PRAGMA user_version = %1").arg(lmk::store_schema::current_version())));
      db.close();
    }
    QSqlDatabase::removeDatabase("empty");
    AttentionView attention;
    LengthView lengths;
    CurvesView curves;
    NeedleMapView map;
    const std::pair<PlotView*, QString> views[] = {{&attention, "No attention profiles"},
                                                   {&lengths, "No document-length statistics"},
                                                   {&curves, "No evaluation results"},
                                                   {&map, "No per-query results with lengths"}};
    for (const auto& [view, text] : views) {
      QVERIFY(loads(*view, [&] { view->set_store(path); }));
      QVERIFY2(view->message().startsWith(text), qPrintable(view->message()));
      QVERIFY_THROWS_EXCEPTION(std::runtime_error, view->export_to(dir.filePath("empty.png")));
      QVERIFY(loads(*view, [&] { view->set_store(QString()); }));
      QVERIFY2(view->message().contains("Open"), qPrintable(view->message()));
      QVERIFY(loads(*view, [&] { view->set_store(dir.filePath("missing.db")); }));
      QVERIFY2(view->message().contains("missing.db"), qPrintable(view->message()));
    }

    // A control change while a store loads does not drop the new store: from the fixture to the
    // empty store, changing the dataset at once, ends on the empty store's message.
    CurvesView switching;
    AttentionView switching_attention;
    QVERIFY(loads(switching, [&] { switching.set_store(LMK_WORKBENCH_STUDY_DB); }));
    QVERIFY(
        loads(switching_attention, [&] { switching_attention.set_store(LMK_WORKBENCH_STUDY_DB); }));
    const QString other =
        strings("SELECT dataset FROM eval_results ORDER BY dataset DESC").value(0);
    const QString other_profiles =
        strings("SELECT dataset FROM attention_profiles ORDER BY dataset DESC").value(0);
    QVERIFY(other != switching.dataset() && other_profiles != switching_attention.dataset());
    QVERIFY(loads(switching, [&] {
      switching.set_store(path);
      switching.set_dataset(other);
    }));
    QVERIFY(loads(switching_attention, [&] {
      switching_attention.set_store(path);
      switching_attention.set_dataset(other_profiles);
    }));
    QTest::qWait(300);  // a load the control change started, were it still to come
    QVERIFY2(switching.message().startsWith("No evaluation results"),
             qPrintable(switching.message()));
    QVERIFY2(switching_attention.message().startsWith("No attention profiles"),
             qPrintable(switching_attention.message()));

    // After a store that cannot be read, nothing of the store before is left to draw.
    QVERIFY(loads(switching, [&] { switching.set_store(LMK_WORKBENCH_STUDY_DB); }));
    QVERIFY(loads(switching, [&] { switching.set_store(dir.filePath("missing.db")); }));
    QVERIFY(switching.dataset().isEmpty() && switching.metric().isEmpty());
    QVERIFY(switching.curve_names(CurvesView::Panel::Length).isEmpty());
    QVERIFY2(switching.message().contains("missing.db"), qPrintable(switching.message()));
  }
};

QTEST_MAIN(PlotsTest)
#include "plots_test.moc"
