// The experiment designer against real study configs and the real lmk: a config survives a
// load / save round trip (every form field and every TOML value), an edit lands on the key the
// profile reads, lmk's dry run names a bad key within seconds and the field shows it, and what
// the designer saves is accepted by `lmk submit --dry-run`.

#include <toml++/toml.h>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "core/jobs/study.h"
#include "tests/widgets/form_input.h"
#include "widgets/designer_view.h"
#include "widgets/job_launcher.h"
#include "widgets/store_connection.h"

using lmk::widgets::DesignerView;
using lmk::widgets::StudyDocument;
using lmk::widgets::testing::child;
using lmk::widgets::testing::type_into;

namespace {

QString experiment(const char* name) {
  return QStringLiteral(LMK_SOURCE_DIR "/experiments/%1").arg(QLatin1String(name));
}

toml::table parse(const QString& path) {
  return toml::parse_file(path.toStdString());
}

// The value the profile reads for section.key, straight from toml++ (not the designer's code).
const toml::node* effective(const toml::table& table, const std::string& profile,
                            const std::string& section, const std::string& key) {
  if (const toml::node* node = table["profile"][profile][section][key].node()) return node;
  return table[section][key].node();
}

// Whether the form's text shows the TOML value.
bool shows(const QString& text, const toml::node* node) {
  if (node == nullptr) return text.isEmpty();
  if (const auto* s = node->as_string()) return text == QString::fromStdString(s->get());
  if (const auto* i = node->as_integer()) return text == QString::number(i->get());
  if (const auto* f = node->as_floating_point()) {
    bool ok = false;
    const double shown = text.toDouble(&ok);
    return ok && std::abs(shown - f->get()) <= 1e-12 * std::abs(f->get());
  }
  if (const auto* a = node->as_array()) {
    const QStringList parts = text.split(QStringLiteral(", "), Qt::SkipEmptyParts);
    if (parts.size() != static_cast<int>(a->size())) return false;
    for (size_t i = 0; i < a->size(); ++i)
      if (!shows(parts[static_cast<int>(i)], a->get(i))) return false;
    return true;
  }
  return false;
}

int dry_run(const QString& config, const QString& profile, const QString& db, QString* output) {
  QProcess process;
  process.start(lmk::widgets::lmk_program(),
                {QStringLiteral("submit"), config, QStringLiteral("--dry-run"),
                 QStringLiteral("--profile"), profile, QStringLiteral("--db"), db});
  process.waitForFinished(60000);
  *output = QString::fromUtf8(process.readAllStandardError() + process.readAllStandardOutput());
  return process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
}

}  // namespace

class DesignerTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
  }

  void round_trip_keeps_every_value();
  void round_trip_keeps_the_sweep();
  void edits_land_where_the_profile_reads_them();
  void edits_of_shared_values_name_the_profiles_they_change();
  void a_fixed_field_clears_the_error_and_an_invalid_form_is_not_saved_to_launch();
  void invalid_value_names_the_key();
  void saved_file_passes_the_dry_run();
  void model_shape_comes_from_a_hugging_face_folder();
  void corrupt_last_study_falls_back_to_the_template();
  void every_form_setting_is_a_field_with_the_cores_default();

 private:
  QTemporaryDir dir_;
};

