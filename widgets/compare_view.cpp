#include "widgets/compare_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>

#include <stdexcept>

#include <algorithm>
#include <cmath>

#include "widgets/plot_export.h"

namespace lmk::widgets {
namespace {

// Queries listed under the plot: the most different first.
constexpr int kListedQueries = 25;

QString signed_number(double value) {
  return QStringLiteral("%1%2")
      .arg(value >= 0 ? QStringLiteral("+") : QString())
      .arg(value, 0, 'f', 4);
}

}  // namespace

CompareView::CompareView(QWidget* parent) : PlotView(parent) {
  run_a_ = new QComboBox(this);
  run_b_ = new QComboBox(this);
  dataset_ = new QComboBox(this);
  metric_ = new QComboBox(this);
  test_ = new QComboBox(this);
  test_->addItem(tr("Fisher randomization"), static_cast<int>(lmk::stats::PairedTest::Fisher));
  test_->addItem(tr("Student's t"), static_cast<int>(lmk::stats::PairedTest::Student));
  test_->addItem(tr("paired bootstrap"), static_cast<int>(lmk::stats::PairedTest::Bootstrap));
  // Run names are long: the run choosers show their start (the full name in the list), so that
  // the window keeps a laptop's width; the other choices show their whole text.
  auto add = [this](const QString& label, QComboBox* combo) {
    add_control(label, combo);
    if (combo == run_a_ || combo == run_b_) {
      combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
      combo->setMinimumContentsLength(10);
    } else {
      combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    }
  };
  add(tr("A"), run_a_);
  add(tr("B"), run_b_);
  add(tr("Dataset"), dataset_);
  add(tr("Metric"), metric_);
  add(tr("Test"), test_);
  csv_button_ = new QPushButton(tr("CSV…"), this);
  csv_button_->setObjectName(QStringLiteral("compare_csv"));
  csv_button_->setToolTip(
      tr("Export every shared query's values as CSV (part, query, A, B, A − B)"));
  csv_button_->setEnabled(false);  // until a pair with shared queries is shown
  add_control({}, csv_button_);
  connect(csv_button_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the queries"), export_name() + QStringLiteral(".csv"), tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    try {
      export_queries_csv(path);
      emit status_message(tr("Wrote %1").arg(path));
    } catch (const std::exception& e) {
      QMessageBox::warning(this, tr("Export failed"), QString::fromUtf8(e.what()));
    }
  });
  for (QComboBox* run : {run_a_, run_b_})
    connect(run, &QComboBox::currentIndexChanged, this, [this] { runs_changed(); });
  for (QComboBox* choice : {dataset_, metric_, test_})
    connect(choice, &QComboBox::currentIndexChanged, this, [this] { load_shown(); });

  QCustomPlot* figure = plot();
  rects_[0] = figure->axisRect();
  figure->plotLayout()->take(rects_[0]);
  figure->plotLayout()->simplify();
  rects_[1] = new QCPAxisRect(figure);
  summary_ = new QCPTextElement(figure, QString(), QFont(font().family(), 10));
  figure->plotLayout()->addElement(0, 0, summary_);
  auto* panels = new QCPLayoutGrid;
  figure->plotLayout()->addElement(1, 0, panels);
  figure->plotLayout()->setRowStretchFactor(0, 0.001);
  const QFont title_font(font().family(), 11, QFont::Bold);
  const QString titles[2] = {tr("per query: run A vs run B"), tr("differences A − B")};
  for (int i = 0; i < 2; ++i) {
    panels->addElement(0, i, new QCPTextElement(figure, titles[i], title_font));
    panels->addElement(1, i, rects_[i]);
  }
  figure->legend->setVisible(false);

  queries_ = new QTableWidget(this);
  queries_->setColumnCount(5);
  queries_->setHorizontalHeaderLabels(
      {tr("part"), tr("query"), tr("run A"), tr("run B"), tr("A − B")});
  queries_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  queries_->setSelectionBehavior(QAbstractItemView::SelectRows);
  queries_->setSelectionMode(QAbstractItemView::SingleSelection);
  queries_->verticalHeader()->setVisible(false);
  queries_->horizontalHeader()->setStretchLastSection(true);
  queries_->setToolTip(tr("The queries that differ most; click one for its text and target"));
  details_ = new QLabel(this);
  details_->setWordWrap(true);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* below = new QWidget(this);
  auto* below_layout = new QHBoxLayout(below);
  below_layout->setContentsMargins(0, 0, 0, 0);
  below_layout->addWidget(queries_, 3);
  below_layout->addWidget(details_, 2);
  below->setMaximumHeight(220);
  add_below(below);
  connect(queries_, &QTableWidget::cellClicked, this, [this](int row, int) { show_details(row); });
}

