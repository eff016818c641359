#include "widgets/explorer_view.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QScrollArea>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <cmath>
#include <stdexcept>

#include "core/util/progress.h"
#include "widgets/explorer_choices.h"
#include "widgets/explorer_panels.h"
#include "widgets/explorer_plots.h"
#include "widgets/explorer_request.h"
#include "widgets/explorer_status.h"
#include "widgets/explorer_text.h"
#include "widgets/plot_export.h"
#include "widgets/plot_view.h"

namespace lmk::widgets {
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
  request_ = new ExplorerRequestPanel(this);
  status_ = new ExplorerStatusRow(this);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(request_);
  layout->addWidget(status_);
  layout->addWidget(build_picture(), 1);
  build_progress_tick();
  redraw();

  connect(request_, &ExplorerRequestPanel::compute_clicked, this, [this] { compute(); });
  connect(request_, &ExplorerRequestPanel::cancel_clicked, this, &ExplorerView::cancel);
  connect(request_, &ExplorerRequestPanel::open_clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open explorer file"), QString(), tr("Explorer files (*.lmkattn);;All files (*)"));
    if (!path.isEmpty()) open_file(path);
  });
  connect(request_, &ExplorerRequestPanel::export_clicked, this, &ExplorerView::export_with_dialog);
  connect(request_, &ExplorerRequestPanel::problem, status_, &ExplorerStatusRow::set_message_text);
}

// A computation's progress: its line every 500 ms.
void ExplorerView::build_progress_tick() {
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
      status_->show_progress(event->done, event->total);
      text += tr(" · layer %1 of %2").arg(event->done).arg(event->total);
      if (event->eta_s >= 0)
        text += tr(" · about %1 left").arg(QString::fromStdString(format_duration(event->eta_s)));
    } else if (computation_->reading()) {
      text = tr("reading the result…");
    }
    status_->set_message_text(text);
  });
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
  choices_ = new ExplorerChoicesPanel(right);
  right_layout->addWidget(choices_);
  grid_ = new LayerHeadGrid(right);
  auto* grid_scroll = new QScrollArea(right);
  grid_scroll->setWidget(grid_);
  grid_scroll->setWidgetResizable(false);
  grid_scroll->setMinimumHeight(100);
  right_layout->addWidget(grid_scroll, 1);
  plots_ = new ExplorerPlots(right);
  right_layout->addWidget(plots_, 2);
  right_scroll->setWidget(right);

  connect(choices_, &ExplorerChoicesPanel::result_chosen, this, &ExplorerView::show_result);
  connect(choices_, &ExplorerChoicesPanel::layer_head_chosen, this, &ExplorerView::set_layer_head);
  connect(choices_, &ExplorerChoicesPanel::rows_chosen, this, &ExplorerView::set_rows);
  connect(choices_, &ExplorerChoicesPanel::log_scale_changed, this, &ExplorerView::set_log_scale);
  connect(choices_, &ExplorerChoicesPanel::skip_sink_changed, this, &ExplorerView::set_skip_sink);
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
  return request_->request();
}

void ExplorerView::set_request(const ExplorerRequest& r) {
  request_->set_request(r);
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
  else if (!request_->knows_pooling(request.pooling))
    refusal = tr("Unknown pooling '%1'.").arg(request.pooling);
  if (!refusal.isEmpty()) {
    fail(refusal);
    return;
  }
  evidence_position_ = request.evidence_position;
  results_replaced_ = false;
  request_->set_busy(true);
  status_->start();
  tick_->start();
  computation_->start(request);
}

void ExplorerView::computation_finished(bool ok, const QString& message) {
  if (!ok) {
    fail(message);
    return;
  }
  tick_->stop();
  status_->stop();
  request_->set_busy(false);
  status_->set_message_text(
      tr("Computed in %1.")
          .arg(QString::fromStdString(format_duration(computation_->elapsed_seconds()))));
  emit finished(true, QString());
}

void ExplorerView::cancel() {
  if (!busy()) return;
  computation_->cancel();
  tick_->stop();
  status_->stop();
  request_->set_busy(false);
  status_->show_message(tr("Cancelled; the view shows what it showed before."));
  emit finished(false, tr("cancelled"));
}

void ExplorerView::fail(const QString& text) {
  tick_->stop();
  status_->stop();
  request_->set_busy(false);
  status_->show_message(text, /*error=*/true);
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
    status_->show_message(tr("Opened %1.").arg(QString::fromStdString(read.first->model)));
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
