// The 70 Jinja feature snippets rendered by Python Jinja2 (the reference), one by one.
#include <gtest/gtest.h>

#include "golden_util.h"
#include "tokenizer/jinja/template.h"

namespace clover::tokenizer::jinja {
namespace {

TEST(JinjaSnippets, MatchPythonJinja2) {
  int total = 0, passed = 0;
  for (const auto& c : testing::ReadJsonl("jinja_snippets.jsonl")) {
    ++total;
    const std::string id = c.at("id");
    auto t = Template::Parse(c.at("template").get<std::string>(), id);
    Result<std::string> out = t.ok() ? t->RenderJson(c.at("context")) : Result<std::string>(t.status());
    if (c.at("rendered").is_null()) {
      const std::string want = c.at("error").at("type").get<std::string>() + ": " +
                               c.at("error").at("message").get<std::string>();
      if (!out.ok() && out.status().message().find(want) != std::string::npos) {
        ++passed;
      } else {
        ADD_FAILURE() << id << ": expected error \"" << want << "\", got "
                      << (out.ok() ? "output " + *out : out.status().message());
      }
      continue;
    }
    if (out.ok() && *out == c.at("rendered").get<std::string>()) {
      ++passed;
    } else {
      ADD_FAILURE() << id << ": want " << c.at("rendered").dump() << ", got "
                    << (out.ok() ? nlohmann::json(*out).dump() : out.status().message());
    }
  }
  std::printf("jinja_snippets: %d/%d\n", passed, total);
  EXPECT_EQ(total, 70);
}

}  // namespace
}  // namespace clover::tokenizer::jinja