namespace {

ComparedPair read_compared(const ResultsStore& db, qint64 a, qint64 b, const QString& dataset,
                           const QString& split, const QString& metric,
                           lmk::stats::PairedTest test) {
  ComparedPair shown;
  shown.metrics = read_query_metrics(db, a, dataset, split);
  shown.metric = shown.metrics.contains(metric) ? metric
                 : shown.metrics.contains(QStringLiteral("ndcg_at_10"))
                     ? QStringLiteral("ndcg_at_10")
                     : shown.metrics.value(0);
  if (!shown.metric.isEmpty())
    shown.pair = read_run_pair(db, a, b, dataset, split, shown.metric, test);
  return shown;
}

// The (dataset, split) pairs both runs have per-query results on.
// Runs that evaluated different dataset folders (which may share a task name) have no queries
// in common, as lmk compare says.
bool different_folders(const ComparableRun& a, const ComparableRun& b) {
  return !a.dataset_path.isEmpty() && !b.dataset_path.isEmpty() && a.dataset_path != b.dataset_path;
}

QVector<QPair<QString, QString>> shared_datasets(const ComparableRun& a, const ComparableRun& b) {
  QVector<QPair<QString, QString>> shared;
  if (different_folders(a, b)) return shared;
  for (const auto& dataset : a.datasets)
    if (b.datasets.contains(dataset)) shared.append(dataset);
  return shared;
}

}  // namespace

void CompareView::set_store(const QString& db_path) {
  // The choices carry over a refresh of the same store; another store's run ids name other runs.
  const bool same_store = db_path == db_path_;
  db_path_ = db_path;
  if (db_path.isEmpty()) {
    show_message(tr("No results store open — File → Open a results database"));
    finish_without_loading();
    return;
  }
  const qint64 a = same_store ? run_a() : 0, b = same_store ? run_b() : 0;
  const QStringList dataset = same_store ? dataset_->currentData().toStringList() : QStringList();
  const QString metric = same_store ? metric_->currentText() : QString();
  const auto test = static_cast<lmk::stats::PairedTest>(test_->currentData().toInt());
  struct Loaded {
    QVector<ComparableRun> runs;
    int a = -1, b = -1;
    QVector<QPair<QString, QString>> datasets;
    int dataset = 0;
    ComparedPair shown;
  };
  load<Loaded>(
      LoadKind::Store,
      [a, b, dataset, metric, test](const ResultsStore& db) {
        Loaded loaded;
        loaded.runs = read_comparable_runs(db);
        auto index_of = [&](qint64 id) {
          for (int i = 0; i < loaded.runs.size(); ++i)
            if (loaded.runs[i].id == id) return i;
          return -1;
        };
        loaded.a = index_of(a);
        loaded.b = index_of(b);
        // Without a choice: the first two runs that share a dataset.
        for (int i = 0; (loaded.a < 0 || loaded.b < 0) && i < loaded.runs.size(); ++i) {
          for (int j = i + 1; j < loaded.runs.size(); ++j) {
            if (!shared_datasets(loaded.runs[i], loaded.runs[j]).isEmpty()) {
              loaded.a = i;
              loaded.b = j;
              break;
            }
          }
        }
        if (loaded.a < 0 || loaded.b < 0) return loaded;
        loaded.datasets = shared_datasets(loaded.runs[loaded.a], loaded.runs[loaded.b]);
        if (loaded.datasets.isEmpty()) return loaded;
        loaded.dataset = std::max(0, static_cast<int>(loaded.datasets.indexOf(
                                         qMakePair(dataset.value(0), dataset.value(1)))));
        const auto& [name, split] = loaded.datasets[loaded.dataset];
        loaded.shown = read_compared(db, loaded.runs[loaded.a].id, loaded.runs[loaded.b].id, name,
                                     split, metric, test);
        return loaded;
      },
      [this](const Loaded& loaded) {
        runs_ = loaded.runs;
        for (QComboBox* combo : {run_a_, run_b_}) {
          const QSignalBlocker block(combo);
          combo->clear();
          for (const ComparableRun& run : runs_) combo->addItem(run.label, run.id);
        }
        {
          const QSignalBlocker block_a(run_a_), block_b(run_b_);
          run_a_->setCurrentIndex(loaded.a);
          run_b_->setCurrentIndex(loaded.b);
        }
        if (loaded.a < 0 || loaded.b < 0) {
          pair_ = RunPair();
          show_message(
              tr("No two runs with per-query results on one dataset in this store — "
                 "evaluate with lmk eval --db (it stores every query's metrics) or run "
                 "a study"));
          return;
        }
        fill_datasets(loaded.datasets, loaded.dataset);
        if (loaded.datasets.isEmpty()) {
          pair_ = RunPair();
          clear_shown_pair();
          show_message(unpaired_message(runs_[loaded.a], runs_[loaded.b]));
          return;
        }
        display(loaded.shown);
      });
}

