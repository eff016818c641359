#include "widgets/results_table.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QTableView>

#include "widgets/plot_export.h"

namespace lmk::widgets {

QTableView* make_results_table(QAbstractItemModel* model, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setModel(model);
  table->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table->setAlternatingRowColors(true);
  table->setWordWrap(false);
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setHighlightSections(false);
  table->horizontalHeader()->setMaximumSectionSize(kMaxColumnWidth);
  // Ctrl+C and the context menu copy the selection as tab-separated text.
  auto* copy = new QAction(QObject::tr("Copy"), table);
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetShortcut);
  QObject::connect(copy, &QAction::triggered, table, [table] {
    const QString text = table_as_tsv(*table->model(), table->selectionModel()->selectedIndexes());
    if (!text.isEmpty()) QApplication::clipboard()->setText(text);
  });
  table->addAction(copy);
  table->setContextMenuPolicy(Qt::ActionsContextMenu);
  return table;
}

}  // namespace lmk::widgets
