// The attention explorer against the real CLI and a real study model (the micro study's LMK
// model, the fixture the other widget tests read): what the view draws is compared with what
// `lmk attention --explore` and `lmk encode` return when the test runs them itself; selections,
// the overview, the layer × head grid, the query's similarity and rank, a document over 8k
// tokens, cancel, bad input and export.

#include <QComboBox>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include "core/eval/document_attention.h"
#include "core/util/npy.h"
#include "core/util/progress.h"
#include "tests/widgets/fixture_store.h"
#include "widgets/explorer_data.h"
#include "widgets/explorer_panels.h"
#include "widgets/explorer_text.h"
#include "widgets/explorer_view.h"
#include "widgets/store_connection.h"

using lmk::DocumentAttention;
using lmk::widgets::ExplorerRequest;
using lmk::widgets::ExplorerView;

namespace {

QString study_dir() {
  return QFileInfo(QStringLiteral(LMK_WORKBENCH_STUDY_DB)).absolutePath();
}

// The study corpus's man pages, longest first.
QStringList man_pages() {
  QStringList pages;
  QDirIterator it(study_dir() + QStringLiteral("/corpus/manpages"), {QStringLiteral("*.txt")},
                  QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) pages << it.next();
  std::sort(pages.begin(), pages.end(), [](const QString& a, const QString& b) {
    return QFileInfo(a).size() > QFileInfo(b).size();
  });
  return pages;
}

QByteArray read_all(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
  return file.readAll();
}

void write_all(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  file.write(bytes);
}

// Runs lmk (the binary the view runs, with the progress events the view reads); the test
// fails when it does not exit 0. Returns its stderr.
QString run_lmk(const QStringList& arguments) {
  QProcess process;
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert(QStringLiteral("LMK_PROGRESS_JSON"), QStringLiteral("1"));
  process.setProcessEnvironment(environment);
  process.start(lmk::widgets::lmk_program(), arguments);
  if (!process.waitForFinished(300000)) qFatal("lmk did not end");
  const QString output = QString::fromUtf8(process.readAllStandardError());
  if (process.exitCode() != 0) qFatal("lmk failed: %s", qPrintable(output));
  return output;
}

// Computes `request` in the view and waits for the end; returns finished()'s arguments.
std::pair<bool, QString> compute(ExplorerView& view, const ExplorerRequest& request,
                                 int timeout_ms = 240000) {
  QSignalSpy finished(&view, &ExplorerView::finished);
  view.compute(request);
  if (finished.isEmpty() && !finished.wait(timeout_ms)) return {false, QStringLiteral("timeout")};
  return {finished.front().at(0).toBool(), finished.front().at(1).toString()};
}

// Opens an explorer file in the view and waits until it is shown.
bool open(ExplorerView& view, const QString& path) {
  QSignalSpy shown(&view, &ExplorerView::document_shown);
  view.open_file(path);
  return shown.wait(30000);
}

double dot_normalized(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

}  // namespace

class ExplorerTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    model_ = lmk::widgets::testing::fixture_model(QStringLiteral("lmk-32"));
    QVERIFY2(!model_.isEmpty(), "the micro study has no lmk-32 model");
    pages_ = man_pages();
    QVERIFY(pages_.size() > 10);
    QVERIFY(dir_.isValid());
    // A man page of a few thousand tokens, and the test's own run of lmk on it.
    document_ = pages_[pages_.size() / 2];
    query_ = QStringLiteral("the calling process");
    expected_path_ = dir_.filePath(QStringLiteral("expected.lmkattn"));
    const QString err =
        run_lmk({"attention", "--model", model_, "--pooling", "lmk", "--explore", expected_path_,
                 "--document", document_, "--layers", "all", "--query", query_});
    expected_ = lmk::read_document_attention(expected_path_.toStdString());
    // The progress the view's bar shows: layers done of all layers.
    const auto progress = lmk::latest_progress_event(err.toStdString());
    QVERIFY2(progress.has_value(), qPrintable(err));
    QCOMPARE(progress->total, expected_.layers);
    QCOMPARE(progress->done, expected_.layers);
    QCOMPARE(QString::fromStdString(progress->unit), QStringLiteral("layers"));
    QVERIFY(expected_.pooling_positions.size() > 3);
  }

  // The view's own computation shows what lmk returns; every token's colour (the one asked for
  // and the pixels painted) is the core's weight through the colour scale.
  void the_colours_of_the_text_are_the_core_weights() {
    ExplorerView view;
    view.resize(1300, 900);
    view.show();
    ExplorerRequest request;
    request.model = model_;
    request.document_file = document_;
    request.layers = QStringLiteral("all");
    request.query = query_;
    request.with_cls = true;
    const auto [ok, message] = compute(view, request);
    QVERIFY2(ok, qPrintable(message));
    QCOMPARE(view.result_count(), 2);  // lmk, then cls
    const DocumentAttention& shown = view.result(view.shown_result());
    QCOMPARE(QString::fromStdString(shown.pooling), QStringLiteral("lmk"));
    QCOMPARE(shown.tokens, expected_.tokens);
    QCOMPARE(shown.pooling_positions, expected_.pooling_positions);
    QCOMPARE(shown.profiles.size(), expected_.profiles.size());
    for (size_t i = 0; i < shown.profiles.size(); ++i)
      QVERIFY(std::abs(shown.profiles[i] - expected_.profiles[i]) <= 1e-3f);

    for (const auto& [layer, head] :
         {std::pair<int64_t, int64_t>{expected_.layers - 1, -1}, {0, 1}}) {
      view.set_layer_head(layer, head);
      QApplication::processEvents();
      const float* profile = expected_.profile(layer, head);
      const int64_t L = expected_.length();
      double max = 0;
      for (int64_t i = 1; i < L; ++i) max = std::max(max, static_cast<double>(profile[i]));
      auto* text = view.text_view();
      QCOMPARE(text->scale().max > 0, true);
      QVERIFY(std::abs(text->scale().max - max) <= 2e-3 * max);
      for (int64_t i = 0; i < L; ++i) {
        const QColor expected =
            lmk::widgets::attention_color(std::clamp(profile[i] / text->scale().max, 0.0, 1.0));
        const QColor got = text->token_color(i);
        QVERIFY2(std::abs(got.red() - expected.red()) <= 2 &&
                     std::abs(got.green() - expected.green()) <= 2 &&
                     std::abs(got.blue() - expected.blue()) <= 2,
                 qPrintable(QStringLiteral("position %1").arg(i)));
      }
      // The pixels: the top-left corner of each visible text token is its background.
      const QImage image = text->viewport()->grab().toImage();
      const auto [first, last] = text->visible_positions();
      int checked = 0;
      for (int64_t i = first; i <= last; ++i) {
        const auto span = expected_.spans[static_cast<size_t>(i)];
        if (span.first == span.second) continue;
        const QRectF rect = text->token_rect(i);
        const QPoint corner(static_cast<int>(rect.left()) + 1,
                            static_cast<int>(rect.top()) + 2 - text->verticalScrollBar()->value());
        if (rect.width() < 3 || !image.rect().contains(corner)) continue;
        const QColor painted = image.pixelColor(corner * image.devicePixelRatio());
        const QColor want = text->token_color(i);
        if (want == Qt::white) continue;
        QVERIFY2(std::abs(painted.red() - want.red()) <= 3 &&
                     std::abs(painted.green() - want.green()) <= 3 &&
                     std::abs(painted.blue() - want.blue()) <= 3,
                 qPrintable(QStringLiteral("position %1 painted %2, colour %3")
                                .arg(i)
                                .arg(painted.name(), want.name())));
        ++checked;
      }
      QVERIFY(checked > 20);
    }
  }

  // A landmark picked (a click on its box, the spin boxes, a range) shows its own row; a token
  // picked shows which landmarks attend to it; a grid cell picks its layer and head.
  void selections_show_their_rows() {
    ExplorerView view;
    view.resize(1300, 900);
    view.show();
    QVERIFY(open(view, expected_path_));
    const int64_t L = expected_.length();
    const int64_t last_layer = expected_.layers - 1;
    const std::vector<float>& rows = expected_.rows.at(last_layer);

    // A click on the third landmark's box in the text.
    auto* text = view.text_view();
    const int64_t landmark = expected_.pooling_positions[2];
    text->scroll_to_position(landmark);
    QApplication::processEvents();
    const QRectF box = text->token_rect(landmark);
    QTest::mouseClick(
        text->viewport(), Qt::LeftButton, {},
        QPoint(static_cast<int>(box.center().x()),
               static_cast<int>(box.center().y()) - text->verticalScrollBar()->value()));
    QCOMPARE(view.selection().first_row, 2);
    QCOMPARE(view.selection().last_row, 2);
    for (int64_t i = 0; i < L; ++i)
      QCOMPARE(text->weights()[static_cast<size_t>(i)], rows[static_cast<size_t>(2 * L + i)]);

    // A range: the mean of its rows.
    view.set_rows(1, 3);
    for (int64_t i = 0; i < L; i += 7) {
      const double mean =
          (static_cast<double>(rows[static_cast<size_t>(L + i)]) +
           rows[static_cast<size_t>(2 * L + i)] + rows[static_cast<size_t>(3 * L + i)]) /
          3.0;
      QVERIFY(std::abs(text->weights()[static_cast<size_t>(i)] - mean) < 1e-6);
    }
    // A head with rows selected: rows are kept over the mean of heads only; the view says so.
    view.set_layer_head(last_layer, 0);
    QVERIFY(view.notice().contains(QStringLiteral("averaged over heads")));
    const float* head0 = expected_.profile(last_layer, 0);
    QCOMPARE(text->weights()[5], head0[5]);

    // A token: which pooling tokens attend to it, at the layer shown.
    view.set_layer_head(last_layer, -1);
    const int64_t token = expected_.pooling_positions[1] + 3;
    view.select_position(token);
    const std::vector<double> column = view.token_attention_points();
    QCOMPARE(column.size(), expected_.pooling_positions.size());
    for (size_t r = 0; r < column.size(); ++r)
      QCOMPARE(static_cast<float>(column[r]), rows[r * static_cast<size_t>(L) + token]);

    // A grid cell.
    auto* grid = view.grid();
    QTest::mouseClick(grid, Qt::LeftButton, {}, grid->cell_rect(0, 1).center());
    QCOMPARE(view.selection().layer, 0);
    QCOMPARE(view.selection().head, 1);
    view.set_rows(-1, -1);
    for (int64_t i = 0; i < L; i += 11)
      QCOMPARE(text->weights()[static_cast<size_t>(i)], expected_.profile(0, 1)[i]);
  }

  // The overview's cells hold the text's weights summed by place in the document, and a click
  // on it brings that place into the text; the frame follows the text.
  void the_overview_and_the_text_agree() {
    ExplorerView view;
    view.resize(1300, 900);
    view.show();
    QVERIFY(open(view, expected_path_));
    view.set_skip_sink(true);
    auto* overview = view.overview();
    auto* text = view.text_view();
    QCOMPARE(overview->row_count(), 1);
    const auto& bins = overview->row(0).bins;
    std::vector<double> sums(bins.size(), 0.0);
    const double bytes = static_cast<double>(expected_.text.size());
    for (int64_t i = 1; i < expected_.length(); ++i) {
      const double at = expected_.spans[static_cast<size_t>(i)].first / bytes;
      const auto bin = std::min(bins.size() - 1, static_cast<size_t>(at * bins.size()));
      sums[bin] += text->weights()[static_cast<size_t>(i)];
    }
    for (size_t b = 0; b < bins.size(); ++b) QVERIFY(std::abs(bins[b] - sums[b]) < 1e-5);

    for (double fraction : {0.75, 0.4}) {
      const int x = static_cast<int>(overview->x_of(fraction));
      QTest::mouseClick(overview, Qt::LeftButton, {}, QPoint(x, overview->height() / 2));
      QApplication::processEvents();
      const auto [first, last] = text->visible_positions();
      const double from = expected_.spans[static_cast<size_t>(first)].first / bytes;
      const double to = expected_.spans[static_cast<size_t>(last)].second / bytes;
      QVERIFY2(from <= fraction + 0.01 && fraction <= to + 0.01,
               qPrintable(QStringLiteral("%1 not in [%2, %3]").arg(fraction).arg(from).arg(to)));
    }
  }

  // The per-landmark similarity is cos(query embedding, landmark state): with one landmark
  // (granularity beyond the text) that is the pooled embedding, which lmk encode writes.
  void the_query_similarity_is_a_dot_product() {
    QByteArray words;
    for (const QByteArray& word : read_all(document_).simplified().split(' ').mid(0, 60))
      words += word + ' ';
    const QString doc_path = dir_.filePath(QStringLiteral("short.txt"));
    write_all(doc_path, words.trimmed());
    ExplorerView view;
    view.show();
    ExplorerRequest request;
    request.model = model_;
    request.granularity = 4096;
    request.text = QString::fromUtf8(words.trimmed());
    request.query = query_;
    const auto [ok, message] = compute(view, request);
    QVERIFY2(ok, qPrintable(message));
    const DocumentAttention& d = view.result(view.shown_result());
    QCOMPARE(d.pooling_positions.size(), size_t{1});

    const QString docs = dir_.filePath(QStringLiteral("docs.jsonl"));
    const QString queries = dir_.filePath(QStringLiteral("queries.jsonl"));
    const auto json_line = [](const QByteArray& text) {
      QByteArray escaped = text;
      escaped.replace('\\', "\\\\").replace('"', "\\\"");
      return "{\"text\": \"" + escaped + "\"}\n";
    };
    write_all(docs, json_line(words.trimmed()));
    write_all(queries, json_line(query_.toUtf8()));
    for (const auto& [input, npy] :
         {std::pair<QString, QString>{docs, "d.npy"}, {queries, "q.npy"}})
      run_lmk({"encode", "--model", model_, "--pooling", "lmk", "--granularity", "4096", "--input",
               input, "--out", dir_.filePath(npy)});
    int64_t rows = 0, cols = 0;
    const auto doc = lmk::read_npy_float32(dir_.filePath("d.npy").toStdString(), rows, cols);
    const auto query = lmk::read_npy_float32(dir_.filePath("q.npy").toStdString(), rows, cols);
    const double cosine = dot_normalized(doc, query);
    const auto points = view.similarity_points();
    QCOMPARE(points.size(), size_t{1});
    QVERIFY2(std::abs(points[0].second - cosine) < 1e-4,
             qPrintable(QStringLiteral("%1 vs %2").arg(points[0].second).arg(cosine)));
    QVERIFY(std::abs(d.pooled_similarity - cosine) < 1e-4);
  }

  // A run of the store brings its model, pooling and test queries; computing a query's target
  // frames the evidence and says the target's rank from the store's per-query results.
  void a_store_run_brings_its_queries_and_the_targets_rank() {
    ExplorerView view;
    view.show();
    QSignalSpy loaded(&view, &ExplorerView::loaded);
    view.set_store(QStringLiteral(LMK_WORKBENCH_STUDY_DB));
    QVERIFY(loaded.wait(30000));
    auto* runs = view.findChild<QComboBox*>(QStringLiteral("explorer_run"));
    QVERIFY(runs != nullptr);
    const int index =
        runs->findText(QStringLiteral("lmk-32/manpages-documents"), Qt::MatchEndsWith);
    QVERIFY(index > 0);
    runs->setCurrentIndex(index);
    emit runs->activated(index);
    const ExplorerRequest request = view.request();
    QCOMPARE(QFileInfo(request.model).canonicalFilePath(), QFileInfo(model_).canonicalFilePath());
    QCOMPARE(request.pooling, QStringLiteral("lmk"));
    QVERIFY(!request.corpus.isEmpty());
    QVERIFY(!request.doc_id.isEmpty());
    QVERIFY(!request.query.isEmpty());
    const auto [ok, message] = compute(view, request);
    QVERIFY2(ok, qPrintable(message));
    const DocumentAttention& d = view.result(view.shown_result());
    QVERIFY(view.evidence().first >= 0);
    if (view.evidence().second > view.evidence().first)
      QCOMPARE(d.text.substr(static_cast<size_t>(view.evidence().first),
                             static_cast<size_t>(view.evidence().second - view.evidence().first)),
               request.query.toStdString());

    // The evidence is framed on screen in its colour (the text scrolled to it), under the first
    // token it covers; the legend above the text has the text's scale and draws its ramp.
    lmk::widgets::TokenTextView* text = view.text_view();
    // The first token of the text (not one the model inserted) ending after the evidence's
    // first byte: a point evidence often falls on a space no token covers.
    int64_t first_evidence = -1;
    for (size_t i = 0; i < d.spans.size() && first_evidence < 0; ++i)
      if (d.spans[i].second > d.spans[i].first &&
          static_cast<int64_t>(d.spans[i].second) > view.evidence().first)
        first_evidence = static_cast<int64_t>(i);
    QCOMPARE(text->evidence_positions().first, first_evidence);
    QVERIFY2(first_evidence >= 0,
             qPrintable(QString("evidence %1-%2, last span %3-%4, text %5 bytes, truncated %6")
                            .arg(view.evidence().first)
                            .arg(view.evidence().second)
                            .arg(d.spans.back().first)
                            .arg(d.spans.back().second)
                            .arg(d.text.size())
                            .arg(d.truncated)));
    QCoreApplication::processEvents();
    const QRectF box =
        text->token_rect(first_evidence).translated(0, -text->verticalScrollBar()->value());
    QVERIFY2(box.top() >= 0 && box.bottom() <= text->viewport()->height(), "evidence off screen");
    const QImage shown = text->viewport()->grab().toImage();
    int green = 0;
    for (int x = static_cast<int>(box.left()); x < static_cast<int>(box.right()); ++x)
      for (int y = static_cast<int>(box.bottom()) - 4; y < static_cast<int>(box.bottom()); ++y)
        if (shown.pixelColor(x * shown.devicePixelRatio(), y * shown.devicePixelRatio()) ==
            lmk::widgets::evidence_border_color())
          ++green;
    QVERIFY2(green >= box.width(), qPrintable(QString::number(green)));
    lmk::widgets::ColourLegend* legend = view.colour_legend();
    QVERIFY(legend->isVisible());
    QCOMPARE(legend->scale().max, text->scale().max);
    QCOMPARE(legend->scale().log, text->scale().log);
    QVERIFY(legend->labels()[1].startsWith(QString::number(text->scale().max, 'g', 3)));
    const QImage key = legend->grab().toImage();
    const QRectF ramp = legend->ramp_rect();
    const int y = static_cast<int>(ramp.center().y()), w = static_cast<int>(ramp.width());
    for (int k : {2, w / 2, w - 3})  // pixel k of the ramp: the colour of (k + 0.5) / width
      QCOMPARE(key.pixelColor(static_cast<int>(ramp.left()) + k, y),
               lmk::widgets::attention_color((k + 0.5) / ramp.width()));
    QTRY_VERIFY_WITH_TIMEOUT(!view.rank_text().isEmpty(), 10000);

    // The store's own number, read with plain SQL.
    const QString run_id = runs->currentText().section(QLatin1Char(' '), 0, 0);
    const auto query_combo = view.findChildren<QComboBox*>();
    QString query_id;
    for (QComboBox* combo : query_combo)
      if (combo->currentText().contains(QStringLiteral(" → ")))
        query_id = combo->currentText().section(QStringLiteral(" → "), 0, 0);
    QVERIFY(!query_id.isEmpty());
    const QString part = view.findChild<QComboBox*>(QStringLiteral("explorer_part"))->currentText();
    double mrr = -1;
    {
      QSqlDatabase db =
          QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("check"));
      db.setDatabaseName(QStringLiteral(LMK_WORKBENCH_STUDY_DB));
      QVERIFY(db.open());
      QSqlQuery q(db);
      QVERIFY(q.exec(QStringLiteral("SELECT m.value FROM eval_queries e JOIN query_metrics m ON "
                                    "m.query = e.id WHERE e.run_id = %1 AND e.query_id = '%2' "
                                    "AND e.part = '%3' AND m.metric = 'mrr_at_100'")
                         .arg(run_id, query_id, part)));
      if (q.next()) mrr = q.value(0).toDouble();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("check"));
    QVERIFY(mrr >= 0);
    if (mrr > 0)
      QVERIFY2(view.rank_text().contains(QStringLiteral("ranked %1 ").arg(std::lround(1 / mrr))),
               qPrintable(view.rank_text()));
    else
      QVERIFY(view.rank_text().contains(QStringLiteral("not in the top 100")));
  }

  // More than 8k tokens open, lay out and scroll to their end.
  void a_document_of_more_than_8k_tokens_opens() {
    QByteArray long_text;
    for (const QString& page : pages_) {
      long_text += read_all(page);
      if (long_text.size() > 60000) break;
    }
    ExplorerView view;
    view.resize(1200, 800);
    view.show();
    ExplorerRequest request;
    request.model = model_;
    request.text = QString::fromUtf8(long_text);
    const auto [ok, message] = compute(view, request);
    QVERIFY2(ok, qPrintable(message));
    const DocumentAttention& d = view.result(view.shown_result());
    QVERIFY2(d.length() > 8192, qPrintable(QString::number(d.length())));
    QVERIFY(!d.truncated);
    auto* text = view.text_view();
    QVERIFY(text->content_height() > 100 * text->fontMetrics().height());
    text->scroll_to_position(d.length() - 1);
    QApplication::processEvents();
    QCOMPARE(text->visible_positions().second, d.length() - 1);
    QCOMPARE(view.grid()->cell_at(view.grid()->cell_rect(d.layers - 1, d.heads - 1).center()),
             std::make_pair(d.layers - 1, d.heads - 1));
  }

  // Cancel stops lmk and keeps what was shown; the next computation runs.
  void cancelling_leaves_the_view_usable() {
    ExplorerView view;
    view.show();
    QVERIFY(open(view, expected_path_));
    QByteArray long_text;
    for (const QString& page : pages_) {
      long_text += read_all(page);
      if (long_text.size() > 300000) break;  // about 75k tokens: many seconds
    }
    ExplorerRequest request;
    request.model = model_;
    request.text = QString::fromUtf8(long_text);
    QSignalSpy finished(&view, &ExplorerView::finished);
    view.compute(request);
    QVERIFY(view.busy());
    QTest::qWait(1500);
    QVERIFY(finished.isEmpty());
    view.cancel();
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.front().at(0).toBool(), false);
    QVERIFY(!view.busy());
    QCOMPARE(view.result_count(), 1);
    QCOMPARE(view.result(0).tokens, expected_.tokens);
    QVERIFY(view.message().contains(QStringLiteral("Cancelled")));
    QTest::qWait(500);  // the killed process's end arrives and changes nothing
    QCOMPARE(view.result_count(), 1);
    QVERIFY(!view.busy());

    request.text = QStringLiteral("a short text after the cancel");
    const auto [ok, message] = compute(view, request);
    QVERIFY2(ok, qPrintable(message));
    QCOMPARE(view.result(view.shown_result()).text, std::string("a short text after the cancel"));

    // A new computation at once after a cancel: the cancelled process's end, arriving while the
    // new one runs, leaves the new one alone — Cancel still stops it (no lmk left running) —
    // and the next one finishes.
    request.text = QString::fromUtf8(long_text);
    view.compute(request);
    view.cancel();
    view.compute(request);
    QTest::qWait(1000);  // the first one's end arrives meanwhile
    QVERIFY(view.busy());
    view.cancel();
    const auto running = [&view] {
      int n = 0;
      for (QProcess* p : view.findChildren<QProcess*>()) n += p->state() != QProcess::NotRunning;
      return n;
    };
    QTRY_COMPARE_WITH_TIMEOUT(running(), 0, 10000);
    request.text = QStringLiteral("the last text");
    QSignalSpy last(&view, &ExplorerView::finished);
    view.compute(request);
    QVERIFY(view.busy());
    QVERIFY(last.wait(120000));
    QCOMPARE(last.front().at(0).toBool(), true);
    QVERIFY(!view.busy());
    QCOMPARE(view.result(view.shown_result()).text, std::string("the last text"));
  }

  // Bad input: a message in the view, never a crash; what was shown stays.
  void bad_input_is_a_message() {
    ExplorerView view;
    view.show();
    QVERIFY(open(view, expected_path_));
    ExplorerRequest request;
    request.text = QStringLiteral("some text");
    auto result = compute(view, request);
    QVERIFY(!result.first);
    QVERIFY2(result.second.contains(QStringLiteral("model folder")), qPrintable(result.second));
    request.model = dir_.path();  // no config.json
    result = compute(view, request);
    QVERIFY(result.second.contains(QStringLiteral("no config.json")));
    request.model = model_;
    request.text = QStringLiteral("   ");
    result = compute(view, request);
    QVERIFY(result.second.contains(QStringLiteral("empty")));
    // A model folder whose weights are damaged: lmk's message, naming the file.
    const QString broken = dir_.filePath(QStringLiteral("broken"));
    QVERIFY(QDir().mkpath(broken));
    for (const QString& name : QDir(model_).entryList(QDir::Files))
      QVERIFY(QFile::copy(QDir(model_).filePath(name), QDir(broken).filePath(name)));
    write_all(QDir(broken).filePath(QStringLiteral("model.safetensors")), "not a safetensors file");
    request.model = broken;
    request.text = QStringLiteral("some text");
    result = compute(view, request);
    QVERIFY(!result.first);
    QVERIFY2(result.second.contains(QStringLiteral("model.safetensors")),
             qPrintable(result.second));
    QCOMPARE(view.message(), result.second);
    // A file that is not an explorer file.
    const QString not_explorer = dir_.filePath(QStringLiteral("not-explorer.lmkattn"));
    write_all(not_explorer, "LMKATTN1 but nothing after it");
    QSignalSpy finished(&view, &ExplorerView::finished);
    view.open_file(not_explorer);
    QVERIFY(finished.wait(30000));
    QVERIFY(!finished.front().at(0).toBool());
    QVERIFY(view.message().contains(QStringLiteral("not-explorer.lmkattn")));
    QCOMPARE(view.result_count(), 1);
    QCOMPARE(view.result(0).tokens, expected_.tokens);

    // A document longer than asked for: cut, and the view says so.
    request = ExplorerRequest();
    request.model = model_;
    request.document_file = document_;
    request.max_length = 64;
    result = compute(view, request);
    QVERIFY2(result.first, qPrintable(result.second));
    QCOMPARE(view.result(view.shown_result()).length(), 64);
    QVERIFY(view.result(view.shown_result()).truncated);
    QVERIFY2(view.notice().contains(QStringLiteral("the model read 64 inputs")),
             qPrintable(view.notice()));
  }

  void export_writes_the_picture_and_the_numbers() {
    ExplorerView view;
    view.resize(1200, 800);
    view.show();
    QVERIFY(open(view, expected_path_));
    for (const char* suffix : {"png", "pdf", "svg"}) {
      const QString path = dir_.filePath(QStringLiteral("view.%1").arg(suffix));
      view.export_to(path);
      QVERIFY2(QFileInfo(path).size() > 1000, suffix);
    }
    QVERIFY(QImage(dir_.filePath("view.png")).width() > 500);
    QVERIFY(read_all(dir_.filePath("view.svg")).contains("<svg"));
    QVERIFY(read_all(dir_.filePath("view.pdf")).startsWith("%PDF"));
    const QString csv = dir_.filePath(QStringLiteral("view.csv"));
    view.export_to(csv);
    const QList<QByteArray> lines = read_all(csv).trimmed().split('\n');
    QCOMPARE(lines.size(), expected_.length() + 1);
    QVERIFY(lines[0].startsWith("position,token,byte_begin,byte_end,pooling_token,weight"));
    // The first landmark's row: its pooling index and its weight, as shown.
    const int64_t p = expected_.pooling_positions[0];
    const QList<QByteArray> fields = lines[static_cast<int>(p) + 1].trimmed().split(',');
    QCOMPARE(fields.value(0).toLongLong(), p);
    QCOMPARE(fields.value(4), QByteArray("0"));
    QCOMPARE(fields.value(5).toFloat(), view.text_view()->weights()[static_cast<size_t>(p)]);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, view.export_to(dir_.filePath("view.bmp")));
  }

 private:
  QTemporaryDir dir_;
  QString model_, document_, query_, expected_path_;
  QStringList pages_;
  DocumentAttention expected_;
};

QTEST_MAIN(ExplorerTest)
#include "explorer_test.moc"