QString CompareView::unpaired_message(const ComparableRun& a, const ComparableRun& b) const {
  return different_folders(a, b)
             ? tr("Runs #%1 and #%2 evaluated different dataset folders (%3; %4): their "
                  "queries cannot be paired")
                   .arg(a.id)
                   .arg(b.id)
                   .arg(a.dataset_path, b.dataset_path)
             : tr("Runs #%1 and #%2 share no evaluated dataset: choose runs of the same one")
                   .arg(a.id)
                   .arg(b.id);
}

void CompareView::clear_data() {
  csv_button_->setEnabled(false);
  runs_.clear();
  pair_ = RunPair();
  for (QComboBox* combo : {run_a_, run_b_, dataset_, metric_}) {
    const QSignalBlocker block(combo);
    combo->clear();
  }
  queries_->setRowCount(0);
  details_->clear();
  plot()->clearPlottables();
}

void CompareView::set_runs(qint64 a, qint64 b) {
  {
    const QSignalBlocker block_a(run_a_), block_b(run_b_);
    run_a_->setCurrentIndex(run_a_->findData(a));
    run_b_->setCurrentIndex(run_b_->findData(b));
  }
  runs_changed();
}

void CompareView::set_dataset(const QString& dataset, const QString& split) {
  dataset_->setCurrentIndex(dataset_->findData(QStringList{dataset, split}));
}

void CompareView::set_metric(const QString& metric) {
  metric_->setCurrentIndex(metric_->findText(metric));
}

void CompareView::set_test(lmk::stats::PairedTest test) {
  test_->setCurrentIndex(test_->findData(static_cast<int>(test)));
}

qint64 CompareView::run_a() const {
  return run_a_->currentData().toLongLong();
}

qint64 CompareView::run_b() const {
  return run_b_->currentData().toLongLong();
}

void CompareView::fill_datasets(const QVector<QPair<QString, QString>>& datasets, int current) {
  const QSignalBlocker block(dataset_);
  dataset_->clear();
  for (const auto& [dataset, split] : datasets)
    dataset_->addItem(QStringLiteral("%1 · %2").arg(dataset, split), QStringList{dataset, split});
  dataset_->setCurrentIndex(datasets.isEmpty() ? -1 : current);
}

void CompareView::runs_changed() {
  const int a = run_a_->currentIndex(), b = run_b_->currentIndex();
  if (a < 0 || b < 0 || a >= runs_.size() || b >= runs_.size()) return;
  const QVector<QPair<QString, QString>> datasets = shared_datasets(runs_[a], runs_[b]);
  const QStringList kept = dataset_->currentData().toStringList();
  fill_datasets(
      datasets,
      std::max(0, static_cast<int>(datasets.indexOf(qMakePair(kept.value(0), kept.value(1))))));
  if (datasets.isEmpty()) {
    pair_ = RunPair();
    clear_shown_pair();
    show_message(unpaired_message(runs_[a], runs_[b]));
    emit loaded();
    return;
  }
  load_shown();
}

void CompareView::load_shown() {
  const QStringList key = dataset_->currentData().toStringList();
  if (key.size() != 2) return;
  const qint64 a = run_a(), b = run_b();
  const QString metric = metric_->currentText();
  const auto test = static_cast<lmk::stats::PairedTest>(test_->currentData().toInt());
  load<ComparedPair>(
      LoadKind::Data,
      [a, b, key, metric, test](const ResultsStore& db) {
        return read_compared(db, a, b, key[0], key[1], metric, test);
      },
      [this](const ComparedPair& shown) { display(shown); });
}

void CompareView::display(const ComparedPair& shown) {
  {
    const QSignalBlocker block(metric_);
    metric_->clear();
    metric_->addItems(shown.metrics);
    metric_->setCurrentIndex(metric_->findText(shown.metric));
  }
  pair_ = shown.pair;
  draw();
}

