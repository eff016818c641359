#include "widgets/explorer_request.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <stdexcept>

#include "core/data/dataset_dir.h"
#include "widgets/plot_view.h"

namespace lmk::widgets {
namespace {

constexpr size_t kMaxQueries = 2000;  // listed per dataset part

// The corpus file of a BEIR folder (plain or gzip).
QString corpus_file(const QString& dir) {
  const QString plain = QDir(dir).filePath(QStringLiteral("corpus.jsonl"));
  if (!QFileInfo::exists(plain) && QFileInfo::exists(plain + QStringLiteral(".gz")))
    return plain + QStringLiteral(".gz");
  return plain;
}

}  // namespace

ExplorerRequestPanel::ExplorerRequestPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(build_model_row());
  layout->addLayout(build_document_row());
}

// What to compute: the model and pooling.
QHBoxLayout* ExplorerRequestPanel::build_model_row() {
  auto* model_row = new QHBoxLayout;
  run_ = new QComboBox(this);
  run_->setObjectName(QStringLiteral("explorer_run"));
  run_->setToolTip(tr("An evaluation run of the open store: its model, pooling and test queries"));
  run_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  run_->setMinimumContentsLength(10);
  fit_list_to_items(run_);
  model_ = new QLineEdit(this);
  model_->setObjectName(QStringLiteral("explorer_model"));
  model_->setPlaceholderText(tr("model folder (config.json, model.safetensors, tokenizer)"));
  auto* browse_model = new QPushButton(tr("…"), this);
  browse_model->setToolTip(tr("Choose a model folder"));
  pooling_ = new QComboBox(this);
  pooling_->addItems({QStringLiteral("lmk"), QStringLiteral("cls"), QStringLiteral("multicls"),
                      QStringLiteral("mean")});
  granularity_ = new QSpinBox(this);
  granularity_->setRange(0, 1 << 20);
  granularity_->setSpecialValueText(tr("folder's"));
  granularity_->setToolTip(tr("Landmark / MultiCLS granularity (tokens per chunk)"));
  max_length_ = new QSpinBox(this);
  max_length_->setRange(0, 1 << 24);
  max_length_->setSingleStep(1024);
  max_length_->setSpecialValueText(tr("whole text"));
  max_length_->setToolTip(tr("Model inputs read at most (the rest is cut, and the view says so)"));
  layers_ = new QLineEdit(QStringLiteral("last"), this);
  layers_->setMaximumWidth(90);
  layers_->setToolTip(
      tr("Layers whose per-pooling-token rows are kept (last | all | 0,3,6): one landmark's "
         "attention can be shown there. Every layer's profiles are kept."));
  model_row->addWidget(new QLabel(tr("Run:"), this));
  model_row->addWidget(run_);
  model_row->addWidget(new QLabel(tr("Model:"), this));
  model_row->addWidget(model_, 1);
  model_row->addWidget(browse_model);
  model_row->addWidget(new QLabel(tr("Pooling:"), this));
  model_row->addWidget(pooling_);
  model_row->addWidget(new QLabel(tr("Granularity:"), this));
  model_row->addWidget(granularity_);
  model_row->addWidget(new QLabel(tr("Max length:"), this));
  model_row->addWidget(max_length_);
  model_row->addWidget(new QLabel(tr("Rows for layers:"), this));
  model_row->addWidget(layers_);

  connect(run_, &QComboBox::activated, this, &ExplorerRequestPanel::choose_run);
  connect(browse_model, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Model folder"), model_->text());
    if (!dir.isEmpty()) model_->setText(dir);
  });
  return model_row;
}

