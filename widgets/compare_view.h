#pragma once

// The comparison panel: two runs query by query. Left, each shared query as a point (run A's
// value, run B's value) with the diagonal where they are equal; right, the distribution of the
// differences A − B with their mean and its 95 % interval; above, the paired test (named, with
// p, the interval and the effect size); below, the queries that differ most — a click shows the
// query's text and its target documents from the dataset folder.

#include <QString>
#include <QVector>

#include "widgets/plot_view.h"
#include "widgets/query_data.h"

class QComboBox;
class QCPAxisRect;
class QCPTextElement;
class QLabel;
class QPushButton;
class QTableWidget;

namespace lmk::widgets {

// What the panel shows for a choice of runs, dataset and metric: the metrics of the dataset
// (the chosen one, else nDCG@10, else the first) and the two runs' pair.
struct ComparedPair {
  QStringList metrics;
  QString metric;
  RunPair pair;
};

class CompareView : public PlotView {
  Q_OBJECT
 public:
  explicit CompareView(QWidget* parent = nullptr);

  QString title() const override { return tr("Compare"); }
  void set_store(const QString& db_path) override;

  // Chooses the two runs (ids; loads their shared datasets) and the metric and test.
  void set_runs(qint64 a, qint64 b);
  void set_dataset(const QString& dataset, const QString& split);
  void set_metric(const QString& metric);
  void set_test(lmk::stats::PairedTest test);

  qint64 run_a() const;
  qint64 run_b() const;
  // What is shown: the pairs, the test's result, and the summary line above the plot.
  const RunPair& pair() const { return pair_; }
  QString summary() const;
  // The queries listed below the plot (the most different first) and the details of one.
  QTableWidget* queries_table() const { return queries_; }
  QString details() const;
  // Shows the details of the listed query in `row` (as a click does); emits details_shown.
  void show_details(int row);
  // Writes every shared query's values as CSV (part, query, A, B, A − B).
  void export_queries_csv(const QString& path) const;

 signals:
  void details_shown();

 protected:
  QString export_name() const override;
  void clear_data() override;

 private:
  void fill_datasets(const QVector<QPair<QString, QString>>& datasets, int current);
  void runs_changed();
  void load_shown();
  void display(const ComparedPair& shown);
  void draw();
  // Empties the plot, the query list and the details (a refused pair shows none of the last).
  void clear_shown_pair();
  // Why two runs cannot be compared: they read different dataset folders, or share no dataset.
  QString unpaired_message(const ComparableRun& a, const ComparableRun& b) const;

  QComboBox* run_a_ = nullptr;
  QComboBox* run_b_ = nullptr;
  QComboBox* dataset_ = nullptr;
  QComboBox* metric_ = nullptr;
  QComboBox* test_ = nullptr;
  QPushButton* csv_button_ = nullptr;  // enabled while a pair with shared queries is shown
  QCPAxisRect* rects_[2] = {nullptr, nullptr};
  QCPTextElement* summary_ = nullptr;
  QTableWidget* queries_ = nullptr;
  QLabel* details_ = nullptr;
  QVector<ComparableRun> runs_;
  RunPair pair_;
  QVector<int> listed_;  // the pair index of each listed row
};

}  // namespace lmk::widgets