void DesignerTest::round_trip_keeps_every_value() {
  const QString source = experiment("pooling-vs-length.toml");
  const toml::table original = parse(source);
  for (const QString& profile : {QStringLiteral("micro"), QStringLiteral("full")}) {
    DesignerView designer;
    designer.set_profile(profile);
    QVERIFY(designer.open_file(source));
    const QMap<QString, QString> shown = designer.field_values();
    // Every one-line field shows the value the profile reads.
    int checked = 0;
    for (auto it = shown.begin(); it != shown.end(); ++it) {
      const QStringList parts = it.key().split(QChar('.'));
      if (parts.size() != 2 || parts[1] == QLatin1String("poolings") ||
          parts[1] == QLatin1String("benchmarks") || parts[1] == QLatin1String("preset"))
        continue;
      const toml::node* node = effective(original, profile.toStdString(), parts[0].toStdString(),
                                         parts[1].toStdString());
      QVERIFY2(shows(it.value(), node),
               qPrintable(QStringLiteral("%1 (%2) shows '%3'").arg(it.key(), profile, it.value())));
      ++checked;
    }
    QVERIFY(checked > 25);
    QCOMPARE(shown.value(QStringLiteral("finetune.poolings")),
             QStringLiteral("cls; mean; lmk:fixed:32; lmk:variable:32,64,128,256"));
    QCOMPARE(shown.value(QStringLiteral("eval.benchmarks")),
             QStringLiteral("passages; documents; code; passkey; needle"));
    QCOMPARE(shown.value(QStringLiteral("model.preset")), QStringLiteral("small"));

    const QString copy = dir_.filePath(QStringLiteral("round-trip-%1.toml").arg(profile));
    QVERIFY(designer.save_as(copy));
    QVERIFY(parse(copy) == original);
    // The file's comments stay (its opening lines, and a header's own comment).
    QFile saved(copy), read(source);
    QVERIFY(saved.open(QIODevice::ReadOnly) && read.open(QIODevice::ReadOnly));
    const QByteArray saved_text = saved.readAll();
    QCOMPARE(saved_text.left(200), read.readAll().left(200));
    QVERIFY(saved_text.contains("[profile.micro.study]     # <= 3 min"));

    DesignerView reloaded;
    reloaded.set_profile(profile);
    QVERIFY(reloaded.open_file(copy));
    QCOMPARE(reloaded.field_values(), shown);
  }
}

void DesignerTest::round_trip_keeps_the_sweep() {
  const QString source = experiment("granularity-sweep.toml");
  DesignerView designer;
  designer.set_profile(QStringLiteral("micro"));
  QVERIFY(designer.open_file(source));
  QCOMPARE(designer.field_values().value(QStringLiteral("sweep")),
           QStringLiteral("eval.granularity = 16, 32, 64, 128 []"));
  const QString copy = dir_.filePath(QStringLiteral("sweep.toml"));
  QVERIFY(designer.save_as(copy));
  QVERIFY(parse(copy) == parse(source));

  // A zip axis added in the table becomes a [[sweep.zip]].
  auto* table = child<QTableWidget>(designer, QStringLiteral("sweep_table"));
  for (const auto& [key, values] :
       {std::pair<QString, QString>{QStringLiteral("pretrain.max_length"),
                                    QStringLiteral("128, 256")},
        {QStringLiteral("eval.lengths"), QStringLiteral("[128, 512], [256, 1024]")}}) {
    const int row = table->rowCount();
    table->insertRow(row);
    table->setItem(row, 0, new QTableWidgetItem(key));
    table->setItem(row, 1, new QTableWidgetItem(values));
    table->setItem(row, 2, new QTableWidgetItem(QStringLiteral("1")));
  }
  QVERIFY(designer.save());
  const toml::table saved = parse(copy);
  const toml::array* zips = saved["sweep"]["zip"].as_array();
  QVERIFY(zips != nullptr && zips->size() == 1);
  const toml::table& zip = *zips->get(0)->as_table();
  QCOMPARE(zip["pretrain.max_length"][1].value_or(int64_t{0}), int64_t{256});
  QCOMPARE(zip["eval.lengths"][1][1].value_or(int64_t{0}), int64_t{1024});
  QCOMPARE(saved["sweep"]["eval.granularity"][3].value_or(int64_t{0}), int64_t{128});
  QString output;
  QCOMPARE(dry_run(copy, QStringLiteral("micro"), dir_.filePath(QStringLiteral("s.db")), &output),
           0);
  QVERIFY2(output.contains(QStringLiteral("8 sweep cells")), qPrintable(output));
}

