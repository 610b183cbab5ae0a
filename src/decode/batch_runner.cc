// BatchRunner: NextGroups -> one shared Forward -> Consume (docs/decoding.md "Driving decoders").
#include "decode/batch_runner.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace clover::decode {

using Clock = std::chrono::steady_clock;

struct BatchRunner::Sequence {
  Sequence(SequenceId id, Decoder& decoder, StepCallback on_step, model::SequenceState state)
      : id(id), decoder(decoder), on_step(std::move(on_step)), state(std::move(state)) {}

  // Groups of this sequence that go into the next forward: one, or a commit and the preview
  // right after it.
  size_t GroupsThisStep() const {
    const size_t left = groups.size() - next_group;
    if (left >= 2 && groups[next_group].mode == GroupMode::kAppend &&
        groups[next_group + 1].mode == GroupMode::kPreview)
      return 2;
    return left > 0 ? 1 : 0;
  }

  SequenceId id;
  Decoder& decoder;
  StepCallback on_step;
  model::SequenceState state;
  // The groups of the decoder's last NextGroups(): they run in order, because a later group may
  // read what an earlier one committed.
  std::vector<RowGroup> groups;
  size_t next_group = 0;
  std::vector<float> logits;  // requested rows of the groups run so far
  // The last captured append (RowGroup::capture), for the rollback a Consume may ask for.
  model::AppendCapture capture;
  bool captured = false;
  // What the decoder's previews keep between passes of a block (RowGroup::reuse).
  model::PreviewCache preview_cache;
  bool prefilled = false;
  GenerateResult result;
  Clock::time_point start = Clock::now();
};

BatchRunner::BatchRunner(const model::Model& model) : model_(model) {}
BatchRunner::~BatchRunner() = default;

BatchRunner::SequenceId BatchRunner::Add(Decoder& decoder, StepCallback on_step) {
  auto seq = std::make_unique<Sequence>(next_id_++, decoder, std::move(on_step), model_.NewSequence());
  seq->result.distinct_experts_sum.assign(model_.config().n_layers, 0);
  sequences_.push_back(std::move(seq));
  return sequences_.back()->id;
}

bool BatchRunner::Cancel(SequenceId id) {
  auto it = std::find_if(sequences_.begin(), sequences_.end(),
                         [id](const std::unique_ptr<Sequence>& s) { return s->id == id; });
  if (it == sequences_.end()) return false;
  std::unique_ptr<Sequence> seq = std::move(*it);
  sequences_.erase(it);
  seq->result.cancelled = true;
  cancelled_.push_back(Finish(std::move(seq), Status::Ok()));
  return true;
}

BatchRunner::Done BatchRunner::Finish(std::unique_ptr<Sequence> seq, Status status) {
  seq->result.counters = seq->decoder.counters();
  seq->result.seconds = std::chrono::duration<double>(Clock::now() - seq->start).count();
  return Done{seq->id, std::move(status), std::move(seq->result), std::move(seq->state)};
}

