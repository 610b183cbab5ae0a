// tokenizer.json loader: a SAX pass that keeps the 150k-entry vocab and merges out of the DOM
// (a full DOM parse of Qwen's 11 MB file takes ~300 ms), the rest parsed as ordinary JSON.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.h"

namespace clover::tokenizer {
namespace {

using Json = nlohmann::json;

class TokenizerJsonSax : public nlohmann::json_sax<Json> {
 public:
  // `size_hint` (the file size) pre-sizes the vocab and merges so they are not regrown and
  // copied while 150k+ entries stream in.
  TokenizerJsonSax(Json* root, size_t size_hint) : dom_(*root, /*allow_exceptions=*/false) {
    tokens.reserve(size_hint / 48);
    merges.reserve(size_hint / 48);
  }

  std::vector<std::string> tokens;
  std::vector<std::pair<std::string, std::string>> merges;
  std::string error;

  bool null() override { return Capture() ? Fail("null in model.vocab/merges") : dom_.null(); }
  bool boolean(bool v) override { return Capture() ? Fail("bool in model.vocab/merges") : dom_.boolean(v); }
  bool number_integer(number_integer_t v) override {
    if (!Capture()) return dom_.number_integer(v);
    return v < 0 ? Fail("negative id in model.vocab") : VocabId(static_cast<uint64_t>(v));
  }
  bool number_unsigned(number_unsigned_t v) override {
    return Capture() ? VocabId(v) : dom_.number_unsigned(v);
  }
  bool number_float(number_float_t v, const string_t& s) override {
    return Capture() ? Fail("float in model.vocab/merges") : dom_.number_float(v, s);
  }
  bool string(string_t& v) override {
    if (!Capture()) return dom_.string(v);
    if (mode_ != Mode::kMerges) return Fail("string value in model.vocab");
    if (depth_ == 2) {  // ["a", "b"] pair form
      pair_.push_back(std::move(v));
      return true;
    }
    const size_t space = v.find(' ', 1);  // a byte-level token never holds a space
    if (space == std::string::npos) return Fail("model.merges entry \"" + v + "\" has no space");
    merges.emplace_back(v.substr(0, space), v.substr(space + 1));
    return true;
  }
  bool binary(binary_t& v) override { return Capture() ? Fail("binary") : dom_.binary(v); }
  bool start_object(std::size_t n) override {
    if (pending_ == Mode::kVocab) {
      mode_ = Mode::kVocab;
      pending_ = Mode::kNone;
      depth_ = 1;
      return true;
    }
    if (Capture() || pending_ != Mode::kNone) return Fail("object in model.merges");
    path_.push_back(last_key_);
    return dom_.start_object(n);
  }
  bool key(string_t& k) override {
    if (mode_ == Mode::kVocab) {
      vocab_key_ = std::move(k);
      return true;
    }
    if (Capture()) return Fail("key in model.merges");
    if (path_.size() == 2 && path_[1] == "model" && (k == "vocab" || k == "merges")) {
      pending_ = k == "vocab" ? Mode::kVocab : Mode::kMerges;
      return true;
    }
    last_key_ = k;
    return dom_.key(k);
  }
  bool end_object() override {
    if (mode_ == Mode::kVocab) {
      mode_ = Mode::kNone;
      return true;
    }
    path_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) override {
    if (pending_ == Mode::kMerges) {
      mode_ = Mode::kMerges;
      pending_ = Mode::kNone;
      depth_ = 1;
      return true;
    }
    if (pending_ == Mode::kVocab) return Fail("model.vocab is an array; expected an object");
    if (mode_ == Mode::kMerges) {
      if (depth_ != 1) return Fail("model.merges nests deeper than [[a, b], ...]");
      depth_ = 2;
      pair_.clear();
      return true;
    }
    if (Capture()) return Fail("array in model.vocab");
    path_.push_back(last_key_);
    return dom_.start_array(n);
  }
  bool end_array() override {
    if (mode_ == Mode::kMerges) {
      if (depth_ == 1) {
        mode_ = Mode::kNone;
        return true;
      }
      if (pair_.size() != 2) {
        return Fail("model.merges[" + std::to_string(merges.size()) + "] has " +
                    std::to_string(pair_.size()) + " strings; expected 2");
      }
      merges.emplace_back(std::move(pair_[0]), std::move(pair_[1]));
      depth_ = 1;
      return true;
    }
    path_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) override {
    error = "JSON syntax error at byte " + std::to_string(position) + ": " + ex.what();
    return false;
  }