QString CompareView::summary() const {
  if (!pair_.compared) return pair_.note;
  const lmk::stats::PairedComparison& c = pair_.comparison;
  return tr("A − B = %1 (95 % CI %2 … %3, BCa %4 … %5)\n%6 (two-sided): p = %7; d_z = %8; "
            "N = %9 queries, pooled over the dataset's parts (mean A %10, B %11)%12")
      .arg(signed_number(c.difference), signed_number(c.difference_interval.low),
           signed_number(c.difference_interval.high), signed_number(c.difference_bca.low),
           signed_number(c.difference_bca.high),
           QString::fromStdString(lmk::stats::paired_test_title(c.test)))
      .arg(c.p_value, 0, 'g', 3)
      .arg(c.effect_size, 0, 'f', 2)
      .arg(c.n)
      .arg(c.mean_a, 0, 'f', 4)
      .arg(c.mean_b, 0, 'f', 4)
      .arg(pair_.note.isEmpty() ? QString() : QStringLiteral("\n") + pair_.note);
}

void CompareView::clear_shown_pair() {
  csv_button_->setEnabled(false);
  plot()->clearPlottables();
  plot()->clearItems();
  replot_when_sized(plot());
  queries_->setRowCount(0);
  details_->clear();
  listed_.clear();
}

void CompareView::draw() {
  QCustomPlot* figure = plot();
  clear_shown_pair();
  if (pair_.pairs.isEmpty()) {
    show_message(pair_.note.isEmpty() ? tr("Runs #%1 and #%2 share no query of %3")
                                            .arg(run_a())
                                            .arg(run_b())
                                            .arg(dataset_->currentText())
                                      : pair_.note);
    return;
  }
  csv_button_->setEnabled(true);
  summary_->setText(summary());
  // Left: run A (x) against run B (y) per query, the diagonal where they are equal.
  QCPAxis* ax = rects_[0]->axis(QCPAxis::atBottom);
  QCPAxis* ay = rects_[0]->axis(QCPAxis::atLeft);
  ax->setLabel(run_a_->currentText() + QStringLiteral(" · ") + metric_->currentText());
  ay->setLabel(run_b_->currentText());
  double low = 0, high = 1;
  QVector<double> xs, ys, differences;
  for (const QueryPair& p : pair_.pairs) {
    xs << p.a;
    ys << p.b;
    differences << p.a - p.b;
    low = std::min({low, p.a, p.b});
    high = std::max({high, p.a, p.b});
  }
  QCPGraph* diagonal = figure->addGraph(ax, ay);
  diagonal->setPen(QPen(Qt::gray, 1, Qt::DashLine));
  diagonal->setData({low, high}, {low, high});
  QCPGraph* points = figure->addGraph(ax, ay);
  points->setName(QStringLiteral("queries"));
  points->setLineStyle(QCPGraph::lsNone);
  const QColor color = series_color(0);
  QColor fill = color;
  fill.setAlpha(110);
  points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, fill, fill, 7));
  points->setData(xs, ys);  // unsorted: one point per query
  const double pad = (high - low) * 0.05;
  ax->setRange(low - pad, high + pad);
  ay->setRange(low - pad, high + pad);

  // Right: a histogram of A − B (20 bins over their range), 0 and the mean difference marked,
  // the mean's interval shaded.
  QCPAxis* bx = rects_[1]->axis(QCPAxis::atBottom);
  QCPAxis* by = rects_[1]->axis(QCPAxis::atLeft);
  bx->setLabel(tr("A − B per query"));
  by->setLabel(tr("queries"));
  const auto [min_it, max_it] = std::minmax_element(differences.begin(), differences.end());
  double d_low = std::min(*min_it, -0.05), d_high = std::max(*max_it, 0.05);
  const int bins = 20;
  const double width = (d_high - d_low) / bins;
  QVector<double> centers(bins), counts(bins, 0);
  for (int i = 0; i < bins; ++i) centers[i] = d_low + (i + 0.5) * width;
  for (double d : differences)
    counts[std::clamp(static_cast<int>((d - d_low) / width), 0, bins - 1)] += 1;
  auto* bars = new QCPBars(bx, by);
  bars->setWidth(width * 0.9);
  bars->setPen(Qt::NoPen);
  bars->setBrush(series_color(1));
  bars->setData(centers, counts, true);
  const double top = *std::max_element(counts.begin(), counts.end()) * 1.15 + 1;
  bx->setRange(d_low - width, d_high + width);
  by->setRange(0, top);
  auto vertical = [&](double x, const QPen& pen) {
    QCPGraph* line = figure->addGraph(bx, by);
    line->setPen(pen);
    line->setData({x, x}, {0, top});
  };
  vertical(0, QPen(Qt::gray, 1, Qt::DashLine));
  if (pair_.compared) {
    const lmk::stats::PairedComparison& c = pair_.comparison;
    auto* band = new QCPItemRect(figure);
    band->setClipAxisRect(rects_[1]);
    for (QCPItemPosition* corner : {band->topLeft, band->bottomRight}) {
      corner->setAxes(bx, by);
      corner->setAxisRect(rects_[1]);
    }
    band->topLeft->setCoords(c.difference_interval.low, top);
    band->bottomRight->setCoords(c.difference_interval.high, 0);
    QColor shade = series_color(3);
    shade.setAlpha(50);
    band->setPen(Qt::NoPen);
    band->setBrush(shade);
    vertical(c.difference, QPen(series_color(3), 2));
  }

  // Below: the queries that differ most.
  QVector<int> order(pair_.pairs.size());
  for (int i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    return std::fabs(differences[x]) > std::fabs(differences[y]);
  });
  const int listed = std::min<int>(kListedQueries, order.size());
  queries_->setRowCount(listed);
  for (int row = 0; row < listed; ++row) {
    const QueryPair& p = pair_.pairs[order[row]];
    listed_ << order[row];
    const QStringList cells = {p.part, p.query_id, QString::number(p.a, 'f', 4),
                               QString::number(p.b, 'f', 4), signed_number(p.a - p.b)};
    for (int c = 0; c < cells.size(); ++c)
      queries_->setItem(row, c, new QTableWidgetItem(cells[c]));
  }
  queries_->resizeColumnsToContents();
  show_plot();
}