void DesignerTest::edits_land_where_the_profile_reads_them() {
  const QString source = experiment("pooling-vs-length.toml");
  const toml::table original = parse(source);
  DesignerView designer;
  designer.show();
  designer.set_profile(QStringLiteral("micro"));
  QVERIFY(designer.open_file(source));
  const QString copy = dir_.filePath(QStringLiteral("edited.toml"));
  QVERIFY(designer.save_as(copy));
  QString before;
  QCOMPARE(dry_run(copy, QStringLiteral("full"), dir_.filePath(QStringLiteral("e.db")), &before),
           0);

  // micro sets pretrain.steps itself: its value changes, [pretrain]'s does not.
  type_into(child<QLineEdit>(designer, QStringLiteral("pretrain.steps")), QStringLiteral("77"));
  // micro reads the shared learning rate: the edit becomes micro's own value.
  type_into(child<QLineEdit>(designer, QStringLiteral("pretrain.learning_rate")),
            QStringLiteral("0.002"));
  child<QCheckBox>(designer, QStringLiteral("finetune.poolings.cls"))->click();
  type_into(child<QLineEdit>(designer, QStringLiteral("finetune.poolings.fixed_g")),
            QStringLiteral("16"));
  child<QCheckBox>(designer, QStringLiteral("finetune.poolings.sentence"))->click();
  child<QCheckBox>(designer, QStringLiteral("eval.benchmarks.needle"))->click();
  type_into(child<QLineEdit>(designer, QStringLiteral("eval.lengths")),
            QStringLiteral("128, 1024"));
  type_into(child<QLineEdit>(designer, QStringLiteral("study.dir")), QStringLiteral("elsewhere"));
  // Sources: names and folders, comma-separated, saved as a list.
  type_into(child<QLineEdit>(designer, QStringLiteral("study.corpus")),
            QStringLiteral("kernel-docs, my notes"));
  // Emptying micro's own value removes it: micro reads the shared one again.
  type_into(child<QLineEdit>(designer, QStringLiteral("finetune.batch_size")), QString());
  QVERIFY(designer.document().modified());
  // Nothing said about other profiles: these edits are micro's alone.
  QVERIFY(!child<QLabel>(designer, QStringLiteral("profile_note"))->isVisibleTo(&designer));
  QVERIFY(designer.save());

  const toml::table saved = parse(copy);
  const auto micro = saved["profile"]["micro"];
  QCOMPARE(micro["pretrain"]["steps"].value_or(int64_t{0}), int64_t{77});
  QCOMPARE(micro["pretrain"]["learning_rate"].value_or(0.0), 0.002);
  std::vector<std::string> poolings;
  for (const toml::node& p : *micro["finetune"]["poolings"].as_array())
    poolings.push_back(p.value_or(std::string()));
  QCOMPARE(poolings, (std::vector<std::string>{"mean", "lmk:fixed:16", "lmk:variable:32,64,128,256",
                                               "lmk:sentence"}));
  QCOMPARE(micro["eval"]["benchmarks"].as_array()->size(), size_t{4});
  QCOMPARE(micro["eval"]["lengths"][1].value_or(int64_t{0}), int64_t{1024});
  QCOMPARE(micro["study"]["dir"].value_or(std::string()), std::string("elsewhere"));
  const toml::array* sources = micro["study"]["corpus"].as_array();
  QVERIFY(sources != nullptr && sources->size() == 2);
  QCOMPARE(sources->get(0)->value_or(std::string()), std::string("kernel-docs"));
  QCOMPARE(sources->get(1)->value_or(std::string()), std::string("my notes"));
  QVERIFY(micro["finetune"]["batch_size"].node() == nullptr);
  // The shared values and every other profile are as they were: the whole file but micro's
  // table means what it meant.
  toml::table without_micro = saved, original_without_micro = original;
  without_micro["profile"].as_table()->erase("micro");
  original_without_micro["profile"].as_table()->erase("micro");
  QVERIFY(without_micro == original_without_micro);
  // So the full profile plans exactly the steps it planned before.
  QString after;
  QCOMPARE(dry_run(copy, QStringLiteral("full"), dir_.filePath(QStringLiteral("e.db")), &after), 0);
  QCOMPARE(after, before);

  // Another profile shows its own values; the shared ones for keys it does not set.
  designer.set_profile(QStringLiteral("full"));
  QCOMPARE(child<QLineEdit>(designer, QStringLiteral("pretrain.steps"))->text(),
           QString::number(original["pretrain"]["steps"].value_or(int64_t{0})));
  QCOMPARE(child<QLineEdit>(designer, QStringLiteral("pretrain.learning_rate"))->text(),
           QString::number(original["pretrain"]["learning_rate"].value_or(0.0)));
}