 private:
  enum class Mode { kNone, kVocab, kMerges };
  bool Capture() const { return mode_ != Mode::kNone || pending_ != Mode::kNone; }
  bool Fail(const std::string& what) {
    error = what;
    return false;
  }
  bool VocabId(uint64_t id) {
    if (mode_ != Mode::kVocab) return Fail("number in model.merges");
    if (id > (1u << 24)) return Fail("model.vocab id " + std::to_string(id) + " is implausibly large");
    if (id >= tokens.size()) {
      if (tokens.capacity() <= id) tokens.reserve(std::max<size_t>(id + 1, 2 * tokens.capacity()));
      tokens.resize(id + 1);
    }
    if (!tokens[id].empty()) {
      return Fail("model.vocab maps both \"" + tokens[id] + "\" and \"" + vocab_key_ + "\" to id " +
                  std::to_string(id));
    }
    tokens[id] = std::move(vocab_key_);
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::vector<std::string> path_;
  std::string last_key_;
  std::string vocab_key_;
  std::vector<std::string> pair_;
  Mode mode_ = Mode::kNone;
  Mode pending_ = Mode::kNone;
  int depth_ = 0;
};

Status ParsePreTokenizer(const Json& j, const std::string& where, std::vector<PreTokenizerStep>* out) {
  if (j.is_null()) return Status::Ok();
  const std::string type = j.at("type").get<std::string>();
  if (type == "Sequence") {
    const Json& list = j.at("pretokenizers");
    for (size_t i = 0; i < list.size(); ++i) {
      CLOVER_TRY(ParsePreTokenizer(list[i], where + ".pretokenizers[" + std::to_string(i) + "]", out));
    }
    return Status::Ok();
  }
  PreTokenizerStep step;
  if (type == "Split") {
    const std::string behavior = j.value("behavior", "Isolated");
    if (behavior != "Isolated" || j.value("invert", false)) {
      return Unimplemented(where + ": Split behavior \"" + behavior +
                           "\" / invert; only Isolated without invert is supported");
    }
    const Json& pattern = j.at("pattern");
    if (!pattern.contains("Regex")) {
      return Unimplemented(where + ".pattern: only {\"Regex\": ...} is supported, found " +
                           pattern.dump());
    }
    auto regex = RegexSplitter::Create(pattern.at("Regex").get<std::string>());
    if (!regex.ok()) return regex.status().WithContext(where + ".pattern.Regex");
    step.kind = PreTokenizerStep::Kind::kSplit;
    step.regex = std::make_shared<RegexSplitter>(std::move(regex).value());
  } else if (type == "ByteLevel") {
    step.kind = PreTokenizerStep::Kind::kByteLevel;
    step.add_prefix_space = j.value("add_prefix_space", false);
    if (j.value("use_regex", true)) {
      // GPT-2's split, which HF's ByteLevel applies when use_regex is true.
      auto regex = RegexSplitter::Create(
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+");
      if (!regex.ok()) return regex.status();
      step.regex = std::make_shared<RegexSplitter>(std::move(regex).value());
    }
  } else {
    return Unimplemented(where + ": pre-tokenizer type \"" + type +
                         "\" (supported: Sequence, Split, ByteLevel)");
  }
  out->push_back(std::move(step));
  return Status::Ok();
}

Status ParseNormalizer(const Json& j, const std::string& where, bool* nfc) {
  if (j.is_null()) return Status::Ok();
  const std::string type = j.at("type").get<std::string>();
  if (type == "NFC") {
    *nfc = true;
    return Status::Ok();
  }
  if (type == "Sequence") {
    const Json& list = j.at("normalizers");
    for (size_t i = 0; i < list.size(); ++i) {
      CLOVER_TRY(ParseNormalizer(list[i], where + ".normalizers[" + std::to_string(i) + "]", nfc));
    }
    return Status::Ok();
  }
  return Unimplemented(where + ": normalizer type \"" + type + "\" (supported: NFC, Sequence)");
}

// Fills everything but vocab/merges from the small DOM; nlohmann type errors become Status.
Status ParseRest(const Json& root, TokenizerSpec* spec) {
  const std::string& src = spec->source;
  std::string field = "model";
  try {
    const Json& model = root.at("model");
    const std::string type = model.value("type", "BPE");
    if (type != "BPE") return Unimplemented(src + ": model.type \"" + type + "\"; expected \"BPE\"");
    field = "model.byte_fallback";
    if (model.value("byte_fallback", false)) {
      return Unimplemented(src + ": model.byte_fallback = true is not supported");
    }
    field = "added_tokens";
    if (root.contains("added_tokens")) {
      for (const Json& a : root.at("added_tokens")) {
        AddedToken t;
        t.id = a.at("id").get<int32_t>();
        t.content = a.at("content").get<std::string>();
        t.special = a.value("special", false);
        t.lstrip = a.value("lstrip", false);
        t.rstrip = a.value("rstrip", false);
        t.normalized = a.value("normalized", !t.special);
        t.single_word = a.value("single_word", false);
        spec->added_tokens.push_back(std::move(t));
      }
    }
    field = "normalizer";
    CLOVER_TRY(ParseNormalizer(root.value("normalizer", Json()), src + ": normalizer", &spec->nfc));
    field = "pre_tokenizer";
    CLOVER_TRY(ParsePreTokenizer(root.value("pre_tokenizer", Json()), src + ": pre_tokenizer",
                                 &spec->pre_tokenizer));
    field = "decoder";
    const Json decoder = root.value("decoder", Json());
    if (!decoder.is_null() && decoder.at("type").get<std::string>() != "ByteLevel") {
      return Unimplemented(src + ": decoder type \"" + decoder.at("type").get<std::string>() +
                           "\"; expected ByteLevel");
    }
  } catch (const nlohmann::json::exception& e) {
    return DataLoss(src + ": field " + field + ": " + e.what());
  }
  return Status::Ok();
}

}  // namespace

Result<Tokenizer> Tokenizer::FromJsonText(std::string_view text, const std::string& source) {
  Json root;
  TokenizerJsonSax sax(&root, text.size());
  bool ok = false;
  try {
    ok = Json::sax_parse(text.begin(), text.end(), &sax);
  } catch (const nlohmann::json::exception& e) {
    sax.error = e.what();
  }
  if (!ok || !root.is_object()) {
    return DataLoss(source + ": " + (sax.error.empty() ? "not a JSON object" : sax.error));
  }
  TokenizerSpec spec;
  spec.source = source;
  spec.tokens = std::move(sax.tokens);
  spec.merges = std::move(sax.merges);
  if (spec.tokens.empty()) return DataLoss(source + ": model.vocab is missing or empty");
  CLOVER_TRY(ParseRest(root, &spec));
  return FromSpec(std::move(spec));
}

Result<Tokenizer> Tokenizer::FromJsonFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return NotFound(path + ": cannot open tokenizer file");
  std::string text;
  if (std::fseek(f, 0, SEEK_END) == 0) {
    const long size = std::ftell(f);
    if (size > 0) {
      text.resize(static_cast<size_t>(size));
      std::fseek(f, 0, SEEK_SET);
      text.resize(std::fread(text.data(), 1, text.size(), f));
    }
  }
  std::fclose(f);
  return FromJsonText(text, path);
}

}  // namespace clover::tokenizer
