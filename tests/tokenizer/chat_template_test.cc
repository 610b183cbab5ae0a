// Chat template renders against Python Jinja2 (byte-identical), error cases, and Qwen3 ids.
#include <gtest/gtest.h>

#include "golden_util.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace clover::tokenizer {
namespace {

using testing::GoldenDir;

TEST(ChatTemplate, RendersMatchPythonJinja2) {
  auto tok = Tokenizer::FromJsonFile(GoldenDir() + "/qwen3/tokenizer.json");
  ASSERT_TRUE(tok.ok()) << tok.status().message();
  std::map<std::string, ChatTemplate> templates;
  int total = 0, passed = 0, errors_expected = 0, ids_checked = 0;
  for (const auto& c : testing::ReadJsonl("chat_template_renders.jsonl")) {
    ++total;
    const std::string name = c.at("template");
    if (!templates.count(name)) {
      auto t = ChatTemplate::FromSource(
          testing::ReadText(GoldenDir() + "/templates/" + name + ".jinja"), name);
      ASSERT_TRUE(t.ok()) << t.status().message();
      templates.emplace(name, std::move(t).value());
    }
    nlohmann::ordered_json kwargs = c.at("kwargs");
    const bool add_generation_prompt = kwargs.value("add_generation_prompt", false);
    kwargs.erase("add_generation_prompt");
    auto out = templates.at(name).Render(c.at("messages"), c.at("tools"), add_generation_prompt, kwargs);
    const std::string label = name + "/" + c.at("case").get<std::string>() + " " + c.at("kwargs").dump();
    if (c.at("rendered").is_null()) {
      ++errors_expected;
      const std::string want = c.at("error").at("type").get<std::string>() + ": " +
                               c.at("error").at("message").get<std::string>();
      if (!out.ok() && out.status().message().find(want) != std::string::npos) {
        ++passed;
      } else {
        ADD_FAILURE() << label << ": expected error \"" << want << "\", got "
                      << (out.ok() ? "output" : out.status().message());
      }
      continue;
    }
    if (!out.ok()) {
      ADD_FAILURE() << label << ": " << out.status().message();
      continue;
    }
    if (*out != c.at("rendered").get<std::string>()) {
      ADD_FAILURE() << label << ": render differs\nwant " << c.at("rendered").dump()
                    << "\ngot  " << nlohmann::json(*out).dump();
      continue;
    }
    ++passed;
    if (c.contains("qwen3_ids")) {
      ++ids_checked;
      EXPECT_EQ(tok->Encode(*out), c.at("qwen3_ids").get<std::vector<int32_t>>()) << label;
    }
  }
  std::printf("chat_template_renders: %d/%d (%d expected errors, %d qwen3 id checks)\n", passed,
              total, errors_expected, ids_checked);
  EXPECT_EQ(total, 325);
}

TEST(ChatTemplate, LoadsFromTokenizerConfigAndModelDir) {
  auto from_dir = ChatTemplate::FromModelDir(GoldenDir() + "/qwen3");
  ASSERT_TRUE(from_dir.ok()) << from_dir.status().message();
  EXPECT_EQ(from_dir->source_text(), testing::ReadText(GoldenDir() + "/templates/qwen3.jinja"));

  nlohmann::json named = {{"chat_template",
                           {{{"name", "default"}, {"template", "D{{ messages|length }}"}},
                            {{"name", "tool_use"}, {"template", "T"}}}}};
  auto def = ChatTemplate::FromTokenizerConfig(named, "cfg");
  ASSERT_TRUE(def.ok());
  auto out = def->Render(nlohmann::ordered_json::array({1, 2}), nullptr, true);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "D2");
  auto missing = ChatTemplate::FromTokenizerConfig(named, "cfg", "rag");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("default, tool_use"), std::string::npos);
}

TEST(ChatTemplate, UnsupportedConstructNamesTemplateLineAndColumn) {
  auto t = ChatTemplate::FromSource("ok\n  {% include 'x.jinja' %}", "mytpl");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(t.status().message().find("template mytpl:2:6"), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("include"), std::string::npos);
  auto f = ChatTemplate::FromSource("{{ x | wordwrap }}", "t2");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("unsupported filter 'wordwrap'"), std::string::npos);
}

TEST(ChatTemplate, RecursionAndOutputAreBounded) {
  auto rec = ChatTemplate::FromSource("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "rec");
  ASSERT_TRUE(rec.ok());
  auto r = rec->Render(nlohmann::ordered_json::array(), nullptr, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  auto big = ChatTemplate::FromSource(
      "{% for i in range(100000) %}{{ 'x' * 100000 }}{% endfor %}", "big");
  ASSERT_TRUE(big.ok());
  auto b = big->Render(nlohmann::ordered_json::array(), nullptr, false);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kResourceExhausted);
  std::string chain = "{{ 1";
  for (int i = 0; i < 100000; ++i) chain += "+1";
  auto c = ChatTemplate::FromSource(chain + " }}", "chain");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kResourceExhausted);
  std::string deep(5000, '(');
  auto d = ChatTemplate::FromSource("{{ " + deep + " }}", "deep");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace clover::tokenizer
