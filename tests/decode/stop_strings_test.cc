// Tests of the streaming stop-string matcher.
#include "decode/stop_strings.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace clover::decode {
namespace {

TEST(StopStrings, FindsAStopSplitAcrossChunks) {
  StopStringMatcher m({"</answer>"});
  auto a = m.Append("abc</an");
  EXPECT_EQ(a.text, "abc");
  EXPECT_FALSE(a.stopped);
  auto b = m.Append("swer>tail");
  EXPECT_EQ(b.text, "");
  EXPECT_TRUE(b.stopped);
  EXPECT_EQ(b.stop, "</answer>");
  EXPECT_EQ(b.stop_at, 3u);
  EXPECT_TRUE(m.Append("more").text.empty());
  EXPECT_EQ(m.Flush(), "");
}

TEST(StopStrings, ReleasesHeldTextWhenTheStopDoesNotContinue) {
  StopStringMatcher m({"<x>"});
  EXPECT_EQ(m.Append("ab<").text, "ab");
  EXPECT_EQ(m.Append("y").text, "<y");
  EXPECT_EQ(m.Append("<").text, "");
  EXPECT_EQ(m.Flush(), "<");
}

TEST(StopStrings, TheEarliestStopWins) {
  StopStringMatcher m({"world", "lo w"});
  auto o = m.Append("hello world");
  EXPECT_TRUE(o.stopped);
  EXPECT_EQ(o.text, "hel");
  EXPECT_EQ(o.stop, "lo w");
}

TEST(StopStrings, HoldsTheLongestPossibleStart) {
  StopStringMatcher m({"aab"});
  EXPECT_EQ(m.Append("xaa").text, "x");
  auto o = m.Append("ab");  // "aaab" contains "aab" at 1
  EXPECT_TRUE(o.stopped);
  EXPECT_EQ(o.text, "a");
}

TEST(StopStrings, MatchesStopsSpanningManyOneCharacterChunks) {
  StopStringMatcher m({"STOP"});
  std::string out;
  bool stopped = false;
  size_t stop_at = 0;
  for (char c : std::string("xxSTSTOPyy")) {
    auto o = m.Append(std::string(1, c));
    out += o.text;
    if (o.stopped) stop_at = o.stop_at;
    stopped = stopped || o.stopped;
  }
  EXPECT_EQ(stop_at, 4u);
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "xxST");
  EXPECT_EQ(m.Append("z").stop_at, 0u);  // nothing after a stop
}

TEST(StopStrings, HoldsAnUnfinishedUtf8Sequence) {
  StopStringMatcher m({});
  EXPECT_EQ(m.Append("a\xC3").text, "a");
  EXPECT_EQ(m.Append("\xA9").text, "\xC3\xA9");
  EXPECT_EQ(m.Append("\xF0\x9F\x98").text, "");
  EXPECT_EQ(m.Append("\x80!").text, "\xF0\x9F\x98\x80!");
}

TEST(StopStrings, EmptyStopsAreIgnored) {
  StopStringMatcher m({""});
  EXPECT_EQ(m.Append("abc").text, "abc");
  EXPECT_FALSE(m.stopped());
}

TEST(StopIds, Membership) {
  const std::vector<int32_t> ids = {3, 9};
  EXPECT_TRUE(IsStopId(9, ids));
  EXPECT_FALSE(IsStopId(4, ids));
}

}  // namespace
}  // namespace clover::decode
