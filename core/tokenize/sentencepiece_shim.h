#pragma once

// C interface of liblmk_sentencepiece.so, the module that wraps libsentencepiece.
//
// Why a module: Debian's libsentencepiece embeds its own protobuf (3.14) and exports those
// symbols, while LibTorch loads the system libprotobuf (3.21). Linked into one process they
// interpose each other and the program crashes before main(). The module is loaded with
// dlmopen(LM_ID_NEWLM) into its own link-map namespace (with its own libstdc++), so sentencepiece
// binds to its own copy and LibTorch never sees it (RTLD_DEEPBIND crashed in std::cerr).

#include <cstddef>
#include <cstdint>

extern "C" {

// Receives one piece of an encoding: its id and byte range in the input.
typedef void (*lmk_sp_piece_fn)(void* context, int32_t id, uint32_t begin, uint32_t end);
// Receives a string (error message, decoded text, piece).
typedef void (*lmk_sp_string_fn)(void* context, const char* data, size_t size);

// Loads a .model file; returns null and reports the error through on_error.
void* lmk_sp_load(const char* path, lmk_sp_string_fn on_error, void* context);
void lmk_sp_free(void* model);
// Encodes text; returns 0 on success, else reports the error.
int lmk_sp_encode(void* model, const char* text, size_t size, lmk_sp_piece_fn on_piece,
                  lmk_sp_string_fn on_error, void* context);
// Decodes ids into text.
int lmk_sp_decode(void* model, const int32_t* ids, size_t count, lmk_sp_string_fn on_text,
                  void* context);
int32_t lmk_sp_piece_size(void* model);
void lmk_sp_id_to_piece(void* model, int32_t id, lmk_sp_string_fn on_piece, void* context);
// Returns the id of piece, or -1 when it is not in the vocabulary.
int32_t lmk_sp_piece_to_id(void* model, const char* piece, size_t size);
// which: 0 bos, 1 eos, 2 pad, 3 unk (-1 when disabled).
int32_t lmk_sp_special_id(void* model, int which);
// Whether id is a control or unknown piece.
int lmk_sp_is_special(void* model, int32_t id);
// Trains a model from "--key=value" arguments; returns 0 on success, else reports the error.
int lmk_sp_train(const char* args, lmk_sp_string_fn on_error, void* context);
}
