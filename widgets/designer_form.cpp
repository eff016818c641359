// DesignerView's form (widgets/designer_view.h): its fields built, filled from the document, and
// their edits written back to it.
#include "widgets/designer_form.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFont>
#include <QFontDatabase>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QVBoxLayout>

#include <map>
#include <set>
#include <string>

#include "core/jobs/study.h"
#include "widgets/designer_view.h"
#include "widgets/study_editors.h"

namespace lmk::widgets {

namespace designer_form {

QStringList to_qt(const std::vector<std::string>& values) {
  QStringList out;
  for (const std::string& value : values) out << QString::fromStdString(value);
  return out;
}

}  // namespace designer_form

using designer_form::to_qt;

namespace {

// The keys a sweep may name: the study config's, less [slurm] and the study's name, folder and
// store (which every cell shares).
QStringList sweepable_keys() {
  QStringList keys;
  for (const auto& [section, names] : study_config_keys()) {
    if (section == "slurm") continue;
    for (const std::string& name : names)
      if (section != "study" || (name != "name" && name != "dir" && name != "db"))
        keys << QString::fromStdString(section + "." + name);
  }
  return keys;
}

// A value as one line of the form: lists comma-separated, strings without quotes.
QString display_text(const QVariant& value) {
  if (!value.isValid()) return {};
  if (value.typeId() == QMetaType::QString) return value.toString();
  if (value.typeId() == QMetaType::QVariantList) {
    QStringList parts;
    for (const QVariant& element : value.toList()) parts << display_text(element);
    return parts.join(QStringLiteral(", "));
  }
  return StudyDocument::value_text(value);
}

QGroupBox* group(const QString& title) {
  auto* box = new QGroupBox(title);
  auto* grid = new QGridLayout(box);
  grid->setColumnStretch(1, 1);
  return box;
}

QGridLayout* grid_of(QGroupBox* box) {
  return static_cast<QGridLayout*>(box->layout());
}

}  // namespace

QWidget* DesignerView::build_form() {
  // Every field's label, hint and default come from the core's table (study_settings); here is
  // only where each section goes and the rows that are not one key.
  QGroupBox* study = group(tr("Study"));
  add_settings(grid_of(study), "study", 0);

  QGroupBox* tokenizer = group(tr("Tokenizer"));
  add_settings(grid_of(tokenizer), "tokenizer", 0);
  auto* tokenizer_note = new QLabel(tr("A sentencepiece tokenizer trained on the corpus."));
  tokenizer_note->setWordWrap(true);
  grid_of(tokenizer)->addWidget(tokenizer_note, 1, 0, 1, 3);

  QGroupBox* model = group(tr("Model"));
  model_preset_ = new QRadioButton(tr("Preset"));
  model_preset_->setChecked(true);
  model_folder_ = new QRadioButton(tr("Shape of a Hugging Face model"));
  auto* source = new QButtonGroup(model);
  source->addButton(model_preset_);
  source->addButton(model_folder_);
  auto* choice = new QHBoxLayout;
  choice->addWidget(model_preset_);
  choice->addWidget(model_folder_);
  choice->addStretch(1);
  grid_of(model)->addLayout(choice, 0, 0, 1, 3);
  add_settings(grid_of(model), "model", 1, {"preset"});
  model_folder_path_ = new QLineEdit;
  model_folder_path_->setObjectName(QStringLiteral("model.folder"));
  model_folder_path_->setReadOnly(true);
  model_folder_path_->setPlaceholderText(tr("a folder with config.json"));
  auto* browse_model = new QPushButton(tr("Browse…"));
  auto* folder_label = new QLabel(tr("Folder"));
  grid_of(model)->addWidget(folder_label, 2, 0);
  grid_of(model)->addWidget(model_folder_path_, 2, 1);
  grid_of(model)->addWidget(browse_model, 2, 2);
  model_config_ = new QPlainTextEdit;
  model_config_->setObjectName(QStringLiteral("model.config_json"));
  model_config_->setReadOnly(true);
  model_config_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  model_config_->setMaximumHeight(140);
  model_config_->setToolTip(
      tr("The folder's config.json (read only). The study trains a model "
         "of this shape from scratch (lmk model init)."));
  grid_of(model)->addWidget(model_config_, 3, 0, 1, 3);
  add_settings(grid_of(model), "model", 4, {}, {"preset"});
  auto show_source = [this, folder_label, browse_model] {
    const bool folder = model_folder_->isChecked();
    for (QWidget* w :
         {static_cast<QWidget*>(folder_label), static_cast<QWidget*>(browse_model),
          static_cast<QWidget*>(model_folder_path_), static_cast<QWidget*>(model_config_)})
      w->setVisible(folder);
  };
  connect(model_folder_, &QRadioButton::toggled, this, show_source);
  connect(browse_model, &QPushButton::clicked, this, &DesignerView::choose_model_folder);
  show_source();

  QGroupBox* pretrain = group(tr("Pretraining (MLM)"));
  add_settings(grid_of(pretrain), "pretrain", 0);

  QGroupBox* finetune = group(tr("Fine-tuning (contrastive)"));
  add_settings(grid_of(finetune), "finetune", 0, {"poolings"});
  auto* granularity_note = new QLabel(
      tr("g: landmark granularity at training (tokens between landmarks); at evaluation, "
         "Evaluation → Granularity."));
  granularity_note->setWordWrap(true);
  grid_of(finetune)->addWidget(granularity_note, 1, 1, 1, 2);
  add_settings(grid_of(finetune), "finetune", 2, {}, {"poolings"});

  QGroupBox* eval = group(tr("Evaluation"));
  add_settings(grid_of(eval), "eval", 0);

  QGroupBox* sweep = group(tr("Sweep"));
  sweep_ = new SweepEditor(sweepable_keys());
  grid_of(sweep)->addWidget(sweep_, 0, 0, 1, 3);
  connect(sweep_, &SweepEditor::edited, this, &DesignerView::apply_sweep);

  // Each group's rows stay at its top when the column is taller.
  for (QGroupBox* box : {study, tokenizer, model, pretrain, finetune, eval})
    grid_of(box)->setRowStretch(grid_of(box)->rowCount(), 1);
  // Columns, each its own stack: in one grid the rows were shared across columns, so the
  // pretraining box took the study box's height and the form did not fit 1440 x 900 (the first
  // window on a 1600 x 1000 screen) without scrollbars. Three where they fit, else two (a
  // 1366 x 768 screen): the form then scrolls down, never sideways (arrange_form).
  form_layouts_ = {{{study, tokenizer, model}, {pretrain, finetune}, {eval, sweep}},
                   {{study, tokenizer, model, pretrain}, {finetune, eval, sweep}}};
  form_ = new QWidget;
  new QHBoxLayout(form_);
  arrange_form(0);
  return form_;
}

void DesignerView::arrange_form(int layout) {
  if (layout == form_layout_) return;
  form_layout_ = layout;
  auto* columns = static_cast<QHBoxLayout*>(form_->layout());
  while (QLayoutItem* item = columns->takeAt(0)) {
    if (QLayout* column = item->layout()) {
      while (QLayoutItem* inner = column->takeAt(0)) delete inner;  // the boxes stay
    }
    delete item;
  }
  QGroupBox* last = form_layouts_[layout].back().back();  // the sweep: it takes the height left
  for (const QList<QGroupBox*>& stack : form_layouts_[layout]) {
    auto* column = new QVBoxLayout;
    for (QGroupBox* box : stack) column->addWidget(box, box == last ? 1 : 0);
    if (!stack.contains(last)) column->addStretch(1);
    columns->addLayout(column, 1);
  }
}

bool DesignerView::eventFilter(QObject* watched, QEvent* event) {
  // The form's columns follow the width it is shown in: the widest layout that fits.
  if (event->type() == QEvent::Resize && watched == form_scroll_->viewport()) {
    const int width = form_scroll_->viewport()->width();
    if (form_layout_ == 0) {
      three_columns_width_ = form_->minimumSizeHint().width();
      if (three_columns_width_ > width) arrange_form(1);
    } else if (three_columns_width_ > 0 && three_columns_width_ <= width) {
      arrange_form(0);
    }
  }
  return StoreView::eventFilter(watched, event);
}

void DesignerView::add_settings(QGridLayout* form, const char* section, int first_row,
                                const std::set<std::string>& only,
                                const std::set<std::string>& skip) {
  // The keys whose editor is more than a line of text; the others' by the member's type.
  static const std::map<std::string, Kind> special = {{"study.corpus", Kind::Sources},
                                                      {"study.dir", Kind::Folder},
                                                      {"study.db", Kind::File},
                                                      {"model.preset", Kind::Choice},
                                                      {"finetune.poolings", Kind::Poolings},
                                                      {"eval.benchmarks", Kind::Checklist},
                                                      {"eval.lengths", Kind::IntegerList},
                                                      {"eval.needle_lengths", Kind::IntegerList}};
  int row = first_row;
  for (const Setting<StudyConfig>& setting : study_settings()) {
    if (setting.label == nullptr || std::string(setting.section) != section) continue;
    if ((!only.empty() && !only.count(setting.key)) || skip.count(setting.key)) continue;
    const std::string name = std::string(section) + "." + setting.key;
    Kind kind = Kind::Text;
    if (const auto found = special.find(name); found != special.end())
      kind = found->second;
    else if (std::holds_alternative<int64_t StudyConfig::*>(setting.member))
      kind = Kind::Integer;
    else if (std::holds_alternative<double StudyConfig::*>(setting.member))
      kind = Kind::Number;
    // Choices, checklists and poolings show their options, not a hint.
    const bool hinted = kind != Kind::Choice && kind != Kind::Checklist && kind != Kind::Poolings;
    const QString hint = !hinted ? QString()
                         : setting.hint != nullptr
                             ? QCoreApplication::translate("StudySettings", setting.hint)
                             : QString::fromStdString(setting_default_text(setting));
    add_field(form, row++, QString::fromLatin1(section), QString::fromLatin1(setting.key), kind,
              QCoreApplication::translate("StudySettings", setting.label), hint);
  }
}

void DesignerView::add_field(QGridLayout* form, int row, const QString& section, const QString& key,
                             Kind kind, const QString& label, const QString& hint) {
  Field field;
  field.section = section;
  field.key = key;
  field.kind = kind;
  field.label = new QLabel(label);
  field.hint = hint;
  const int index = static_cast<int>(fields_.size());
  const QString name = section + QChar('.') + key;
  QWidget* browse = nullptr;
  switch (kind) {
    case Kind::Poolings:
      poolings_ = new PoolingsEditor;
      field.editor = poolings_;
      connect(poolings_, &PoolingsEditor::edited, this,
              [this, index] { apply_field(fields_[index]); });
      break;
    case Kind::Checklist:
      benchmarks_ =
          new ChecklistEditor(name, to_qt(study_benchmarks()), to_qt(StudyConfig().benchmarks));
      field.editor = benchmarks_;
      connect(benchmarks_, &ChecklistEditor::edited, this,
              [this, index] { apply_field(fields_[index]); });
      break;
    case Kind::Choice: {
      auto* combo = new QComboBox;
      combo->addItems({QStringLiteral("tiny"), QStringLiteral("small"), QStringLiteral("base")});
      combo->setToolTip(
          tr("tiny, small, or base (ModernBERT-base's shape); the fields below "
             "override its sizes"));
      field.editor = combo;
      connect(combo, &QComboBox::activated, this, [this, index] { apply_field(fields_[index]); });
      break;
    }
    default: {
      auto* line = new QLineEdit;
      line->setPlaceholderText(hint);
      field.editor = line;
      connect(line, &QLineEdit::textEdited, this, [this, index] { apply_field(fields_[index]); });
      if (kind == Kind::Folder || kind == Kind::File || kind == Kind::Sources) {
        auto* button = new QPushButton(tr("Browse…"));
        browse = button;
        connect(button, &QPushButton::clicked, this, [this, line, index, kind] {
          const QString start = line->text().isEmpty() || kind == Kind::Sources
                                    ? QFileInfo(document_.path()).absolutePath()
                                    : line->text();
          const QString path =
              kind == Kind::Folder
                  ? QFileDialog::getExistingDirectory(this, tr("Choose a folder"), start)
                  : QFileDialog::getSaveFileName(this, tr("Results store"), start,
                                                 tr("Results stores (*.db);;All files (*)"),
                                                 nullptr, QFileDialog::DontConfirmOverwrite);
          if (path.isEmpty()) return;
          // A source folder joins the list; a folder or file replaces the value.
          line->setText(kind == Kind::Sources && !line->text().trimmed().isEmpty()
                            ? line->text().trimmed() + QStringLiteral(", ") + path
                            : path);
          apply_field(fields_[index]);
        });
      }
    }
  }
  field.editor->setObjectName(name);
  field.label->setBuddy(field.editor);
  form->addWidget(field.label, row, 0, kind == Kind::Poolings ? Qt::AlignTop : Qt::Alignment());
  form->addWidget(field.editor, row, 1, 1, browse == nullptr ? 2 : 1);
  if (browse != nullptr) form->addWidget(browse, row, 2);
  field_of_key_.insert(name, index);
  fields_ << field;
}

void DesignerView::show_document(bool with_sweep) {
  showing_ = true;
  const QList<StudyDocument::SweepAxis> axes = document_.sweep_axes();
  QHash<QString, QString> swept;
  for (const StudyDocument::SweepAxis& axis : axes)
    for (int k = 0; k < axis.keys.size(); ++k) {
      QStringList values;
      for (const QVariant& v : axis.values.value(k)) values << display_text(v);
      swept.insert(axis.keys[k], values.join(QStringLiteral(" | ")));
    }
  for (Field& field : fields_)
    show_field(field, swept.value(field.section + QChar('.') + field.key));
  if (with_sweep) sweep_->set_axes(axes);
  showing_ = false;
  mark(QString(), QString());
  update_title();
}

void DesignerView::show_field(Field& field, const QString& swept) {
  field.swept = swept;
  decorate_field(field);
  const QVariant value = document_.effective_value(profile(), field.section, field.key);
  switch (field.kind) {
    case Kind::Poolings:
      poolings_->set_value(value);
      break;
    case Kind::Checklist:
      benchmarks_->set_value(value);
      break;
    case Kind::Choice: {
      auto* combo = static_cast<QComboBox*>(field.editor);
      const QString text = value.isValid() ? value.toString() : QStringLiteral("small");
      if (combo->findText(text) < 0) combo->addItem(text);
      combo->setCurrentText(text);
      break;
    }
    default:
      static_cast<QLineEdit*>(field.editor)->setText(display_text(value));
  }
}

void DesignerView::decorate_field(const Field& field) {
  const QString name = profile();
  const bool overridden = document_.overridden(name, field.section, field.key);
  QFont font = field.label->font();
  font.setBold(overridden);
  font.setItalic(!field.swept.isEmpty());
  field.label->setFont(font);
  QString tip = overridden
                    ? tr("[profile.%1.%2] %3 — profile %1's own value; an edit changes it there")
                          .arg(name, field.section, field.key)
                : edits_shared_values()
                    ? tr("[%1] %2 — the value every profile shares unless it sets its own")
                          .arg(field.section, field.key)
                    : tr("[%1] %2 — the shared value; an edit gives profile %3 its own "
                         "([profile.%3.%1])")
                          .arg(field.section, field.key, name);
  if (!field.swept.isEmpty())
    tip += tr("\nSwept: each cell of the grid sets it to one of %1").arg(field.swept);
  field.label->setToolTip(tip);
  auto* line = qobject_cast<QLineEdit*>(field.editor);
  if (line == nullptr) return;
  // What applies when the field is empty: a profile without its own value reads the shared one.
  const QVariant shared = document_.value({field.section, field.key});
  line->setPlaceholderText(!field.swept.isEmpty() ? tr("swept: %1").arg(field.swept)
                           : !edits_shared_values() && shared.isValid()
                               ? tr("shared value: %1").arg(display_text(shared))
                               : field.hint);
}

bool DesignerView::edits_shared_values() const {
  return profile() == QLatin1String(kDefaultStudyProfile);
}

QVariant DesignerView::field_value(const Field& field) const {
  switch (field.kind) {
    case Kind::Poolings:
      return poolings_->value();
    case Kind::Checklist:
      return benchmarks_->value();
    case Kind::Choice:
      return static_cast<QComboBox*>(field.editor)->currentText();
    default:
      break;
  }
  const QString text = static_cast<QLineEdit*>(field.editor)->text().trimmed();
  if (text.isEmpty()) return {};  // the key's default
  // What does not parse stays text, so that lmk's check names the key.
  auto integer = [](const QString& t) -> QVariant {
    bool ok = false;
    const qlonglong v = t.toLongLong(&ok);
    return ok ? QVariant(v) : QVariant(t);
  };
  switch (field.kind) {
    case Kind::Integer:
      return integer(text);
    case Kind::Number: {
      bool ok = false;
      const double v = QLocale::c().toDouble(text, &ok);
      return ok ? QVariant(v) : QVariant(text);
    }
    case Kind::Sources: {
      QVariantList list;
      for (const QString& part : text.split(QChar(','), Qt::SkipEmptyParts))
        if (!part.trimmed().isEmpty()) list << part.trimmed();
      return list;
    }
    case Kind::IntegerList: {
      QVariantList list;
      for (const QString& part :
           text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts))
        list << integer(part);
      return list;
    }
    default:
      return text;
  }
}

