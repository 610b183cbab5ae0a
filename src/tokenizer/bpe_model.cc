// BPE merge loop (rank-ordered heap over a linked list of symbols, as HF's `Word::merge_all`).
#include "tokenizer/bpe_model.h"

#include <queue>

#include "tokenizer/byte_level.h"

namespace clover::tokenizer {
namespace {

}  // namespace

Result<BpeModel> BpeModel::Create(std::vector<std::string> tokens,
                                  const std::vector<std::pair<std::string, std::string>>& merges,
                                  const std::string& source) {
  BpeModel m;
  *m.tokens_ = std::move(tokens);
  const std::vector<std::string>& toks = *m.tokens_;
  m.token_to_id_.Build(toks);
  const ByteLevel& bl = ByteLevel::Get();
  m.bytes_offset_.reserve(toks.size() + 1);
  m.bytes_.reserve(toks.size() * 6);
  for (const std::string& t : toks) {
    m.bytes_offset_.push_back(static_cast<uint32_t>(m.bytes_.size()));
    // Tokens outside the byte-level alphabet can never be produced by the merge loop, but
    // they still decode to their own text.
    if (!bl.DecodeAppend(t, &m.bytes_)) m.bytes_.append(t);
  }
  m.bytes_offset_.push_back(static_cast<uint32_t>(m.bytes_.size()));
  for (int b = 0; b < 256; ++b) {
    const int32_t id = m.TokenToId(bl.Encode(static_cast<unsigned char>(b)));
    if (id < 0) {
      return DataLoss(source + ": model.vocab lacks the byte-level token for byte " +
                      std::to_string(b) + " (\"" + bl.Encode(static_cast<unsigned char>(b)) +
                      "\"); expected all 256 byte tokens");
    }
    m.byte_to_id_[b] = id;
  }
  m.merges_.Reserve(merges.size());
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    const int32_t ia = m.TokenToId(a), ib = m.TokenToId(b);
    joined.assign(a).append(b);
    const int32_t im = m.TokenToId(joined);
    if (ia < 0 || ib < 0 || im < 0) {
      return DataLoss(source + ": model.merges[" + std::to_string(rank) + "] \"" + a + " " + b +
                      "\" uses a token missing from model.vocab");
    }
    // A repeated pair keeps its first (highest-priority) rank.
    m.merges_.Insert(ia, ib, static_cast<int32_t>(rank), im);
  }
  return m;
}

int32_t BpeModel::TokenToId(std::string_view token) const { return token_to_id_.Find(token); }

void BpeModel::Encode(std::string_view piece, std::vector<int32_t>* ids) const {
  if (piece.empty()) return;
  if (piece.size() == 1) {
    ids->push_back(byte_to_id_[static_cast<unsigned char>(piece[0])]);
    return;
  }
  const bool cacheable = piece.size() <= kCacheMaxPieceBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->mu);
    auto it = cache_->map.find(std::string(piece));
    if (it != cache_->map.end()) {
      ids->insert(ids->end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t before = ids->size();
  MergeLoop(piece, ids);
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->mu);
    if (cache_->map.size() < kCacheEntries) {
      cache_->map.emplace(std::string(piece),
                          std::vector<int32_t>(ids->begin() + before, ids->end()));
    }
  }
}

void BpeModel::MergeLoop(std::string_view piece, std::vector<int32_t>* ids) const {
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
    bool alive;
  };
  struct Candidate {
    int32_t rank;
    int32_t pos;
    int32_t merged_id;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap_storage;
  symbols.clear();
  heap_storage.clear();
  const int32_t n = static_cast<int32_t>(piece.size());
  for (int32_t i = 0; i < n; ++i) {
    symbols.push_back({byte_to_id_[static_cast<unsigned char>(piece[i])], i - 1,
                       i + 1 < n ? i + 1 : -1, true});
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap(
      std::greater<Candidate>(), std::move(heap_storage));
  auto push_pair = [&](int32_t left) {
    const int32_t right = symbols[left].next;
    if (right < 0) return;
    if (const MergeTable::Entry* m = merges_.Find(symbols[left].id, symbols[right].id)) {
      heap.push({m->rank, left, m->merged_id});
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) push_pair(i);
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    // Stale entry: one side merged since this candidate was queued.
    const MergeTable::Entry* m = merges_.Find(left.id, right.id);
    if (m == nullptr || m->rank != top.rank) continue;
    left.id = top.merged_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) push_pair(left.prev);
    push_pair(top.pos);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) ids->push_back(symbols[i].id);
}

}  // namespace clover::tokenizer
