#include "widgets/plot_export.h"

#include <qcustomplot.h>
#include <QAbstractItemModel>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMessageBox>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSettings>
#include <QSvgGenerator>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "core/util/text_table.h"

namespace lmk::widgets {
namespace {

[[noreturn]] void fail(const QString& path, const QString& reason) {
  throw std::runtime_error(QStringLiteral("%1: %2").arg(path, reason).toStdString());
}

void write_svg(QCustomPlot* plot, const QString& path, int width, int height) {
  const int w = width > 0 ? width : plot->width();
  const int h = height > 0 ? height : plot->height();
  QSvgGenerator generator;
  generator.setFileName(path);
  generator.setSize(QSize(w, h));
  generator.setViewBox(QRect(0, 0, w, h));
  generator.setTitle(QFileInfo(path).completeBaseName());
  generator.setDescription(QStringLiteral("Landmark Workbench plot"));
  QCPPainter painter;
  if (!painter.begin(&generator)) fail(path, QStringLiteral("cannot write the SVG file"));
  // As QCustomPlot's own PDF export: vector output, no cached pixmaps of layers.
  painter.setMode(QCPPainter::pmVectorized);
  painter.setMode(QCPPainter::pmNoCaching);
  plot->toPainter(&painter, w, h);
  painter.end();
  if (QFileInfo(path).size() <= 0) fail(path, QStringLiteral("cannot write the SVG file"));
}

// One cell's text as one line (tab-separated lines cannot hold tabs or line breaks).
QString single_line(QString text) {
  text.replace(QLatin1Char('\t'), QLatin1Char(' '));
  text.replace(QLatin1String("\r\n"), QLatin1String(" "));
  text.replace(QLatin1Char('\n'), QLatin1Char(' '));
  text.replace(QLatin1Char('\r'), QLatin1Char(' '));
  return text;
}

}  // namespace

void export_plot(QCustomPlot* plot, const QString& path, int width, int height) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  bool written = false;
  if (suffix == QLatin1String("png")) {
    written = plot->savePng(path, width, height);
  } else if (suffix == QLatin1String("pdf")) {
    written = plot->savePdf(path, width, height);
  } else if (suffix == QLatin1String("svg")) {
    write_svg(plot, path, width, height);
    written = true;
  } else {
    fail(path, QStringLiteral("unknown plot format '%1' (use .png, .pdf or .svg)").arg(suffix));
  }
  if (!written) fail(path, QStringLiteral("cannot write the %1 file").arg(suffix.toUpper()));
}

void export_widget(QWidget* widget, const QString& path) {
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == QLatin1String("png")) {
    if (!widget->grab().save(path, "PNG")) fail(path, QStringLiteral("cannot write the PNG file"));
    return;
  }
  if (suffix == QLatin1String("pdf")) {
    QPdfWriter writer(path);
    writer.setTitle(QFileInfo(path).completeBaseName());
    writer.setCreator(QStringLiteral("Landmark Workbench"));
    writer.setPageSize(QPageSize(widget->size(), QPageSize::Point));
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    writer.setResolution(72);  // one widget pixel per point
    QPainter painter;
    if (!painter.begin(&writer)) fail(path, QStringLiteral("cannot write the PDF file"));
    widget->render(&painter);
    painter.end();
  } else if (suffix == QLatin1String("svg")) {
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(widget->size());
    generator.setViewBox(widget->rect());
    generator.setTitle(QFileInfo(path).completeBaseName());
    generator.setDescription(QStringLiteral("Landmark Workbench view"));
    QPainter painter;
    if (!painter.begin(&generator)) fail(path, QStringLiteral("cannot write the SVG file"));
    widget->render(&painter);
    painter.end();
  } else {
    fail(path, QStringLiteral("unknown image format '%1' (use .png, .pdf or .svg)").arg(suffix));
  }
  if (QFileInfo(path).size() <= 0)
    fail(path, QStringLiteral("cannot write the %1 file").arg(suffix.toUpper()));
}

QString plot_file_filters() {
  return QObject::tr("PNG image (*.png);;PDF document (*.pdf);;SVG image (*.svg)");
}