QString DesignerView::field_text(const Field& field) const {
  switch (field.kind) {
    case Kind::Poolings:
    case Kind::Checklist: {
      QStringList parts;
      for (const QVariant& v : field_value(field).toList()) parts << v.toString();
      return parts.join(QStringLiteral("; "));
    }
    case Kind::Choice:
      return static_cast<QComboBox*>(field.editor)->currentText();
    default:
      return static_cast<QLineEdit*>(field.editor)->text();
  }
}

void DesignerView::apply_field(const Field& field) {
  if (showing_) return;
  // An edit lands in the profile shown: its own [profile.NAME.SECTION] value (emptying the field
  // removes it, so the profile reads the shared value again). The full profile, lmk's default,
  // reads the shared values: an edit there changes them, unless it has its own.
  const QString name = profile();
  const bool own = !edits_shared_values() || document_.overridden(name, field.section, field.key);
  const QStringList keys =
      own ? QStringList{QStringLiteral("profile"), name, field.section, field.key}
          : QStringList{field.section, field.key};
  document_.set_value(keys, field_value(field));
  decorate_field(field);
  // Which other profiles read a shared value just edited: said now, before anything is saved.
  QStringList readers;
  if (!own) {
    QStringList profiles = to_qt(study_profiles());
    for (const QString& p : document_.profiles())
      if (!profiles.contains(p)) profiles << p;
    for (const QString& p : profiles)
      if (p != name && !document_.overridden(p, field.section, field.key)) readers << p;
  }
  profile_note_->setText(
      readers.isEmpty()
          ? QString()
          : tr("This edit of [%1] %2 changes the value profiles %3 share (none of them sets its "
               "own): switch to a profile to edit it there only")
                .arg(field.section, field.key, readers.join(QStringLiteral(", "))));
  profile_note_->setVisible(!readers.isEmpty());
  edited();
}