// In the full profile (lmk's default) the form edits the shared values, which the other
// profiles read unless they set their own: the designer says which, before anything is saved.
void DesignerTest::edits_of_shared_values_name_the_profiles_they_change() {
  DesignerView designer;
  designer.show();
  designer.set_profile(QStringLiteral("full"));
  QVERIFY(designer.open_file(experiment("pooling-vs-length.toml")));
  auto* note = child<QLabel>(designer, QStringLiteral("profile_note"));
  // micro and quick both read the shared learning rate.
  type_into(child<QLineEdit>(designer, QStringLiteral("pretrain.learning_rate")),
            QStringLiteral("0.002"));
  QVERIFY(note->isVisibleTo(&designer));
  QVERIFY2(note->text().contains(QStringLiteral("micro, quick")), qPrintable(note->text()));
  QCOMPARE(designer.document()
               .value({QStringLiteral("pretrain"), QStringLiteral("learning_rate")})
               .toDouble(),
           0.002);
  // micro sets its own pretraining steps; quick does too: only the full profile reads this.
  type_into(child<QLineEdit>(designer, QStringLiteral("pretrain.steps")), QStringLiteral("700"));
  QVERIFY(!note->isVisibleTo(&designer));
  // Neither sets eval.granularity: both are named.
  type_into(child<QLineEdit>(designer, QStringLiteral("eval.granularity")), QStringLiteral("64"));
  QVERIFY2(note->text().contains(QStringLiteral("micro, quick")), qPrintable(note->text()));
  // Switching to a profile clears the note; an edit there names nobody.
  designer.set_profile(QStringLiteral("quick"));
  QVERIFY(!note->isVisibleTo(&designer));
}

void DesignerTest::invalid_value_names_the_key() {
  DesignerView designer;
  designer.show();
  designer.set_profile(QStringLiteral("micro"));
  QVERIFY(designer.open_file(experiment("pooling-vs-length.toml")));
  QTRY_VERIFY_WITH_TIMEOUT(designer.validation_text().startsWith(QStringLiteral("✓")), 15000);
  QVERIFY(designer.validation_error().isEmpty());

  auto* rate = child<QLineEdit>(designer, QStringLiteral("pretrain.learning_rate"));
  type_into(rate, QStringLiteral("-1"));
  QTRY_VERIFY_WITH_TIMEOUT(!designer.validation_error().isEmpty(), 10000);
  QVERIFY2(designer.validation_error().contains(QStringLiteral("pretrain.learning_rate")),
           qPrintable(designer.validation_error()));
  QVERIFY(designer.validation_text().contains(QStringLiteral("pretrain.learning_rate")));
  QCOMPARE(designer.marked_key(), QStringLiteral("pretrain.learning_rate"));
  QVERIFY(!rate->styleSheet().isEmpty());
  QVERIFY(
      child<QLineEdit>(designer, QStringLiteral("pretrain.batch_size"))->styleSheet().isEmpty());

  // An integer field given text: lmk says which key wants an integer (a profile's override).
  type_into(rate, QStringLiteral("0.001"));
  type_into(child<QLineEdit>(designer, QStringLiteral("eval.queries")), QStringLiteral("many"));
  QTRY_VERIFY_WITH_TIMEOUT(designer.marked_key() == QStringLiteral("eval.queries"), 10000);
  QVERIFY(rate->styleSheet().isEmpty());

  // Fixed: the error and the mark go.
  type_into(child<QLineEdit>(designer, QStringLiteral("eval.queries")), QStringLiteral("8"));
  QTRY_VERIFY_WITH_TIMEOUT(designer.validation_text().startsWith(QStringLiteral("✓")), 10000);
  QVERIFY(designer.marked_key().isEmpty());

  // A bad value in a sweep axis marks its row.
  auto* table = child<QTableWidget>(designer, QStringLiteral("sweep_table"));
  table->insertRow(0);
  table->setItem(0, 0, new QTableWidgetItem(QStringLiteral("pretrain.learning_rate")));
  table->setItem(0, 1, new QTableWidgetItem(QStringLiteral("1e-3, -1")));
  table->setItem(0, 2, new QTableWidgetItem(QString()));
  QTRY_VERIFY_WITH_TIMEOUT(designer.marked_key() == QStringLiteral("sweep:pretrain.learning_rate"),
                           10000);
  QVERIFY(designer.validation_error().contains(QStringLiteral("learning_rate=-1")));
}

