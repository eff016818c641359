#include "widgets/explorer_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <cmath>
#include <stdexcept>

#include "core/util/progress.h"
#include "widgets/explorer_panels.h"
#include "widgets/explorer_plots.h"
#include "widgets/explorer_text.h"
#include "widgets/plot_export.h"
#include "widgets/plot_view.h"

namespace lmk::widgets {
namespace {

// The corpus file of a BEIR folder (plain or gzip).
QString corpus_file(const QString& dir) {
  const QString plain = QDir(dir).filePath(QStringLiteral("corpus.jsonl"));
  if (!QFileInfo::exists(plain) && QFileInfo::exists(plain + QStringLiteral(".gz")))
    return plain + QStringLiteral(".gz");
  return plain;
}

}  // namespace

ExplorerView::ExplorerView(QWidget* parent) : StoreView(parent) {
  computation_ = new ExplorerComputation(
      this, [this](const QString& path, std::function<void(const ExplorerRead&)> done) {
        read_file(path, std::move(done));
      });
  computation_->on_result = [this](std::shared_ptr<DocumentAttention> d, bool) {
    install(std::move(d), /*computed=*/true);
  };
  computation_->on_finished = [this](bool ok, const QString& message) {
    computation_finished(ok, message);
  };
  build_controls();
}

ExplorerView::~ExplorerView() = default;

void ExplorerView::build_controls() {
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(build_model_row());
  layout->addLayout(build_document_row());
  layout->addLayout(build_status_row());
  layout->addWidget(build_picture(), 1);
  redraw();
}

// What to compute: the model and pooling.
QHBoxLayout* ExplorerView::build_model_row() {
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

  connect(run_, &QComboBox::activated, this, &ExplorerView::choose_run);
  connect(browse_model, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Model folder"), model_->text());
    if (!dir.isEmpty()) model_->setText(dir);
  });
  return model_row;
}

// The document and the query, and the buttons that act on them.
QHBoxLayout* ExplorerView::build_document_row() {
  auto* document_row = new QHBoxLayout;
  source_ = new QComboBox(this);
  source_->addItems({tr("File"), tr("Pasted text"), tr("A query's target")});
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
  query_ = new QLineEdit(this);
  query_->setObjectName(QStringLiteral("explorer_query"));
  query_->setPlaceholderText(tr("query (optional)"));
  with_cls_ = new QCheckBox(tr("Also CLS"), this);
  with_cls_->setChecked(true);
  with_cls_->setToolTip(tr("Also compute CLS pooling, for the side-by-side overview"));
  run_button_ = new QPushButton(tr("Compute"), this);
  run_button_->setObjectName(QStringLiteral("explorer_compute"));
  cancel_button_ = new QPushButton(tr("Cancel"), this);
  cancel_button_->setEnabled(false);
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
  document_row->addWidget(run_button_);
  document_row->addWidget(cancel_button_);
  document_row->addWidget(open_button);
  document_row->addWidget(export_button);

  connect(browse_document, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Document"), document_file_->text());
    if (!path.isEmpty()) document_file_->setText(path);
  });
  connect(source_, &QComboBox::currentIndexChanged, source_pages_,
          &QStackedWidget::setCurrentIndex);
  connect(part_, &QComboBox::activated, this, &ExplorerView::choose_part);
  connect(query_choice_, &QComboBox::activated, this, &ExplorerView::choose_query);
  connect(run_button_, &QPushButton::clicked, this, [this] { compute(); });
  connect(cancel_button_, &QPushButton::clicked, this, &ExplorerView::cancel);
  connect(open_button, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open explorer file"), QString(), tr("Explorer files (*.lmkattn);;All files (*)"));
    if (!path.isEmpty()) open_file(path);
  });
  connect(export_button, &QPushButton::clicked, this, &ExplorerView::export_with_dialog);
  return document_row;
}