Status BatchRunner::ForwardGroups(const std::vector<Sequence*>& members) {
  model::ForwardBatch batch;
  // (sequence, group) in ForwardLogits order: appends, then previews. A fused sequence's commit
  // comes before its preview, which is also the order its decoder consumes them in.
  std::vector<std::pair<Sequence*, const RowGroup*>> order;
  for (const GroupMode mode : {GroupMode::kAppend, GroupMode::kPreview}) {
    for (Sequence* s : members) {
      for (size_t i = 0; i < s->GroupsThisStep(); ++i) {
        const RowGroup& g = s->groups[s->next_group + i];
        if (g.mode != mode) continue;
        std::vector<int64_t> rows(g.logit_rows.begin(), g.logit_rows.end());
        if (mode == GroupMode::kAppend) {
          batch.appends.push_back({&s->state, g.tokens, g.first_position, std::move(rows),
                                   g.capture ? &s->capture : nullptr});
          s->captured = g.capture;
        } else {
          model::PreviewGroup preview{&s->state, g.tokens, g.first_position, std::move(rows)};
          if (g.reuse) {
            preview.reuse = {&s->preview_cache, g.reuse->refresh,
                             {g.reuse->live_rows.begin(), g.reuse->live_rows.end()}};
          }
          batch.previews.push_back(std::move(preview));
        }
        order.emplace_back(s, &g);
      }
    }
  }
  CLOVER_ASSIGN_OR_RETURN(model::ForwardLogits out, model_.Forward(batch, scratch_));
  int64_t row = 0;
  for (const auto& [s, g] : order) {
    const int64_t n = static_cast<int64_t>(g->logit_rows.size());
    s->logits.insert(s->logits.end(), out.row(row), out.row(row) + n * out.vocab);
    row += n;
  }
  for (Sequence* s : members) {
    if (s->prefilled) {
      ++s->result.forward_calls;
      for (size_t il = 0; il < out.distinct_experts.size(); ++il)
        s->result.distinct_experts_sum[il] += out.distinct_experts[il];
    }
    s->prefilled = true;
    s->next_group += s->GroupsThisStep();
  }
  return Status::Ok();
}

std::vector<BatchRunner::Done> BatchRunner::Step() {
  std::vector<Done> done = std::move(cancelled_);
  cancelled_.clear();
  std::vector<std::pair<Sequence*, Status>> failed;

  std::vector<Sequence*> members;
  for (const std::unique_ptr<Sequence>& s : sequences_) {
    if (s->next_group == s->groups.size()) {
      s->groups = s->decoder.finished() ? std::vector<RowGroup>{} : s->decoder.NextGroups();
      s->next_group = 0;
      s->logits.clear();
      s->captured = false;
    }
    if (!s->groups.empty()) members.push_back(s.get());
  }
  if (!members.empty()) {
    Status batch_status = ForwardGroups(members);
    // The forward validates before it changes any state, so each group can be retried alone to
    // find the sequences at fault.
    if (!batch_status.ok()) {
      if (members.size() == 1) {
        failed.emplace_back(members[0], std::move(batch_status));
      } else {
        for (Sequence* s : members) {
          Status one = ForwardGroups({s});
          if (!one.ok()) failed.emplace_back(s, std::move(one));
        }
      }
    }
  }

  for (Sequence* s : members) {
    const bool at_fault = std::any_of(failed.begin(), failed.end(),
                                      [s](const auto& f) { return f.first == s; });
    if (at_fault || s->next_group < s->groups.size()) continue;
    Result<StepEvents> events = s->decoder.Consume(s->logits);
    if (!events.ok()) {
      failed.emplace_back(s, events.status());
      continue;
    }
    if (events->discarded > 0) {
      Status cut = s->captured ? model_.TruncateAppend(s->state, s->capture,
                                                       s->capture.rows - events->discarded)
                               : Internal("decode: the decoder discarded " +
                                          std::to_string(events->discarded) +
                                          " rows of an append it did not ask to capture");
      if (!cut.ok()) {
        failed.emplace_back(s, std::move(cut));
        continue;
      }
    }
    s->result.tokens.insert(s->result.tokens.end(), events->tokens.begin(), events->tokens.end());
    s->result.text += events->text;
    if (events->finish) s->result.finish = events->finish;
    if (s->on_step) s->on_step(*events);
  }

  // Sequences leave in their order of arrival.
  std::vector<std::unique_ptr<Sequence>> kept;
  for (std::unique_ptr<Sequence>& s : sequences_) {
    auto f = std::find_if(failed.begin(), failed.end(),
                          [&s](const auto& e) { return e.first == s.get(); });
    if (f != failed.end()) {
      done.push_back(Finish(std::move(s), std::move(f->second)));
    } else if (s->decoder.finished() || s->groups.empty()) {
      done.push_back(Finish(std::move(s), Status::Ok()));
    } else {
      kept.push_back(std::move(s));
    }
  }
  sequences_ = std::move(kept);
  return done;
}

}  // namespace clover::decode
