#pragma once

// Writing what the workbench shows to files: plots as PNG / PDF / SVG, tables as CSV, and a
// selection of a table as tab-separated text for the clipboard. Every plot and table view uses
// these, so the formats are the same everywhere.

#include <QModelIndexList>
#include <QString>

class QAbstractItemModel;
class QCustomPlot;
class QWidget;

namespace lmk::widgets {

// Writes `plot` to `path` in the format its suffix names (.png, .pdf or .svg, any case), at
// width × height pixels (0: the plot's current size). Throws std::runtime_error naming the path
// for another suffix or when the file cannot be written.
void export_plot(QCustomPlot* plot, const QString& path, int width = 0, int height = 0);

// Writes what `widget` shows (with its children) to `path`: .png as pixels, .pdf and .svg as
// vector drawings where the widgets paint vectors (text stays text). Throws std::runtime_error
// naming the path for another suffix or when the file cannot be written.
void export_widget(QWidget* widget, const QString& path);

// The file-dialog filters of export_plot's formats ("PNG image (*.png);;…").
QString plot_file_filters();

// Asks for a file name (starting with `suggested_name` in the last export folder) and exports
// `plot` there; a failure is shown in a message box. Returns the path written, or empty.
QString export_plot_with_dialog(QCustomPlot* plot, QWidget* parent, const QString& suggested_name);

// One CSV field (RFC 4180): quoted when it holds a comma, a double quote, CR or LF, with its
// double quotes doubled.
QString csv_field(const QString& text);

// The text a cell has in a CSV file: its EditRole value — the number itself, unrounded, without
// the marks the display adds ("0.2739 *") — where it has one, else its DisplayRole text. A
// floating-point number is written with the fewest digits that read back as the same double.
QString csv_cell_text(const QModelIndex& index);

// A column's header as one line of text (its edit role when it has one, else its display role).
QString header_text(const QAbstractItemModel& model, int column);

// The whole model as CSV (RFC 4180, CRLF line ends): a header row from headerData, then every
// cell's csv_cell_text. Fetches what a lazy model (the runs table) has not fetched yet.
QString table_as_csv(const QAbstractItemModel& model);

// Writes `text` to `path` (UTF-8, atomically); throws std::runtime_error naming the path when it
// cannot.
void write_text_file(const QString& path, const QString& text);

// Writes table_as_csv(model) to `path` (UTF-8); throws std::runtime_error naming the path when
// it cannot.
void export_table_csv(const QAbstractItemModel& model, const QString& path);

// The selected cells as tab-separated lines, for pasting into a spreadsheet: one line per
// selected row and one column per selected column (model order), cells outside the selection
// empty, tabs and line breaks inside cells replaced by spaces. The cells' DisplayRole text (what
// the user sees and copies). With `with_header`, the first line holds the selected columns'
// headers. Empty when nothing is selected.
QString table_as_tsv(const QAbstractItemModel& model, const QModelIndexList& selection,
                     bool with_header = true);

}  // namespace lmk::widgets