// The document and the query, and the buttons that act on them.
QHBoxLayout* ExplorerRequestPanel::build_document_row() {
  auto* document_row = new QHBoxLayout;
  source_ = new QComboBox(this);
  source_->addItems({tr("File"), tr("Pasted text"), tr("A query's target")});
  build_source_pages();
  query_ = new QLineEdit(this);
  query_->setObjectName(QStringLiteral("explorer_query"));
  query_->setPlaceholderText(tr("query (optional)"));
  with_cls_ = new QCheckBox(tr("Also CLS"), this);
  with_cls_->setChecked(true);
  with_cls_->setToolTip(tr("Also compute CLS pooling, for the side-by-side overview"));
  compute_ = new QPushButton(tr("Compute"), this);
  compute_->setObjectName(QStringLiteral("explorer_compute"));
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  auto* open_button = new QPushButton(tr("Open file…"), this);
  open_button->setToolTip(tr("Open a file written by lmk attention --explore"));
  auto* export_button = new QPushButton(tr("Export…"), this);
  export_button->setToolTip(tr("Save the view (PNG, PDF, SVG) or its numbers (CSV)"));
  document_row->addWidget(new QLabel(tr("Document:"), this));
  document_row->addWidget(source_);
  document_row->addWidget(source_pages_, 2);
  document_row->addWidget(new QLabel(tr("Query:"), this));
  document_row->addWidget(query_, 1);
  document_row->addWidget(with_cls_);
  document_row->addWidget(compute_);
  document_row->addWidget(cancel_);
  document_row->addWidget(open_button);
  document_row->addWidget(export_button);

  connect(source_, &QComboBox::currentIndexChanged, source_pages_,
          &QStackedWidget::setCurrentIndex);
  connect(compute_, &QPushButton::clicked, this, &ExplorerRequestPanel::compute_clicked);
  connect(cancel_, &QPushButton::clicked, this, &ExplorerRequestPanel::cancel_clicked);
  connect(open_button, &QPushButton::clicked, this, &ExplorerRequestPanel::open_clicked);
  connect(export_button, &QPushButton::clicked, this, &ExplorerRequestPanel::export_clicked);
  return document_row;
}

// The document's sources, one page each: a file, pasted text, a query's target (part and query).
void ExplorerRequestPanel::build_source_pages() {
  source_pages_ = new QStackedWidget(this);
  auto* file_page = new QWidget(source_pages_);
  auto* file_layout = new QHBoxLayout(file_page);
  file_layout->setContentsMargins(0, 0, 0, 0);
  document_file_ = new QLineEdit(file_page);
  document_file_->setPlaceholderText(tr("a text file (UTF-8)"));
  auto* browse_document = new QPushButton(tr("…"), file_page);
  file_layout->addWidget(document_file_, 1);
  file_layout->addWidget(browse_document);
  pasted_ = new QPlainTextEdit(source_pages_);
  pasted_->setPlaceholderText(tr("Paste the document here"));
  pasted_->setMaximumHeight(56);
  auto* target_page = new QWidget(source_pages_);
  auto* target_layout = new QHBoxLayout(target_page);
  target_layout->setContentsMargins(0, 0, 0, 0);
  part_ = new QComboBox(target_page);
  part_->setObjectName(QStringLiteral("explorer_part"));
  part_->setToolTip(tr("The dataset part (length group) of the run's dataset"));
  query_choice_ = new QComboBox(target_page);
  query_choice_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  query_choice_->setMinimumContentsLength(12);
  fit_list_to_items(query_choice_);
  target_layout->addWidget(part_);
  target_layout->addWidget(query_choice_, 1);
  source_pages_->addWidget(file_page);
  source_pages_->addWidget(pasted_);
  source_pages_->addWidget(target_page);
  source_pages_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
  source_pages_->setFixedHeight(std::max(file_page->sizeHint().height(), 48));

  connect(browse_document, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Document"), document_file_->text());
    if (!path.isEmpty()) document_file_->setText(path);
  });
  connect(part_, &QComboBox::activated, this, &ExplorerRequestPanel::choose_part);
  connect(query_choice_, &QComboBox::activated, this, &ExplorerRequestPanel::choose_query);
}

ExplorerRequest ExplorerRequestPanel::request() const {
  ExplorerRequest r;
  r.model = model_->text().trimmed();
  r.pooling = pooling_->currentText();
  r.granularity = granularity_->value();
  r.layers = layers_->text().trimmed();
  r.max_length = max_length_->value();
  r.query = query_->text();
  r.with_cls = with_cls_->isChecked();
  switch (source_->currentIndex()) {
    case kFile:
      r.document_file = document_file_->text().trimmed();
      break;
    case kPasted:
      r.text = pasted_->toPlainText();
      break;
    default: {
      const int q = query_choice_->currentIndex();
      if (q >= 0 && q < static_cast<int>(queries_.size()) && part_->currentIndex() >= 0) {
        r.corpus = corpus_file(part_->currentData().toString());
        r.doc_id = queries_[static_cast<size_t>(q)].document;
        if (r.query == queries_[static_cast<size_t>(q)].text)
          r.evidence_position = queries_[static_cast<size_t>(q)].evidence_position;
      }
    }
  }
  return r;
}