// The error line is about the form as it is: fixed, it goes (also a refused launch's line); and
// a form lmk refuses is not saved to be launched.
void DesignerTest::a_fixed_field_clears_the_error_and_an_invalid_form_is_not_saved_to_launch() {
  const QString copy = dir_.filePath(QStringLiteral("launch.toml"));
  QFile::remove(copy);
  QVERIFY(QFile::copy(experiment("pooling-vs-length.toml"), copy));
  QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner);
  const QByteArray on_disk = [&] {
    QFile file(copy);
    file.open(QIODevice::ReadOnly);
    return file.readAll();
  }();
  DesignerView designer;
  designer.show();
  designer.set_profile(QStringLiteral("micro"));
  QVERIFY(designer.open_file(copy));
  QTRY_VERIFY_WITH_TIMEOUT(designer.validation_text().startsWith(QStringLiteral("✓")), 15000);
  auto* batch = child<QLineEdit>(designer, QStringLiteral("finetune.batch_size"));
  type_into(batch, QStringLiteral("8x"));
  // Launch at once, before the check: it waits for the check, refuses, and saves nothing.
  designer.launch(lmk::ExecutorKind::Local);
  QTRY_VERIFY_WITH_TIMEOUT(designer.launch_text().startsWith(QStringLiteral("Not launched")),
                           15000);
  QVERIFY2(designer.launch_text().contains(QStringLiteral("finetune.batch_size")),
           qPrintable(designer.launch_text()));
  QVERIFY(!designer.launcher()->busy());
  QFile file(copy);
  QVERIFY(file.open(QIODevice::ReadOnly));
  QCOMPARE(file.readAll(), on_disk);
  QVERIFY(designer.document().modified());
  // Fixed: the check passes, and neither line keeps the old message.
  type_into(batch, QStringLiteral("8"));
  QTRY_VERIFY_WITH_TIMEOUT(designer.validation_text().startsWith(QStringLiteral("✓")), 15000);
  QVERIFY2(!designer.validation_text().contains(QStringLiteral("batch_size")),
           qPrintable(designer.validation_text()));
  QVERIFY(designer.validation_error().isEmpty());
  QVERIFY2(designer.launch_text().isEmpty(), qPrintable(designer.launch_text()));
  QVERIFY(batch->styleSheet().isEmpty());
}

void DesignerTest::saved_file_passes_the_dry_run() {
  DesignerView designer;
  designer.show();
  designer.set_profile(QStringLiteral("micro"));
  QVERIFY(designer.open_file(experiment("pooling-vs-length.toml")));
  type_into(child<QLineEdit>(designer, QStringLiteral("eval.granularity")), QStringLiteral("64"));
  child<QCheckBox>(designer, QStringLiteral("finetune.poolings.mean"))->click();
  const QString copy = dir_.filePath(QStringLiteral("dry-run.toml"));
  QVERIFY(designer.save_as(copy));
  QString output;
  QCOMPARE(dry_run(copy, QStringLiteral("micro"), dir_.filePath(QStringLiteral("d.db")), &output),
           0);
  // The edit reached lmk's plan: no mean fine-tuning, evaluation at g = 64.
  QVERIFY2(!output.contains(QStringLiteral("finetune/mean")), qPrintable(output));
  QVERIFY2(output.contains(QStringLiteral("finetune/cls")), qPrintable(output));
  QVERIFY2(output.contains(QStringLiteral("'--granularity' '64'")), qPrintable(output));
  QVERIFY2(!output.contains(QStringLiteral("'--granularity' '32'")), qPrintable(output));
}

