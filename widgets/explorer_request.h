#pragma once

// The attention explorer's request (its two top rows): the model (a folder, or an evaluation run
// of the open store, which brings its model, pooling, granularity, dataset parts and test
// queries), the pooling and lengths, the document (a file, pasted text, or a query's target
// document) and the query; and the Compute, Cancel, Open file… and Export… buttons. The panel
// owns these controls and the runs and queries they choose from; ExplorerView reads the store's
// runs, runs the computation and shows it.

#include <QString>
#include <QWidget>

#include <optional>
#include <vector>

#include "widgets/explorer_computation.h"
#include "widgets/explorer_data.h"

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QStackedWidget;

namespace lmk::widgets {

// An evaluation run of the store, as lmk eval recorded it.
struct ExplorerRun {
  qint64 id = 0;
  QString name, model, pooling, dataset, split;
  int granularity = 0;
};

// The stored evaluation a request's document and query come from (the document is a query's
// target).
struct ExplorerTarget {
  ExplorerRun run;
  QString query_id, part;
};

class ExplorerRequestPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ExplorerRequestPanel(QWidget* parent = nullptr);

  // The request the controls describe.
  ExplorerRequest request() const;
  void set_request(const ExplorerRequest& request);
  bool knows_pooling(const QString& pooling) const;
  // The runs to choose from (`no_store`: none, because no store is open), keeping the chosen one.
  void set_runs(std::vector<ExplorerRun> runs, bool no_store);
  // The chosen run and query, when the document is a query's target.
  std::optional<ExplorerTarget> target() const;
  // A computation runs: Compute off, Cancel on (and back).
  void set_busy(bool busy);

 signals:
  void compute_clicked();
  void cancel_clicked();
  void open_clicked();
  void export_clicked();
  // A run's dataset or queries cannot be read.
  void problem(const QString& message);

 private:
  // The document sources, in the order of the source combo box.
  enum Source { kFile = 0, kPasted = 1, kTarget = 2 };

  QHBoxLayout* build_model_row();
  QHBoxLayout* build_document_row();
  void build_source_pages();
  void choose_run(int index);
  void choose_part(int index);
  void choose_query(int index);

  QComboBox* run_ = nullptr;
  QLineEdit* model_ = nullptr;
  QComboBox* pooling_ = nullptr;
  QSpinBox* granularity_ = nullptr;
  QSpinBox* max_length_ = nullptr;
  QLineEdit* layers_ = nullptr;
  QComboBox* source_ = nullptr;
  QStackedWidget* source_pages_ = nullptr;
  QLineEdit* document_file_ = nullptr;
  QPlainTextEdit* pasted_ = nullptr;
  QComboBox* part_ = nullptr;
  QComboBox* query_choice_ = nullptr;
  QLineEdit* query_ = nullptr;
  QCheckBox* with_cls_ = nullptr;
  QPushButton* compute_ = nullptr;
  QPushButton* cancel_ = nullptr;
  std::vector<ExplorerRun> runs_;
  std::vector<ExplorerQuery> queries_;
};

}  // namespace lmk::widgets
