#pragma once

// The explorer's computing, apart from its controls and its picture: one request runs
// `lmk attention --explore` as a child process for each of its poolings (the request's, then CLS
// when asked for side by side), each output file read off the GUI thread and handed over; cancel
// kills the child and drops what would come after. The GUI keeps no ML code.

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "core/eval/document_attention.h"
#include "core/util/progress.h"

class QElapsedTimer;
class QProcess;
class QTemporaryDir;

namespace lmk::widgets {

// What one computation asks lmk for.
struct ExplorerRequest {
  QString model;            // model folder
  QString pooling = "lmk";  // cls | lmk | multicls | mean
  int granularity = 0;      // 0: the folder's
  QString layers = "last";  // layers whose per-pooling-token rows are kept
  int max_length = 0;       // model inputs read at most (0: the whole text)
  // The document: a file, a text, or a document of a corpus (jsonl) by id.
  QString document_file, text, corpus, doc_id;
  QString query;                  // "": none
  double evidence_position = -1;  // the dataset's, for the evidence mark when the query's text
                                  // is not in the document
  bool with_cls = false;          // also compute CLS for the side-by-side overview
};

// An explorer file read: the document, or the reason it cannot be read.
using ExplorerRead = std::pair<std::shared_ptr<DocumentAttention>, QString>;
// Reads an explorer file off the GUI thread and calls done(read) on `context`'s thread.
using ExplorerFileReader =
    std::function<void(const QString& path, std::function<void(const ExplorerRead&)> done)>;

class ExplorerComputation : public QObject {
  Q_OBJECT
 public:
  // `read` reads each output file (the view's reader, which counts files in flight).
  ExplorerComputation(QObject* parent, ExplorerFileReader read);
  ~ExplorerComputation() override;  // kills a running child

  // lmk's arguments for one pooling of `request` (the text of a pasted document goes through
  // `text_file`, written by the computation).
  static QStringList arguments(const ExplorerRequest& request, const QString& pooling,
                               const QString& out, const QString& text_file);

  // Starts the request (cancelling a running one first). Each pooling's result goes to
  // on_result (first: the computation's first result), then on_finished(true, "") after the
  // last, or on_finished(false, reason) at the first error.
  void start(const ExplorerRequest& request);
  // Stops the running computation; nothing more is handed over (on_finished is not called).
  void cancel();
  bool busy() const;
  // The pooling being computed, the seconds since the start, and the child's latest progress
  // event (layers done of total), for the view's progress line.
  const QString& pooling() const { return running_.pooling; }
  double elapsed_seconds() const;
  std::optional<ProgressEvent> progress() const;
  // Whether the child has ended and its output is being read.
  bool reading() const { return process_ == nullptr && busy(); }
  // The file the last computation's first pooling was read from (in a scratch folder that goes
  // with this object); empty before one.
  const QString& first_file() const { return first_file_; }

  std::function<void(std::shared_ptr<DocumentAttention>, bool first)> on_result;
  std::function<void(bool ok, const QString& message)> on_finished;

 private:
  void start_next();
  void end(bool ok, const QString& message);

  ExplorerFileReader read_;
  ExplorerRequest running_;
  QStringList queue_;  // poolings still to compute
  QProcess* process_ = nullptr;
  QString process_err_;
  QString first_file_;
  bool first_pending_ = false;  // the running computation's first result is still to come
  std::unique_ptr<QTemporaryDir> scratch_;
  std::unique_ptr<QElapsedTimer> clock_;
  int computation_ = 0;  // counts computations: the output of a cancelled one is dropped
};

}  // namespace lmk::widgets