void DesignerTest::corrupt_last_study_falls_back_to_the_template() {
  // The study opened last no longer parses: the designer starts on the template and says why.
  const QString broken = dir_.filePath(QStringLiteral("broken.toml"));
  {
    QFile file(broken);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("[study\nname = \"half\n");
  }
  QSettings().setValue(QStringLiteral("designer/file"), broken);
  DesignerView designer;
  designer.show();
  QVERIFY2(designer.launch_text().contains(QStringLiteral("Cannot open")),
           qPrintable(designer.launch_text()));
  const toml::table example = parse(experiment("pooling-vs-length.toml"));
  QVERIFY(shows(child<QLineEdit>(designer, QStringLiteral("study.name"))->text(),
                example["study"]["name"].node()));
  QTRY_VERIFY_WITH_TIMEOUT(designer.validation_text().startsWith(QStringLiteral("✓")), 15000);
  QSettings().remove(QStringLiteral("designer/file"));
}

void DesignerTest::model_shape_comes_from_a_hugging_face_folder() {
  // A ModernBERT config.json as Hugging Face writes it.
  const QString folder = dir_.filePath(QStringLiteral("hf-model"));
  QVERIFY(QDir().mkpath(folder));
  QFile config(folder + QStringLiteral("/config.json"));
  QVERIFY(config.open(QIODevice::WriteOnly));
  config.write(R"({"architectures": ["ModernBertModel"], "model_type": "modernbert",
    "hidden_size": 96, "num_hidden_layers": 3, "num_attention_heads": 6,
    "intermediate_size": 192, "local_attention": 32, "global_rope_theta": 80000.0,
    "vocab_size": 50368})");
  config.close();
  DesignerView designer;
  designer.show();
  designer.set_profile(QStringLiteral("full"));
  QVERIFY(designer.open_file(experiment("pooling-vs-length.toml")));
  designer.use_model_folder(folder);
  QVERIFY(child<QPlainTextEdit>(designer, QStringLiteral("model.config_json"))
              ->toPlainText()
              .contains(QStringLiteral("ModernBertModel")));
  const StudyDocument& document = designer.document();
  QCOMPARE(document.value({QStringLiteral("model"), QStringLiteral("hidden_size")}).toLongLong(),
           96);
  QCOMPARE(document.value({QStringLiteral("model"), QStringLiteral("layers")}).toLongLong(), 3);
  QCOMPARE(document.value({QStringLiteral("model"), QStringLiteral("heads")}).toLongLong(), 6);
  QCOMPARE(
      document.value({QStringLiteral("model"), QStringLiteral("intermediate_size")}).toLongLong(),
      192);
  QCOMPARE(document.value({QStringLiteral("model"), QStringLiteral("local_window")}).toLongLong(),
           32);
  QCOMPARE(document.value({QStringLiteral("model"), QStringLiteral("rope_theta")}).toDouble(),
           80000.0);
  QCOMPARE(child<QLineEdit>(designer, QStringLiteral("model.layers"))->text(), QStringLiteral("3"));
  QTRY_VERIFY_WITH_TIMEOUT(designer.validation_text().startsWith(QStringLiteral("✓")), 10000);
}

// The form is the core's table (study_settings): each entry with a label is a field, and an
// field's placeholder is the default StudyConfig holds (or the entry's hint), so a changed default
// in the core is what the designer shows.
void DesignerTest::every_form_setting_is_a_field_with_the_cores_default() {
  DesignerView designer;
  designer.show();
  int fields = 0;
  for (const lmk::Setting<lmk::StudyConfig>& setting : lmk::study_settings()) {
    if (setting.label == nullptr) continue;
    const QString name = QStringLiteral("%1.%2").arg(setting.section, setting.key);
    auto* editor = designer.findChild<QWidget*>(name);
    QVERIFY2(editor != nullptr, qPrintable(name));
    ++fields;
    auto* line = qobject_cast<QLineEdit*>(editor);
    if (line == nullptr) continue;  // choice, checklist, poolings: their options
    const QString expected = setting.hint != nullptr
                                 ? QString::fromUtf8(setting.hint)
                                 : QString::fromStdString(lmk::setting_default_text(setting));
    QCOMPARE(line->placeholderText(), expected);  // no sweep: the hint, whatever the text
  }
  QVERIFY(fields >= 30);
  const lmk::StudyConfig defaults;
  QCOMPARE(child<QLineEdit>(designer, QStringLiteral("pretrain.max_length"))->placeholderText(),
           QString::number(defaults.pretrain_length));
}

QTEST_MAIN(DesignerTest)
#include "designer_test.moc"
