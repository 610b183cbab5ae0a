// Helpers for the tokenizer suites: read the shared goldens in place.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace clover::tokenizer::testing {

inline std::string GoldenDir() { return std::string(CLOVER_SHARED_DIR) + "/golden/tokenizer"; }

// Returns every line of a JSONL golden, parsed keeping key order and int vs float.
inline std::vector<nlohmann::ordered_json> ReadJsonl(const std::string& name) {
  std::vector<nlohmann::ordered_json> out;
  std::ifstream in(GoldenDir() + "/" + name);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(nlohmann::ordered_json::parse(line));
  }
  return out;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace clover::tokenizer::testing