void DesignerView::apply_sweep() {
  if (showing_) return;
  document_.set_sweep_axes(sweep_->axes());
  edited();
  // The fields show which keys are swept now (the table itself is left as the user edits it).
  show_document(/*with_sweep=*/false);
}

QMap<QString, QString> DesignerView::field_values() const {
  QMap<QString, QString> values;
  for (const Field& field : fields_)
    values.insert(field.section + QChar('.') + field.key, field_text(field));
  values.insert(QStringLiteral("sweep"), sweep_->text());
  return values;
}

void DesignerView::choose_model_folder() {
  const QString folder = QFileDialog::getExistingDirectory(
      this, tr("A Hugging Face model folder (config.json)"), model_folder_path_->text());
  if (!folder.isEmpty()) use_model_folder(folder);
}

void DesignerView::use_model_folder(const QString& folder) {
  model_folder_->setChecked(true);
  model_folder_path_->setText(folder);
  QFile file(QDir(folder).filePath(QStringLiteral("config.json")));
  if (!file.open(QIODevice::ReadOnly)) {
    model_config_->setPlainText(tr("%1: no config.json").arg(folder));
    return;
  }
  const QByteArray bytes = file.readAll();
  const QJsonObject config = QJsonDocument::fromJson(bytes).object();
  model_config_->setPlainText(config.isEmpty() ? QString::fromUtf8(bytes)
                                               : QString::fromUtf8(QJsonDocument(config).toJson()));
  if (config.isEmpty()) return;
  // The study's shape keys from the names Hugging Face configs use (ModernBERT, BERT, GTE).
  const struct {
    const char* key;
    QStringList names;
  } shape[] = {{"hidden_size", {QStringLiteral("hidden_size")}},
               {"layers", {QStringLiteral("num_hidden_layers")}},
               {"heads", {QStringLiteral("num_attention_heads")}},
               {"intermediate_size", {QStringLiteral("intermediate_size")}},
               {"local_window", {QStringLiteral("local_attention")}},
               {"rope_theta", {QStringLiteral("global_rope_theta"), QStringLiteral("rope_theta")}}};
  for (const auto& entry : shape) {
    const int index = field_of_key_.value(QStringLiteral("model.") + QLatin1String(entry.key), -1);
    if (index < 0) continue;
    for (const QString& name : entry.names) {
      if (!config.contains(name)) continue;
      const double value = config.value(name).toDouble();
      static_cast<QLineEdit*>(fields_[index].editor)
          ->setText(fields_[index].kind == Kind::Number
                        ? StudyDocument::value_text(value)
                        : QString::number(static_cast<qlonglong>(value)));
      apply_field(fields_[index]);
      break;
    }
  }
}

}  // namespace lmk::widgets
