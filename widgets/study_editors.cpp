#include "widgets/study_editors.h"

#include <QBrush>
#include <QCheckBox>
#include <QColor>
#include <QCompleter>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHash>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QStyledItemDelegate>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/util/paper_defaults.h"

namespace lmk::widgets {

namespace {

QLineEdit* small_line(const QString& name, const QString& placeholder, int width) {
  auto* line = new QLineEdit;
  line->setObjectName(name);
  line->setPlaceholderText(placeholder);
  line->setMaximumWidth(width);
  return line;
}

// The key column's editor completes the keys a sweep may name.
class KeyDelegate : public QStyledItemDelegate {
 public:
  KeyDelegate(const QStringList& keys, QObject* parent)
      : QStyledItemDelegate(parent), keys_(keys) {}
  QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                        const QModelIndex& index) const override {
    QWidget* editor = QStyledItemDelegate::createEditor(parent, option, index);
    if (auto* line = qobject_cast<QLineEdit*>(editor)) {
      auto* completer = new QCompleter(keys_, line);
      completer->setCaseSensitivity(Qt::CaseInsensitive);
      completer->setFilterMode(Qt::MatchContains);
      line->setCompleter(completer);
    }
    return editor;
  }

 private:
  QStringList keys_;
};

enum SweepColumn { kKey, kValues, kGroup };

// A cell's text; a row being filled in may not have all its items yet.
QString cell(const QTableWidget* table, int row, int column) {
  const QTableWidgetItem* item = table->item(row, column);
  return item == nullptr ? QString() : item->text().trimmed();
}

}  // namespace

PoolingsEditor::PoolingsEditor(QWidget* parent) : QWidget(parent) {
  const QString base = QStringLiteral("finetune.poolings.");
  cls_ = new QCheckBox(tr("CLS"));
  cls_->setObjectName(base + QStringLiteral("cls"));
  mean_ = new QCheckBox(tr("Mean"));
  mean_->setObjectName(base + QStringLiteral("mean"));
  fixed_ = new QCheckBox(tr("LMK, fixed granularity g ="));
  fixed_->setObjectName(base + QStringLiteral("fixed"));
  fixed_g_ = small_line(base + QStringLiteral("fixed_g"), QString::number(paper::kGranularity), 70);
  variable_ = new QCheckBox(tr("LMK, variable g from"));
  variable_->setObjectName(base + QStringLiteral("variable"));
  variable_g_ = small_line(base + QStringLiteral("variable_g"),
                           QString::fromStdString(paper::train_granularities_text()), 220);
  variable_g_->setMinimumWidth(120);
  sentence_ = new QCheckBox(tr("LMK, after each sentence, chunks ≤"));
  sentence_->setObjectName(base + QStringLiteral("sentence"));
  sentence_g_ = small_line(base + QStringLiteral("sentence_g"), tr("none"), 70);
  others_ = new QLineEdit;
  others_->setObjectName(base + QStringLiteral("others"));
  others_->setPlaceholderText(tr("more, separated by spaces: multicls latent last mean_every_k"));

  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  auto* first = new QHBoxLayout;
  first->addWidget(cls_);
  first->addWidget(mean_);
  first->addStretch(1);
  grid->addLayout(first, 0, 0, 1, 2);
  grid->addWidget(fixed_, 1, 0);
  grid->addWidget(fixed_g_, 1, 1, Qt::AlignLeft);
  grid->addWidget(variable_, 2, 0);
  grid->addWidget(variable_g_, 2, 1, Qt::AlignLeft);
  grid->addWidget(sentence_, 3, 0);
  grid->addWidget(sentence_g_, 3, 1, Qt::AlignLeft);
  grid->addWidget(others_, 4, 0, 1, 2);
  grid->setColumnStretch(1, 1);

  for (QCheckBox* box : {cls_, mean_, fixed_, variable_, sentence_})
    connect(box, &QCheckBox::clicked, this, &PoolingsEditor::edited);
  for (QLineEdit* line : {fixed_g_, variable_g_, sentence_g_, others_})
    connect(line, &QLineEdit::textEdited, this, &PoolingsEditor::edited);
  // Typing a granularity means that layout.
  connect(fixed_g_, &QLineEdit::textEdited, fixed_, [this] { fixed_->setChecked(true); });
  connect(variable_g_, &QLineEdit::textEdited, variable_, [this] { variable_->setChecked(true); });
  connect(sentence_g_, &QLineEdit::textEdited, sentence_, [this] { sentence_->setChecked(true); });
}