QString export_plot_with_dialog(QCustomPlot* plot, QWidget* parent, const QString& suggested_name) {
  QSettings settings;
  const QString folder =
      settings.value(QStringLiteral("export/last_dir"), QDir::homePath()).toString();
  QString filter;
  QString path = QFileDialog::getSaveFileName(parent, QObject::tr("Export plot"),
                                              QDir(folder).filePath(suggested_name + ".png"),
                                              plot_file_filters(), &filter);
  if (path.isEmpty()) return {};
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix != QLatin1String("png") && suffix != QLatin1String("pdf") &&
      suffix != QLatin1String("svg")) {
    // No suffix typed: the chosen filter's, e.g. "PDF document (*.pdf)" -> ".pdf".
    const int star = filter.indexOf(QLatin1String("*."));
    path += star >= 0 ? filter.mid(star + 1, 4) : QStringLiteral(".png");
  }
  settings.setValue(QStringLiteral("export/last_dir"), QFileInfo(path).absolutePath());
  try {
    export_plot(plot, path);
  } catch (const std::exception& e) {
    QMessageBox::warning(parent, QObject::tr("Export plot"), QString::fromUtf8(e.what()));
    return {};
  }
  return path;
}

QString csv_field(const QString& text) {
  return QString::fromStdString(lmk::csv_field(text.toStdString()));
}

QString csv_cell_text(const QModelIndex& index) {
  const QVariant value = index.data(Qt::EditRole);
  if (!value.isValid()) return index.data(Qt::DisplayRole).toString();
  if (value.isNull()) return QString();
  if (value.typeId() == QMetaType::Double || value.typeId() == QMetaType::Float)
    return QString::number(value.toDouble(), 'g', QLocale::FloatingPointShortest);
  return value.toString();
}

QString header_text(const QAbstractItemModel& model, int column) {
  // A header shown over several lines (the pivot's) gives its one-line text as its edit role.
  const QVariant plain = model.headerData(column, Qt::Horizontal, Qt::EditRole);
  return plain.isValid() ? plain.toString()
                         : model.headerData(column, Qt::Horizontal, Qt::DisplayRole).toString();
}

QString table_as_csv(const QAbstractItemModel& model) {
  // A lazy model holds only its first rows until asked for more; fetching fills its cache and
  // changes nothing a view would see as an edit.
  auto& fetching = const_cast<QAbstractItemModel&>(model);
  while (fetching.canFetchMore(QModelIndex())) fetching.fetchMore(QModelIndex());
  const int columns = model.columnCount();
  QString out;
  QStringList fields;
  for (int c = 0; c < columns; ++c) fields << csv_field(header_text(model, c));
  out += fields.join(QLatin1Char(',')) + QLatin1String("\r\n");
  for (int r = 0; r < model.rowCount(); ++r) {
    fields.clear();
    for (int c = 0; c < columns; ++c) fields << csv_field(csv_cell_text(model.index(r, c)));
    out += fields.join(QLatin1Char(',')) + QLatin1String("\r\n");
  }
  return out;
}

void write_text_file(const QString& path, const QString& text) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) fail(path, file.errorString());
  const QByteArray bytes = text.toUtf8();
  if (file.write(bytes) != bytes.size() || !file.commit()) fail(path, file.errorString());
}

void export_table_csv(const QAbstractItemModel& model, const QString& path) {
  write_text_file(path, table_as_csv(model));
}

QString table_as_tsv(const QAbstractItemModel& model, const QModelIndexList& selection,
                     bool with_header) {
  std::set<int> columns;
  std::map<int, std::set<int>> rows;  // row -> its selected columns
  for (const QModelIndex& index : selection) {
    if (!index.isValid() || index.model() != &model) continue;
    columns.insert(index.column());
    rows[index.row()].insert(index.column());
  }
  if (rows.empty()) return {};
  QStringList lines;
  QStringList cells;
  if (with_header) {
    for (int c : columns) cells << single_line(header_text(model, c));
    lines << cells.join(QLatin1Char('\t'));
  }
  for (const auto& [row, selected] : rows) {
    cells.clear();
    for (int c : columns)
      cells << (selected.count(c)
                    ? single_line(model.data(model.index(row, c), Qt::DisplayRole).toString())
                    : QString());
    lines << cells.join(QLatin1Char('\t'));
  }
  return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

}  // namespace lmk::widgets
