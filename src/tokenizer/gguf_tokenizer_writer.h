// The GGUF tokenizer metadata (`tokenizer.*`) of a HF model directory, laid out as llama.cpp's
// convert_hf_to_gguf.py writes Qwen2/Qwen3.5 byte-level BPE vocabularies: the write side of
// gguf_tokenizer.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "io/gguf.h"
#include "io/gguf_value.h"

namespace clover::tokenizer {

// GGUF metadata entries in the order they are to be written.
using GgufKvList = std::vector<std::pair<std::string, io::GgufValue>>;

// Returns the `tokenizer.*` keys for the HF tokenizer in `dir`: model "gpt2", pre ("qwen2" or
// "qwen35", from tokenizer.json's split regex), tokens by id (added tokens included, holes
// "[PAD{id}]"), token_type (1 normal, 3 control = special added token, 4 user-defined = other
// added token, 5 unused = hole), merges, bos/eos/padding/mask ids (tokenizer_config.json's
// `*_token` by added-token content, else config.json's `*_token_id`), add_bos_token and
// chat_template (chat_template.jinja, else tokenizer_config.json). `n_vocab` > 0 is the model's
// vocabulary (its embedding rows): tokens are padded to it, and an id at or beyond it is an
// error; 0 takes the tokenizer's own size. A tokenizer the GGUF layout cannot express (another
// normalizer, pre-tokenizer or split regex, stripping added tokens) is an error naming the file
// and field.
Result<GgufKvList> GgufTokenizerKvFromHfDir(const std::string& dir, int64_t n_vocab);

// Returns `gguf`'s `tokenizer.*` keys in file order, to copy them into another GGUF unchanged.
GgufKvList GgufTokenizerKvOf(const io::GgufFile& gguf);

}  // namespace clover::tokenizer