void PoolingsEditor::set_value(const QVariant& poolings) {
  // The study's default when the key is absent.
  const QStringList entries =
      poolings.isValid()
          ? poolings.toStringList()
          : QStringList{QStringLiteral("cls"), QStringLiteral("mean"),
                        QString::fromStdString("lmk:" + paper::eval_landmarks_text()),
                        QString::fromStdString("lmk:" + paper::train_landmarks_text())};
  for (QCheckBox* box : {cls_, mean_, fixed_, variable_, sentence_}) box->setChecked(false);
  for (QLineEdit* line : {fixed_g_, variable_g_, sentence_g_}) line->clear();
  QStringList others;
  for (const QString& entry : entries) {
    if (entry == QLatin1String("cls") && !cls_->isChecked()) {
      cls_->setChecked(true);
    } else if (entry == QLatin1String("mean") && !mean_->isChecked()) {
      mean_->setChecked(true);
    } else if (entry.startsWith(QLatin1String("lmk:fixed:")) && !fixed_->isChecked()) {
      fixed_->setChecked(true);
      fixed_g_->setText(entry.mid(10));
    } else if ((entry == QLatin1String("lmk:variable") ||
                entry.startsWith(QLatin1String("lmk:variable:"))) &&
               !variable_->isChecked()) {
      variable_->setChecked(true);
      variable_g_->setText(entry.mid(13));
    } else if ((entry == QLatin1String("lmk:sentence") ||
                entry.startsWith(QLatin1String("lmk:sentence:"))) &&
               !sentence_->isChecked()) {
      sentence_->setChecked(true);
      sentence_g_->setText(entry.mid(13));
    } else {
      others << entry;
    }
  }
  others_->setText(others.join(QChar(' ')));
}

QVariantList PoolingsEditor::value() const {
  QVariantList out;
  if (cls_->isChecked()) out << QStringLiteral("cls");
  if (mean_->isChecked()) out << QStringLiteral("mean");
  if (fixed_->isChecked()) out << QStringLiteral("lmk:fixed:%1").arg(fixed_g_->text().trimmed());
  if (variable_->isChecked()) {
    const QString set = variable_g_->text().remove(QChar(' '));
    out << (set.isEmpty() ? QStringLiteral("lmk:variable") : QStringLiteral("lmk:variable:") + set);
  }
  if (sentence_->isChecked()) {
    const QString g = sentence_g_->text().trimmed();
    out << (g.isEmpty() ? QStringLiteral("lmk:sentence") : QStringLiteral("lmk:sentence:") + g);
  }
  for (const QString& entry : others_->text().split(QChar(' '), Qt::SkipEmptyParts)) out << entry;
  return out;
}

ChecklistEditor::ChecklistEditor(const QString& name, const QStringList& choices,
                                 const QStringList& defaults, QWidget* parent)
    : QWidget(parent), choices_(choices), defaults_(defaults) {
  // Two to a row: five in one row made the evaluation column too wide for a laptop, and three
  // of the longer names (needle-multiquery) still did.
  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  constexpr int kPerRow = 2;
  for (const QString& choice : choices) {
    auto* box = new QCheckBox(choice);
    box->setObjectName(name + QChar('.') + choice);
    const int index = static_cast<int>(boxes_.size());
    boxes_ << box;
    layout->addWidget(box, index / kPerRow, index % kPerRow);
    connect(box, &QCheckBox::clicked, this, &ChecklistEditor::edited);
  }
  layout->setColumnStretch(kPerRow, 1);
}

void ChecklistEditor::set_value(const QVariant& list) {
  const QStringList entries = list.isValid() ? list.toStringList() : defaults_;
  unknown_.clear();
  for (int i = 0; i < choices_.size(); ++i) boxes_[i]->setChecked(entries.contains(choices_[i]));
  for (const QString& entry : entries)
    if (!choices_.contains(entry)) unknown_ << entry;
}

QVariantList ChecklistEditor::value() const {
  QVariantList out;
  for (int i = 0; i < choices_.size(); ++i)
    if (boxes_[i]->isChecked()) out << choices_[i];
  for (const QString& entry : unknown_) out << entry;
  return out;
}