QString CompareView::details() const {
  return details_->text();
}

void CompareView::show_details(int row) {
  if (row < 0 || row >= listed_.size()) return;
  const QueryPair p = pair_.pairs[listed_[row]];
  const QStringList key = dataset_->currentData().toStringList();
  QString folder;
  for (const ComparableRun& run : runs_)
    if (run.id == run_a()) folder = run.dataset_path;
  const QString split = key.value(1);
  details_->setText(tr("Reading query %1…").arg(p.query_id));
  load_in_background<QueryDetails>(
      this, db_path_,
      [folder, p, split](const ResultsStore&) {
        return read_query_details(folder, p.part, split, p.query_id);
      },
      [this, p](QueryDetails found, const QString& error) {
        QString text = tr("<b>%1</b>%2: A %3, B %4<br>")
                           .arg(p.query_id.toHtmlEscaped(),
                                p.part.isEmpty() ? QString() : tr(" (part %1)").arg(p.part))
                           .arg(p.a, 0, 'f', 4)
                           .arg(p.b, 0, 'f', 4);
        if (!error.isEmpty() || !found.error.isEmpty()) {
          text += tr("cannot read the query: %1").arg((error + found.error).toHtmlEscaped());
        } else {
          text += found.text.toHtmlEscaped() + QStringLiteral("<br>") +
                  tr("target: %1").arg(found.targets.join(QStringLiteral(", ")).toHtmlEscaped());
        }
        details_->setText(text);
        emit details_shown();
      });
}

void CompareView::export_queries_csv(const QString& path) const {
  if (pair_.pairs.isEmpty())
    throw std::runtime_error((message().isEmpty()
                                  ? tr("No pair of runs compared: nothing to export")
                                  : tr("Nothing to export: %1").arg(message()))
                                 .toStdString());
  QString csv = QStringLiteral("part,query,a,b,difference\r\n");
  for (const QueryPair& p : pair_.pairs) {
    csv += QStringLiteral("%1,%2,%3,%4,%5\r\n")
               .arg(csv_field(p.part), csv_field(p.query_id),
                    QString::number(p.a, 'g', QLocale::FloatingPointShortest),
                    QString::number(p.b, 'g', QLocale::FloatingPointShortest),
                    QString::number(p.a - p.b, 'g', QLocale::FloatingPointShortest));
  }
  write_text_file(path, csv);
}

QString CompareView::export_name() const {
  return QStringLiteral("compare-%1-%2-%3").arg(run_a()).arg(run_b()).arg(metric_->currentText());
}

}  // namespace lmk::widgets
