#pragma once

// The tables of the results view (runs, pivot, config diff): rows one line high, extended
// selection, alternating colours, columns no wider than kMaxColumnWidth (the full text is in the
// tooltip), and Ctrl+C / the context menu copying the selection as tab-separated text.

class QAbstractItemModel;
class QTableView;
class QWidget;

namespace lmk::widgets {

// Columns sized to their contents stop here (paths).
constexpr int kMaxColumnWidth = 480;

QTableView* make_results_table(QAbstractItemModel* model, QWidget* parent);

}  // namespace lmk::widgets