void ExplorerRequestPanel::set_request(const ExplorerRequest& r) {
  model_->setText(r.model);
  const int pooling = pooling_->findText(r.pooling);
  if (pooling >= 0) pooling_->setCurrentIndex(pooling);
  granularity_->setValue(r.granularity);
  layers_->setText(r.layers);
  max_length_->setValue(r.max_length);
  query_->setText(r.query);
  with_cls_->setChecked(r.with_cls);
  if (!r.text.isEmpty()) {
    source_->setCurrentIndex(kPasted);
    pasted_->setPlainText(r.text);
  } else {
    source_->setCurrentIndex(kFile);
    document_file_->setText(r.document_file);
  }
}

bool ExplorerRequestPanel::knows_pooling(const QString& pooling) const {
  return pooling_->findText(pooling) >= 0;
}

void ExplorerRequestPanel::set_busy(bool busy) {
  compute_->setEnabled(!busy);
  cancel_->setEnabled(busy);
}

void ExplorerRequestPanel::set_runs(std::vector<ExplorerRun> runs, bool no_store) {
  runs_ = std::move(runs);
  if (no_store) {
    run_->clear();
    run_->addItem(tr("— none: no store open —"));
    return;
  }
  const QString current = run_->currentText();
  run_->clear();
  QStringList items{runs_.empty() ? tr("— no evaluation runs —") : tr("— pick a run —")};
  for (const ExplorerRun& run : runs_) items << QStringLiteral("%1 · %2").arg(run.id).arg(run.name);
  run_->addItems(items);  // one insertion: the list is measured once
  const int keep = run_->findText(current);
  if (keep > 0) run_->setCurrentIndex(keep);
}

std::optional<ExplorerTarget> ExplorerRequestPanel::target() const {
  const int run = run_->currentIndex();
  const int q = query_choice_->currentIndex();
  if (run <= 0 || source_->currentIndex() != kTarget || q < 0 ||
      q >= static_cast<int>(queries_.size()))
    return std::nullopt;
  return ExplorerTarget{runs_[static_cast<size_t>(run - 1)], queries_[static_cast<size_t>(q)].id,
                        part_->currentText()};
}

void ExplorerRequestPanel::choose_run(int index) {
  if (index <= 0 || index > static_cast<int>(runs_.size())) return;
  const ExplorerRun& run = runs_[static_cast<size_t>(index - 1)];
  model_->setText(run.model);
  const int pooling = pooling_->findText(run.pooling);
  if (pooling >= 0) pooling_->setCurrentIndex(pooling);
  granularity_->setValue(run.granularity);
  part_->clear();
  query_choice_->clear();
  queries_.clear();
  if (run.dataset.isEmpty()) return;
  try {
    for (const DatasetPart& part : dataset_parts(run.dataset.toStdString()))
      part_->addItem(part.name.empty() ? tr("(whole dataset)") : QString::fromStdString(part.name),
                     QString::fromStdString(part.path));
  } catch (const std::exception& e) {
    emit problem(QString::fromUtf8(e.what()));
  }
  if (part_->count() > 0) {
    source_->setCurrentIndex(kTarget);
    // The longest part first: the explorer is for long documents.
    part_->setCurrentIndex(part_->count() - 1);
    choose_part(part_->count() - 1);
  }
}

void ExplorerRequestPanel::choose_part(int index) {
  query_choice_->clear();
  queries_.clear();
  const int run = run_->currentIndex();
  if (index < 0 || run <= 0) return;
  const QString split = runs_[static_cast<size_t>(run - 1)].split;
  try {
    queries_ = read_explorer_queries(part_->itemData(index).toString().toStdString(),
                                     split.toStdString(), kMaxQueries);
  } catch (const std::exception& e) {
    emit problem(QString::fromUtf8(e.what()));
    return;
  }
  for (const ExplorerQuery& q : queries_) {
    QString text = q.text.simplified();
    if (text.size() > 70) text = text.left(67) + QStringLiteral("…");
    query_choice_->addItem(QStringLiteral("%1 → %2: %3").arg(q.id, q.document, text));
  }
  if (!queries_.empty()) choose_query(0);
}

void ExplorerRequestPanel::choose_query(int index) {
  if (index < 0 || index >= static_cast<int>(queries_.size())) return;
  query_->setText(queries_[static_cast<size_t>(index)].text);
}

}  // namespace lmk::widgets
