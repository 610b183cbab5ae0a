# Held-out exact-match evaluation of the demo model in PyTorch: greedy AR and LowConfidence block diffusion.
import collections
import time

import torch


def final_answer(text):
    """the text after </think> (thinking on) or the whole completion, as `clover eval` compares it"""
    return text.split("</think>")[-1].strip()


@torch.no_grad()
def ar_generate(net, prompt_ids, eos_id, max_new=128):
    st = net.new_state()
    logits = net.causal(torch.tensor([prompt_ids]), st)
    out = []
    while len(out) < max_new:
        nxt = int(logits[0, -1].argmax())
        out.append(nxt)
        if nxt == eos_id:
            break
        logits = net.causal(torch.tensor([[nxt]]), st)
    return out, len(out)


@torch.no_grad()
def diffusion_generate(net, prompt_ids, eos_id, mask_id, tau=0.95, L=32, max_new=128):
    """answer-aligned blocks; each preview pass fixes every masked row whose (mask-suppressed) top
    probability is >= tau, at least the most confident one; a full block is committed causally; stops
    once <|im_end|> and every row before it are fixed. Returns (tokens, preview passes)."""
    st = net.new_state()
    net.causal(torch.tensor([prompt_ids]), st)
    out, passes = [], 0
    while len(out) < max_new:
        block = torch.full((1, L), mask_id, dtype=torch.long)
        while True:
            logits = net.preview(block, net.context_from_state(st), coreset=True)[0]
            passes += 1
            logits[:, mask_id] = float("-inf")
            conf, arg = torch.softmax(logits, -1).max(-1)
            open_rows = block[0] == mask_id
            conf = conf.masked_fill(~open_rows, -1.0)
            pick = open_rows & (conf >= tau)
            if not pick.any():
                pick[conf.argmax()] = True
            block[0, pick] = arg[pick]
            row = block[0].tolist()
            if eos_id in row:
                e = row.index(eos_id)
                if mask_id not in row[:e]:
                    return out + row[:e + 1], passes
            if mask_id not in row:
                break
        net.causal(block, st)
        out += block[0].tolist()
    return out, passes


def run(net, tok, tasks, decoders=(("ar", None, None), ("diffusion", 0.95, 32))):
    eos_id, mask_id = tok.id("<|im_end|>"), tok.id("<|mask|>")
    rows = []
    for name, tau, L in decoders:
        ok, ntok, npass, by_task = 0, 0, 0, collections.defaultdict(lambda: [0, 0, 0, 0])
        t0 = time.time()
        for t in tasks:
            p = tok.encode(t["prompt"])
            if name == "ar":
                ids, passes = ar_generate(net, p, eos_id)
            else:
                ids, passes = diffusion_generate(net, p, eos_id, mask_id, tau, L)
            text = tok.decode([i for i in ids if i != eos_id])
            good = final_answer(text) == t["answer"]
            ok += good
            ntok += len(ids)
            npass += passes
            bt = by_task[t["task"]]
            bt[0] += good; bt[1] += 1; bt[2] += len(ids); bt[3] += passes
        rows.append({"decoder": name, "threshold": tau, "block": L, "tasks": len(tasks),
                     "accuracy": ok / len(tasks), "tokens_per_pass": ntok / npass,
                     "passes_per_answer": npass / len(tasks), "seconds": round(time.time() - t0, 1),
                     "by_task": {k: {"accuracy": v[0] / v[1], "tokens_per_pass": v[2] / v[3], "n": v[1]}
                                 for k, v in sorted(by_task.items())}})
    return rows
