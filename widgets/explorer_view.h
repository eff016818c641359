#pragma once

// The attention explorer: one document and one model, token by token. Pick a model folder (or
// an evaluation run of the open store, which brings its pooling and its dataset's test
// queries), a pooling, a document (a file, pasted text, or a query's target document) and a
// query; the view runs `lmk attention --explore` as a child process (the GUI keeps no ML code),
// with progress and cancel, and shows:
// - the text coloured by the attention of the pooling tokens (all of them, one landmark or a
//   range), inserted tokens as boxes, pooling tokens outlined, the query's evidence framed;
// - an overview strip of the whole document per pooling (CLS and LMK on one scale), click to
//   jump; the part on screen framed;
// - a layer × head grid of position profiles (global layers marked), click to switch;
// - with a query, each pooling token's similarity to it along the document, and the target's
//   rank in the store's evaluation of that run; with a token selected, which pooling tokens
//   attend to it.
// Files of `lmk attention --explore` open directly (File… button, lmk-workbench --explore).
//
// The view is split by concern: its controls and what it shows (explorer_view.cpp,
// explorer_view_show.cpp), the store's evaluation runs it picks from (explorer_view_store.cpp,
// reads through core/store), the child process (ExplorerComputation, explorer_computation.h),
// the panels that own its controls — the request (ExplorerRequestPanel, explorer_request.h), the
// status row (ExplorerStatusRow, explorer_status.h) and the choices of what the picture shows
// (ExplorerChoicesPanel, explorer_choices.h) —, the panels and plots it draws (explorer_panels.h,
// explorer_text.h, explorer_plots.h), and export (plot_export.h).

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/eval/document_attention.h"
#include "widgets/explorer_computation.h"
#include "widgets/explorer_data.h"
#include "widgets/store_view.h"

class QScrollArea;
class QSplitter;
class QTimer;

namespace lmk::widgets {

class ExplorerChoicesPanel;
class ExplorerPlots;
class ExplorerRequestPanel;
class ExplorerStatusRow;
class LayerHeadGrid;
class ColourLegend;
class OverviewStrip;
class TokenTextView;

class ExplorerView : public StoreView {
  Q_OBJECT
 public:
  explicit ExplorerView(QWidget* parent = nullptr);
  ~ExplorerView() override;

  QString title() const override { return tr("Explorer"); }
  // Lists the store's evaluation runs (model, pooling, dataset) to pick from.
  void set_store(const QString& db_path) override;
  // Loads the store again; emits loaded() once files being opened are shown too.
  void refresh() override;

  // The request the controls describe.
  ExplorerRequest request() const;
  void set_request(const ExplorerRequest& request);
  // Runs the request (the controls' when none is given); finished() when every pooling is shown
  // or on the first error. A request the view can already refuse (no model, no text) finishes at
  // once with the reason.
  void compute();
  void compute(const ExplorerRequest& request);
  // Stops the running computation; what is shown stays.
  void cancel();
  bool busy() const;
  // Opens a file of lmk attention --explore (off the GUI thread); document_shown() once shown,
  // finished(false, reason) when it cannot be read.
  void open_file(const QString& path);

  // What is shown.
  int result_count() const { return static_cast<int>(results_.size()); }
  const DocumentAttention& result(int index) const { return *results_[static_cast<size_t>(index)]; }
  int shown_result() const { return shown_; }
  void show_result(int index);
  const ExplorerSelection& selection() const { return selection_; }
  void set_layer_head(int64_t layer, int64_t head);
  // Pooling tokens first..last (indices into pooling_positions; -1: all).
  void set_rows(int64_t first, int64_t last);
  void set_log_scale(bool log);
  void set_skip_sink(bool skip);
  // Selects an input position: the token plot shows which pooling tokens attend to it.
  void select_position(int64_t position);
  // Scrolls the text to a fraction of the document (what a click on the overview does).
  void jump_to_fraction(double fraction);
  // The message line (errors, notices such as truncation) and the status of the computation.
  QString message() const;
  QString notice() const;
  // The evidence's byte range in the shown document ({-1, -1}: none).
  std::pair<int64_t, int64_t> evidence() const { return evidence_; }
  // The similarity curve as plotted: x (fraction of the text) and y per pooling token.
  std::vector<std::pair<double, double>> similarity_points() const;
  // The "attention to the selected token" curve as plotted (y per pooling token).
  std::vector<double> token_attention_points() const;
  QString rank_text() const;
  // The file the last computation's first pooling was read from (in the view's scratch folder,
  // which goes with the view); empty before one.
  const QString& computed_file() const { return computation_->first_file(); }

  TokenTextView* text_view() const { return text_; }
  ColourLegend* colour_legend() const { return legend_; }
  OverviewStrip* overview() const { return overview_; }
  LayerHeadGrid* grid() const { return grid_; }

  // Writes the view (.png, .pdf, .svg) or the numbers of the shown result (.csv); throws
  // std::runtime_error naming the path.
  void export_to(const QString& path);

 signals:
  // A computation or a file open ended: ok, or the reason it did not.
  void finished(bool ok, const QString& message);
  // A new result is on screen.
  void document_shown();

 private:
  // The panels and the picture, each wiring its own controls.
  void build_controls();
  void build_progress_tick();
  QWidget* build_picture();
  QScrollArea* build_choices(QSplitter* splitter);
  void fail(const QString& message);
  // Shows a result: one of a computation replaces what its computation did not compute; a file
  // joins the results of the same text and model.
  void install(std::shared_ptr<DocumentAttention> d, bool computed);
  void redraw();
  void redraw_overview();
  void redraw_plots();
  void update_controls_for_result();
  void update_window();
  void look_up_rank();
  // Reads an explorer file off the GUI thread; done() on the GUI thread (counted for loaded()).
  void read_file(const QString& path, std::function<void(const ExplorerRead&)> done);
  // The computation ended (ExplorerComputation::on_finished).
  void computation_finished(bool ok, const QString& message);
  void file_load_done();
  void export_with_dialog();

  // The panels that own the controls.
  ExplorerRequestPanel* request_ = nullptr;
  ExplorerStatusRow* status_ = nullptr;
  // What the picture shows.
  ExplorerChoicesPanel* choices_ = nullptr;
  // The picture.
  TokenTextView* text_ = nullptr;
  OverviewStrip* overview_ = nullptr;
  ColourLegend* legend_ = nullptr;  // the text's colour key
  LayerHeadGrid* grid_ = nullptr;
  ExplorerPlots* plots_ = nullptr;
  QWidget* picture_ = nullptr;

  // State.
  std::vector<std::shared_ptr<DocumentAttention>> results_;
  bool results_replaced_ = false;  // the running computation's first result is shown
  int shown_ = -1;
  ExplorerSelection selection_;
  int64_t selected_position_ = -1;
  std::pair<int64_t, int64_t> evidence_{-1, -1};
  double evidence_position_ = -1;
  QString rank_text_;
  // The running computation and its progress line.
  ExplorerComputation* computation_ = nullptr;
  QTimer* tick_ = nullptr;
  int pending_files_ = 0;
  bool loaded_due_ = false;
};

}  // namespace lmk::widgets