// A computation's progress (its line every 500 ms), its message and notices.
QHBoxLayout* ExplorerView::build_status_row() {
  auto* status_row = new QHBoxLayout;
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(220);
  progress_->setVisible(false);
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("explorer_message"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  notice_ = new QLabel(this);
  notice_->setObjectName(QStringLiteral("explorer_notice"));
  notice_->setWordWrap(true);
  notice_->setStyleSheet(QStringLiteral("color: #8c564b"));
  status_row->addWidget(progress_);
  status_row->addWidget(message_, 1);
  status_row->addWidget(notice_, 1);

  tick_ = new QTimer(this);
  tick_->setInterval(500);
  connect(tick_, &QTimer::timeout, this, [this] {
    if (!busy()) return;
    const auto event = computation_->progress();
    const double elapsed = computation_->elapsed_seconds();
    QString text =
        tr("lmk attention (%1): %2")
            .arg(computation_->pooling(), QString::fromStdString(format_duration(elapsed)));
    if (event && event->total > 0) {
      progress_->setRange(0, static_cast<int>(event->total));
      progress_->setValue(static_cast<int>(event->done));
      text += tr(" · layer %1 of %2").arg(event->done).arg(event->total);
      if (event->eta_s >= 0)
        text += tr(" · about %1 left").arg(QString::fromStdString(format_duration(event->eta_s)));
    } else if (computation_->reading()) {
      text = tr("reading the result…");
    }
    message_->setText(text);
  });
  return status_row;
}

// The picture: overview and text on the left, choices, grid and plots on the right.
QWidget* ExplorerView::build_picture() {
  auto* splitter = new QSplitter(Qt::Horizontal, this);
  picture_ = splitter;
  auto* left = new QWidget(splitter);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  overview_ = new OverviewStrip(left);
  text_ = new TokenTextView(left);
  legend_ = new ColourLegend(left);
  left_layout->addWidget(overview_);
  left_layout->addWidget(legend_);
  left_layout->addWidget(text_, 1);

  connect(overview_, &OverviewStrip::fraction_clicked, this, &ExplorerView::jump_to_fraction);
  connect(text_, &TokenTextView::visible_changed, this, &ExplorerView::update_window);
  connect(text_, &TokenTextView::position_clicked, this,
          [this](qint64 position, Qt::KeyboardModifiers modifiers) {
            if (shown_ < 0) return;
            const DocumentAttention& d = result(shown_);
            const auto& pooling = d.pooling_positions;
            const auto it = std::find(pooling.begin(), pooling.end(), position);
            if (it != pooling.end()) {
              const int64_t row = it - pooling.begin();
              if ((modifiers & Qt::ShiftModifier) != 0 && selection_.first_row >= 0)
                set_rows(std::min(selection_.first_row, row), std::max(selection_.first_row, row));
              else
                set_rows(row, row);
            }
            select_position(position);
          });
  QScrollArea* right_scroll = build_choices(splitter);
  splitter->addWidget(left);
  splitter->addWidget(right_scroll);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  return splitter;
}

// The right column, which scrolls when the window is short: what the text shows, the layer and
// head, the pooling tokens, the colour scale, the layer x head grid and the plots.
QScrollArea* ExplorerView::build_choices(QSplitter* splitter) {
  auto* right_scroll = new QScrollArea(splitter);
  right_scroll->setWidgetResizable(true);
  right_scroll->setFrameShape(QFrame::NoFrame);
  auto* right = new QWidget(right_scroll);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  auto* form = new QFormLayout;
  shown_choice_ = new QComboBox(right);
  shown_choice_->setToolTip(tr("The pooling whose attention colours the text"));
  layer_ = new QSpinBox(right);
  head_ = new QComboBox(right);
  auto* presets = new QHBoxLayout;
  auto* mean_heads = new QPushButton(tr("Mean over heads"), right);
  auto* final_layer = new QPushButton(tr("Final layer"), right);
  presets->addWidget(mean_heads);
  presets->addWidget(final_layer);
  auto* rows = new QHBoxLayout;
  first_row_ = new QSpinBox(right);
  last_row_ = new QSpinBox(right);
  first_row_->setSpecialValueText(tr("all"));
  last_row_->setSpecialValueText(tr("all"));
  first_row_->setToolTip(
      tr("The pooling tokens whose attention is shown (click a landmark box in the text; "
         "shift-click extends the range)"));
  auto* all_rows = new QPushButton(tr("All"), right);
  rows->addWidget(first_row_);
  rows->addWidget(new QLabel(tr("to"), right));
  rows->addWidget(last_row_);
  rows->addWidget(all_rows);
  scale_ = new QComboBox(right);
  scale_->addItems({tr("linear"), tr("log (3 decades)")});
  skip_sink_ = new QCheckBox(tr("Scale without the sink"), right);
  skip_sink_->setToolTip(
      tr("Leave the sink (position 0, which takes most of the attention) out of the colour "
         "scale"));
  skip_sink_->setChecked(true);
  sink_ = new QLabel(right);
  sink_->setWordWrap(true);
  rank_ = new QLabel(right);
  rank_->setWordWrap(true);
  form->addRow(tr("Text shows:"), shown_choice_);
  form->addRow(tr("Layer:"), layer_);
  form->addRow(tr("Head:"), head_);
  form->addRow(QString(), presets);
  form->addRow(tr("Pooling tokens:"), rows);
  form->addRow(tr("Colour scale:"), scale_);
  form->addRow(QString(), skip_sink_);
  form->addRow(sink_);
  form->addRow(rank_);
  right_layout->addLayout(form);
  grid_ = new LayerHeadGrid(right);
  auto* grid_scroll = new QScrollArea(right);
  grid_scroll->setWidget(grid_);
  grid_scroll->setWidgetResizable(false);
  grid_scroll->setMinimumHeight(100);
  right_layout->addWidget(grid_scroll, 1);
  plots_ = new ExplorerPlots(right);
  right_layout->addWidget(plots_, 2);
  right_scroll->setWidget(right);

  connect(shown_choice_, &QComboBox::activated, this, &ExplorerView::show_result);
  connect(layer_, &QSpinBox::valueChanged, this, [this](int layer) {
    if (!updating_controls_) set_layer_head(layer, selection_.head);
  });
  connect(head_, &QComboBox::activated, this,
          [this](int index) { set_layer_head(selection_.layer, index - 1); });
  connect(mean_heads, &QPushButton::clicked, this,
          [this] { set_layer_head(selection_.layer, -1); });
  connect(final_layer, &QPushButton::clicked, this, [this] {
    if (shown_ >= 0) set_layer_head(result(shown_).layers - 1, selection_.head);
  });
  const auto rows_changed = [this] {
    if (updating_controls_) return;
    set_rows(first_row_->value() - 1,
             last_row_->value() > 0 ? last_row_->value() - 1 : first_row_->value() - 1);
  };
  connect(first_row_, &QSpinBox::valueChanged, this, rows_changed);
  connect(last_row_, &QSpinBox::valueChanged, this, rows_changed);
  connect(all_rows, &QPushButton::clicked, this, [this] { set_rows(-1, -1); });
  connect(scale_, &QComboBox::currentIndexChanged, this,
          [this](int index) { set_log_scale(index == 1); });
  connect(skip_sink_, &QCheckBox::toggled, this, &ExplorerView::set_skip_sink);
  connect(grid_, &LayerHeadGrid::chosen, this,
          [this](qint64 layer, qint64 head) { set_layer_head(layer, head); });
  connect(plots_, &ExplorerPlots::pooling_token_clicked, this, [this](int index) {
    if (shown_ < 0) return;
    set_rows(index, index);
    text_->scroll_to_position(result(shown_).pooling_positions[static_cast<size_t>(index)]);
  });
  return right_scroll;
}

// ---- computing

ExplorerRequest ExplorerView::request() const {
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

void ExplorerView::set_request(const ExplorerRequest& r) {
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

bool ExplorerView::busy() const {
  return computation_->busy();
}

void ExplorerView::compute() {
  compute(request());
}

void ExplorerView::compute(const ExplorerRequest& request) {
  if (busy()) cancel();
  // What the view can refuse itself; lmk checks the rest (and says why).
  QString refusal;
  if (request.model.isEmpty())
    refusal = tr("Choose a model folder (or an evaluation run of the store).");
  else if (!QFileInfo(QDir(request.model).filePath(QStringLiteral("config.json"))).isFile())
    refusal = tr("%1 is not a model folder (no config.json).").arg(request.model);
  else if (request.corpus.isEmpty() && request.document_file.isEmpty() &&
           request.text.trimmed().isEmpty())
    refusal = tr("The document is empty: choose a file, paste a text, or pick a query.");
  else if (!request.document_file.isEmpty() && !QFileInfo(request.document_file).isFile())
    refusal = tr("%1: no such file.").arg(request.document_file);
  else if (pooling_->findText(request.pooling) < 0)
    refusal = tr("Unknown pooling '%1'.").arg(request.pooling);
  if (!refusal.isEmpty()) {
    fail(refusal);
    return;
  }
  evidence_position_ = request.evidence_position;
  results_replaced_ = false;
  run_button_->setEnabled(false);
  cancel_button_->setEnabled(true);
  progress_->setRange(0, 0);
  progress_->setVisible(true);
  message_->setStyleSheet(QString());
  tick_->start();
  computation_->start(request);
}

void ExplorerView::computation_finished(bool ok, const QString& message) {
  if (!ok) {
    fail(message);
    return;
  }
  tick_->stop();
  progress_->setVisible(false);
  run_button_->setEnabled(true);
  cancel_button_->setEnabled(false);
  message_->setText(
      tr("Computed in %1.")
          .arg(QString::fromStdString(format_duration(computation_->elapsed_seconds()))));
  emit finished(true, QString());
}

void ExplorerView::cancel() {
  if (!busy()) return;
  computation_->cancel();
  tick_->stop();
  progress_->setVisible(false);
  run_button_->setEnabled(true);
  cancel_button_->setEnabled(false);
  message_->setStyleSheet(QString());
  message_->setText(tr("Cancelled; the view shows what it showed before."));
  emit finished(false, tr("cancelled"));
}

void ExplorerView::fail(const QString& text) {
  tick_->stop();
  progress_->setVisible(false);
  run_button_->setEnabled(true);
  cancel_button_->setEnabled(false);
  message_->setStyleSheet(QStringLiteral("color: #d62728"));
  message_->setText(text);
  emit status_message(tr("Explorer: %1").arg(text));
  emit finished(false, text);
}

void ExplorerView::open_file(const QString& path) {
  read_file(path, [this](const ExplorerRead& read) {
    if (!read.first) {
      fail(read.second);
      return;
    }
    evidence_position_ = -1;
    install(read.first, /*computed=*/false);
    message_->setStyleSheet(QString());
    message_->setText(tr("Opened %1.").arg(QString::fromStdString(read.first->model)));
    emit finished(true, QString());
  });
}

void ExplorerView::read_file(const QString& path, std::function<void(const ExplorerRead&)> done) {
  ++pending_files_;
  auto* watcher = new QFutureWatcher<ExplorerRead>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, done] {
    const ExplorerRead read = watcher->result();
    watcher->deleteLater();
    --pending_files_;
    done(read);
    file_load_done();
  });
  watcher->setFuture(QtConcurrent::run([path]() -> ExplorerRead {
    try {
      return {std::make_shared<DocumentAttention>(read_document_attention(path.toStdString())),
              QString()};
    } catch (const std::exception& e) {
      return {nullptr, QString::fromUtf8(e.what())};
    }
  }));
}

void ExplorerView::file_load_done() {
  if (pending_files_ == 0 && loaded_due_) {
    loaded_due_ = false;
    emit loaded();
  }
}

}  // namespace lmk::widgets
