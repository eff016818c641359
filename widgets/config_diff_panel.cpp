#include "widgets/config_diff_panel.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "widgets/results_table.h"

namespace lmk::widgets {

ConfigDiffPanel::ConfigDiffPanel(QWidget* parent) : QWidget(parent) {
  model_ = new ConfigDiffModel(this);
  table_ = make_results_table(model_, this);
  all_keys_ = new QCheckBox(tr("Show all keys"), this);
  note_ = new QLabel(this);
  auto* bar = new QHBoxLayout;
  bar->addWidget(all_keys_);
  bar->addWidget(note_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(table_, 1);
  connect(all_keys_, &QCheckBox::toggled, model_, &ConfigDiffModel::set_show_all);
}

void ConfigDiffPanel::show_hint() {
  model_->set_diff(ConfigDiff());
  note_->setText(
      tr("Select two or more runs in the Runs tab (Ctrl- or Shift-click) to compare their "
         "configs; differing values are highlighted"));
}

void ConfigDiffPanel::show_pending(int runs) {
  note_->setText(tr("Comparing %1 runs…").arg(runs));
}

void ConfigDiffPanel::show_diff(ConfigDiff diff, int selected) {
  int differing = 0;
  for (bool differs : diff.differs) differing += differs ? 1 : 0;
  QString note = tr("%1 runs: %2 of %3 keys differ (highlighted)")
                     .arg(diff.run_ids.size())
                     .arg(differing)
                     .arg(diff.keys.size());
  if (selected > diff.run_ids.size())
    note += tr("; the first %1 of the %2 selected runs").arg(kMaxRuns).arg(selected);
  note_->setText(note);
  model_->set_diff(std::move(diff));
  table_->resizeColumnsToContents();
}

}  // namespace lmk::widgets
