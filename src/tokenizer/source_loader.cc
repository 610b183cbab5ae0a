// Tokenizer / chat template source resolution.
#include "tokenizer/source_loader.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tokenizer/gguf_tokenizer.h"

namespace clover::tokenizer {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Result<Tokenizer> LoadTokenizer(const std::string& src) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(src, ec)) return Tokenizer::FromJsonFile(src + "/tokenizer.json");
  if (!fs::exists(src, ec)) return NotFound(src + ": no such file or directory");
  if (EndsWith(src, ".gguf")) {
    CLOVER_ASSIGN_OR_RETURN(auto gguf, io::GgufFile::Open(src));
    return TokenizerFromGguf(*gguf);
  }
  return Tokenizer::FromJsonFile(src);
}

Result<ChatTemplate> LoadChatTemplate(const std::string& src) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(src, ec)) return ChatTemplate::FromModelDir(src);
  if (!fs::exists(src, ec)) return NotFound(src + ": no such file or directory");
  if (EndsWith(src, ".gguf")) {
    CLOVER_ASSIGN_OR_RETURN(auto gguf, io::GgufFile::Open(src));
    return ChatTemplateFromGguf(*gguf);
  }
  if (EndsWith(src, ".jinja")) {
    std::ifstream in(src, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ChatTemplate::FromSource(ss.str(), src);
  }
  const fs::path p(src);
  if (p.filename() == "tokenizer_config.json") {
    std::ifstream in(src, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    nlohmann::json config = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
    if (config.is_discarded()) return DataLoss(src + ": not valid JSON");
    return ChatTemplate::FromTokenizerConfig(config, src);
  }
  // A tokenizer.json: the template lives beside it.
  return ChatTemplate::FromModelDir(p.has_parent_path() ? p.parent_path().string() : ".");
}

}  // namespace clover::tokenizer
