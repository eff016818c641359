// liblmk_sentencepiece.so: see sentencepiece_shim.h for why this is a separate module.
#include "core/tokenize/sentencepiece_shim.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <string>
#include <vector>

using sentencepiece::SentencePieceProcessor;

namespace {
void report(lmk_sp_string_fn fn, void* context, const std::string& s) {
  if (fn) fn(context, s.data(), s.size());
}
SentencePieceProcessor* processor(void* model) {
  return static_cast<SentencePieceProcessor*>(model);
}
}  // namespace

extern "C" {

void* lmk_sp_load(const char* path, lmk_sp_string_fn on_error, void* context) {
  auto* p = new SentencePieceProcessor();
  const auto status = p->Load(path);
  if (!status.ok()) {
    report(on_error, context, status.ToString());
    delete p;
    return nullptr;
  }
  return p;
}

void lmk_sp_free(void* model) {
  delete processor(model);
}

int lmk_sp_encode(void* model, const char* text, size_t size, lmk_sp_piece_fn on_piece,
                  lmk_sp_string_fn on_error, void* context) {
  sentencepiece::ImmutableSentencePieceText spt;
  const auto status = processor(model)->Encode(absl::string_view(text, size), spt.mutable_proto());
  if (!status.ok()) {
    report(on_error, context, status.ToString());
    return 1;
  }
  for (const auto& piece : spt.pieces())
    on_piece(context, static_cast<int32_t>(piece.id()), piece.begin(), piece.end());
  return 0;
}

int lmk_sp_decode(void* model, const int32_t* ids, size_t count, lmk_sp_string_fn on_text,
                  void* context) {
  std::vector<int> list(ids, ids + count);
  std::string text;
  const auto status = processor(model)->Decode(list, &text);
  report(on_text, context, text);
  return status.ok() ? 0 : 1;
}

int32_t lmk_sp_piece_size(void* model) {
  return processor(model)->GetPieceSize();
}

void lmk_sp_id_to_piece(void* model, int32_t id, lmk_sp_string_fn on_piece, void* context) {
  report(on_piece, context, processor(model)->IdToPiece(id));
}

int32_t lmk_sp_piece_to_id(void* model, const char* piece, size_t size) {
  const std::string name(piece, size);
  const int id = processor(model)->PieceToId(name);
  if (processor(model)->IdToPiece(id) != name) return -1;
  return id;
}

int32_t lmk_sp_special_id(void* model, int which) {
  switch (which) {
    case 0:
      return processor(model)->bos_id();
    case 1:
      return processor(model)->eos_id();
    case 2:
      return processor(model)->pad_id();
    case 3:
      return processor(model)->unk_id();
  }
  return -1;
}

int lmk_sp_is_special(void* model, int32_t id) {
  return processor(model)->IsControl(id) || processor(model)->IsUnknown(id);
}

int lmk_sp_train(const char* args, lmk_sp_string_fn on_error, void* context) {
  const auto status = sentencepiece::SentencePieceTrainer::Train(absl::string_view(args));
  if (!status.ok()) {
    report(on_error, context, status.ToString());
    return 1;
  }
  return 0;
}
}