SweepEditor::SweepEditor(const QStringList& known_keys, QWidget* parent) : QWidget(parent) {
  table_ = new QTableWidget(0, 3);
  table_->setObjectName(QStringLiteral("sweep_table"));
  table_->setHorizontalHeaderLabels({tr("Key"), tr("Values"), tr("Zip")});
  table_->horizontalHeader()->setSectionResizeMode(kKey, QHeaderView::Interactive);
  table_->horizontalHeader()->setSectionResizeMode(kValues, QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(kGroup, QHeaderView::ResizeToContents);
  table_->setColumnWidth(kKey, 170);
  table_->verticalHeader()->hide();
  table_->setItemDelegateForColumn(kKey, new KeyDelegate(known_keys, table_));
  table_->setMinimumHeight(110);
  table_->horizontalHeaderItem(kValues)->setToolTip(
      tr("TOML values separated by commas: 16, 32, 64 — or arrays: [128, 512], [256, 1024]"));
  table_->horizontalHeaderItem(kGroup)->setToolTip(
      tr("Rows with the same zip group advance together ([[sweep.zip]]); empty: an axis of "
         "its own"));

  auto* add = new QPushButton(tr("Add axis"));
  auto* remove = new QPushButton(tr("Remove"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add);
  buttons->addWidget(remove);
  buttons->addStretch(1);
  auto* note =
      new QLabel(tr("Each cell of the grid is one configuration; steps that do not read "
                    "a swept key are shared by the cells."));
  note->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(note);
  layout->addWidget(table_);
  layout->addLayout(buttons);

  connect(add, &QPushButton::clicked, this, [this] {
    add_row(QString(), QString(), QString());
    table_->editItem(table_->item(table_->rowCount() - 1, kKey));
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    const int row = table_->currentRow();
    if (row < 0) return;
    table_->removeRow(row);
    emit edited();
  });
  connect(table_, &QTableWidget::itemChanged, this, [this] {
    if (!filling_) emit edited();
  });
}

void SweepEditor::add_row(const QString& key, const QString& values, const QString& group) {
  const bool was_filling = filling_;
  filling_ = true;
  const int row = table_->rowCount();
  table_->insertRow(row);
  table_->setItem(row, kKey, new QTableWidgetItem(key));
  table_->setItem(row, kValues, new QTableWidgetItem(values));
  table_->setItem(row, kGroup, new QTableWidgetItem(group));
  filling_ = was_filling;
}

void SweepEditor::set_axes(const QList<StudyDocument::SweepAxis>& axes) {
  filling_ = true;
  table_->setRowCount(0);
  int zip = 0;
  for (const StudyDocument::SweepAxis& axis : axes) {
    const QString group = axis.zip ? QString::number(++zip) : QString();
    for (int k = 0; k < axis.keys.size(); ++k) {
      QStringList values;
      for (const QVariant& v : axis.values.value(k)) values << StudyDocument::value_text(v);
      add_row(axis.keys[k], values.join(QStringLiteral(", ")), group);
    }
  }
  filling_ = false;
}

QList<StudyDocument::SweepAxis> SweepEditor::axes() const {
  QList<StudyDocument::SweepAxis> out;
  QHash<QString, int> zip_of_group;
  for (int row = 0; row < table_->rowCount(); ++row) {
    const QString key = cell(table_, row, kKey);
    if (key.isEmpty()) continue;
    const QString text = cell(table_, row, kValues);
    const QVariant parsed = StudyDocument::parse_value(QStringLiteral("[%1]").arg(text));
    // Text that is not TOML goes in as it is, so lmk's check names the key.
    const QVariantList values = parsed.isValid() ? parsed.toList() : QVariantList{text};
    const QString group = cell(table_, row, kGroup);
    if (group.isEmpty()) {
      StudyDocument::SweepAxis axis;
      axis.keys << key;
      axis.values << values;
      out << axis;
      continue;
    }
    if (!zip_of_group.contains(group)) {
      StudyDocument::SweepAxis axis;
      axis.zip = true;
      zip_of_group.insert(group, static_cast<int>(out.size()));
      out << axis;
    }
    StudyDocument::SweepAxis& axis = out[zip_of_group.value(group)];
    axis.keys << key;
    axis.values << values;
  }
  return out;
}

void SweepEditor::mark_key(const QString& key, const QString& why) {
  for (int row = 0; row < table_->rowCount(); ++row) {
    const bool marked = !key.isEmpty() && cell(table_, row, kKey) == key;
    for (int column = 0; column < table_->columnCount(); ++column) {
      QTableWidgetItem* item = table_->item(row, column);
      if (item == nullptr) continue;
      const bool was_filling = filling_;
      filling_ = true;  // a mark is no edit
      item->setBackground(marked ? QBrush(QColor(0xf8, 0xd7, 0xda)) : QBrush());
      item->setToolTip(marked ? why : QString());
      filling_ = was_filling;
    }
  }
}

QString SweepEditor::text() const {
  QStringList rows;
  for (int row = 0; row < table_->rowCount(); ++row)
    rows << QStringLiteral("%1 = %2 [%3]")
                .arg(cell(table_, row, kKey), cell(table_, row, kValues),
                     cell(table_, row, kGroup));
  return rows.join(QChar('\n'));
}

}  // namespace lmk::widgets
