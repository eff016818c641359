#include "widgets/explorer_computation.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>

#include <stdexcept>

#include "widgets/job_launcher.h"
#include "widgets/plot_export.h"

namespace lmk::widgets {

ExplorerComputation::ExplorerComputation(QObject* parent, ExplorerFileReader read)
    : QObject(parent), read_(std::move(read)), clock_(std::make_unique<QElapsedTimer>()) {}

ExplorerComputation::~ExplorerComputation() {
  if (process_ != nullptr) {
    ++computation_;
    process_->kill();
    process_->waitForFinished(3000);
  }
}

QStringList ExplorerComputation::arguments(const ExplorerRequest& request, const QString& pooling,
                                           const QString& out, const QString& text_file) {
  QStringList args = {QStringLiteral("attention"),
                      QStringLiteral("--model"),
                      request.model,
                      QStringLiteral("--pooling"),
                      pooling,
                      QStringLiteral("--explore"),
                      out,
                      QStringLiteral("--layers"),
                      request.layers.isEmpty() ? QStringLiteral("last") : request.layers};
  if (request.granularity > 0 && pooling != QLatin1String("cls") &&
      pooling != QLatin1String("mean"))
    args << QStringLiteral("--granularity") << QString::number(request.granularity);
  if (request.max_length > 0)
    args << QStringLiteral("--max-length") << QString::number(request.max_length);
  if (!request.corpus.isEmpty())
    args << QStringLiteral("--input") << request.corpus << QStringLiteral("--doc-id")
         << request.doc_id;
  else if (!request.document_file.isEmpty())
    args << QStringLiteral("--document") << request.document_file;
  else
    args << QStringLiteral("--document") << text_file;
  if (!request.query.isEmpty()) args << QStringLiteral("--query") << request.query;
  return args;
}

bool ExplorerComputation::busy() const {
  return process_ != nullptr || !queue_.isEmpty();
}

double ExplorerComputation::elapsed_seconds() const {
  return clock_->isValid() ? clock_->elapsed() / 1000.0 : 0.0;
}

std::optional<ProgressEvent> ExplorerComputation::progress() const {
  return latest_progress_event(process_err_.right(4096).toStdString());
}

void ExplorerComputation::start(const ExplorerRequest& request) {
  if (busy()) cancel();
  running_ = request;
  queue_ = {request.pooling};
  if (request.with_cls && request.pooling != QLatin1String("cls")) queue_ << QStringLiteral("cls");
  if (!scratch_) scratch_ = std::make_unique<QTemporaryDir>();
  ++computation_;
  first_pending_ = true;
  clock_->start();
  if (!request.text.isEmpty()) {
    try {
      write_text_file(scratch_->filePath(QStringLiteral("document.txt")), request.text);
    } catch (const std::exception& e) {
      end(false, QString::fromUtf8(e.what()));
      return;
    }
  }
  start_next();
}

void ExplorerComputation::start_next() {
  if (queue_.isEmpty()) {
    end(true, QString());
    return;
  }
  const QString pooling = queue_.front();
  running_.pooling = pooling;
  const QString out =
      scratch_->filePath(QStringLiteral("%1-%2.lmkattn").arg(computation_).arg(pooling));
  QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
  environment.insert(QStringLiteral("LMK_PROGRESS_JSON"), QStringLiteral("1"));
  process_err_.clear();
  const int computation = computation_;
  process_ = run_lmk(
      this, arguments(running_, pooling, out, scratch_->filePath(QStringLiteral("document.txt"))),
      [this, computation, out](int code, const QString& standard_out, const QString& err) {
        // A cancelled computation's process ends later: process_ may be the next one's then.
        if (computation != computation_) return;
        process_ = nullptr;
        process_err_ += err;
        if (code != 0) {
          end(false, JobLauncher::error_text(process_err_ + standard_out));
          return;
        }
        read_(out, [this, computation, out](const ExplorerRead& read) {
          if (computation != computation_) return;
          if (!read.first) {
            end(false, read.second);
            return;
          }
          const bool first = first_pending_;
          if (first) first_file_ = out;
          first_pending_ = false;
          queue_.removeFirst();
          if (on_result) on_result(read.first, first);
          start_next();
        });
      },
      0, environment);
  connect(process_, &QProcess::readyReadStandardError, this, [this, computation] {
    if (process_ == nullptr || computation != computation_) return;
    process_err_ += QString::fromUtf8(process_->readAllStandardError());
  });
}

void ExplorerComputation::cancel() {
  if (!busy()) return;
  queue_.clear();
  ++computation_;
  if (process_ != nullptr) {
    process_->kill();
    process_ = nullptr;  // it deletes itself once it ended
  }
}

void ExplorerComputation::end(bool ok, const QString& message) {
  queue_.clear();
  if (on_finished) on_finished(ok, message);
}

}  // namespace lmk::widgets
