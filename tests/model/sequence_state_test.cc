// SequenceState: page allocation from the shared pool, copy on write under snapshots, reset.
#include "model/sequence_state.h"

#include <gtest/gtest.h>

#include "model/random_weights.h"

namespace clover::model {
namespace {

TEST(SequenceStateTest, PagesComeFromThePoolAndReturnToIt) {
  const ModelConfig c = RandomModelConfig("tiny").value();  // one attention layer
  std::shared_ptr<KvPool> pool = KvPool::Create(4, c.kv_dim());
  {
    SequenceState a(c, pool), b(c, pool);
    a.PrepareAppend(9);  // positions 0..8: 3 pages
    a.set_length(9);
    b.PrepareAppend(4);
    b.set_length(4);
    EXPECT_EQ(pool->pages_in_use(), 4);
    a.Reset();
    EXPECT_EQ(pool->pages_in_use(), 1);
    a.PrepareAppend(2);  // reuses a freed page
    EXPECT_EQ(pool->pages_in_use(), 2);
  }
  EXPECT_EQ(pool->pages_in_use(), 0);
}

TEST(SequenceStateTest, SnapshotSharesPagesUntilAWrite) {
  const ModelConfig c = RandomModelConfig("tiny").value();
  const int layer = 3;  // the attention layer of the tiny shape
  std::shared_ptr<KvPool> pool = KvPool::Create(4, c.kv_dim());
  SequenceState s(c, pool);
  s.PrepareAppend(6);
  for (int64_t p = 0; p < 6; ++p) s.k_row(layer, p)[0] = static_cast<float>(p);
  s.set_length(6);
  s.conv_state(0)[0] = 1.5f;
  const SequenceSnapshot snap = s.Snapshot();
  EXPECT_EQ(pool->pages_in_use(), 2);  // shared, not copied

  s.PrepareAppend(7);  // position 6 lives in the shared second page: it is copied first
  EXPECT_EQ(pool->pages_in_use(), 3);
  s.k_row(layer, 6)[0] = 60.0f;
  s.k_row(layer, 5)[0] = -1.0f;  // only the private copy changes
  s.set_length(7);
  s.conv_state(0)[0] = 2.5f;

  s.Restore(snap);
  EXPECT_EQ(s.length(), 6);
  EXPECT_EQ(s.k_row(layer, 5)[0], 5.0f);
  EXPECT_EQ(s.conv_state(0)[0], 1.5f);
  EXPECT_EQ(pool->pages_in_use(), 2);  // the private copy went back to the pool
}

}  // namespace
}  // namespace clover::model
