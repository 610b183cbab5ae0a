# Held-out exact-match evaluation of the demo model in PyTorch: greedy AR and LowConfidence block diffusion.
import argparse
import collections
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blas  # noqa: E402,F401  (before torch)
import torch  # noqa: E402

import data  # noqa: E402
import model as clover  # noqa: E402
import tokenizer as bpe  # noqa: E402


def final_answer(text):
    """the text after </think> (thinking on) or the whole completion, as `clover eval` compares it"""
    return text.split("</think>")[-1].strip()


@torch.no_grad()
def ar_generate(net, prompt_ids, stop_ids, max_new=128):
    st = net.new_state()
    logits = net.causal(torch.tensor([prompt_ids]), st)
    out = []
    while len(out) < max_new:
        nxt = int(logits[0, -1].argmax())
        out.append(nxt)
        if nxt in stop_ids:
            break
        logits = net.causal(torch.tensor([[nxt]]), st)
    return out, len(out)


@torch.no_grad()
def diffusion_generate(net, prompt_ids, stop_ids, mask_id, tau=0.95, L=32, max_new=128, on_pass=None):
    """answer-aligned blocks; each preview pass fixes every masked row whose (mask-suppressed) top
    probability is >= tau, at least the most confident one (with diffusion.shift_logits a row's
    distribution is the row before it's); a full block is committed causally; stops
    once a stop id and every row before it are fixed (docs/decoding.md). Returns (tokens, passes) with
    passes = previews + one commit per block, the last block included, as the engine counts them.
    on_pass(block_ids) is called after every preview pass (evaluate.py --trace)."""
    shift = net.config["diffusion"]["shift_logits"]
    st = net.new_state()
    last = net.causal(torch.tensor([prompt_ids]), st)[0, -1]
    out, passes = [], 0
    while len(out) < max_new:
        block = torch.full((1, L), mask_id, dtype=torch.long)
        while True:
            logits = net.preview(block, net.context_from_state(st), coreset=True)[0]
            if shift:  # row j's token from row j - 1; row 0's from the last committed row
                logits = torch.cat([last[None], logits[:-1]], 0)
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
            if on_pass:
                on_pass(row)
            stops = [j for j, x in enumerate(row) if x in stop_ids]
            if stops and mask_id not in row[:stops[0]]:
                return out + row[:stops[0] + 1], passes + 1
            if mask_id not in row:
                break
        last = net.causal(block, st)[0, -1]
        passes += 1
        out += block[0].tolist()
    return out, passes


def run(net, tok, tasks, decoders=(("ar", None, None), ("diffusion", 0.95, 32))):
    stop_ids, mask_id = {tok.id("<|im_end|>"), tok.id("<|endoftext|>")}, tok.id("<|mask|>")
    rows = []
    for name, tau, L in decoders:
        ok, ntok, npass, by_task = 0, 0, 0, collections.defaultdict(lambda: [0, 0, 0, 0])
        t0 = time.time()
        for t in tasks:
            p = tok.encode(t["prompt"])
            if name == "ar":
                ids, passes = ar_generate(net, p, stop_ids)
            else:
                ids, passes = diffusion_generate(net, p, stop_ids, mask_id, tau, L)
            text = tok.decode([i for i in ids if i not in stop_ids])
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


def trace(net, tok, tasks, decoder):
    """how LowConfidence fills each block: which rows each pass fixes ('_' = still masked)"""
    _, tau, L = decoder
    stop_ids, mask_id = {tok.id("<|im_end|>"), tok.id("<|endoftext|>")}, tok.id("<|mask|>")
    for t in tasks:
        print(f"== {t['messages'][-1]['content']!r} thinking={t['enable_thinking']} expected {t['answer']!r}")
        passes = []
        show = lambda row: passes.append("".join("_" if i == mask_id else tok.decode([i]) for i in row))
        diffusion_generate(net, tok.encode(t["prompt"]), stop_ids, mask_id, tau, L, on_pass=show)
        for k, p in enumerate(passes):
            print(f"  pass {k + 1}: {p!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="build-train")
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--decoders", default="ar,diffusion:0.95:32", help="ar | diffusion:TAU:BLOCK, comma-separated")
    ap.add_argument("--out", default=None, help="JSON file for the result rows")
    ap.add_argument("--tasks", default=None, help="only these task families, comma-separated (e.g. tool_call,tool_reply)")
    ap.add_argument("--trace", action="store_true",
                    help="print the block after every diffusion pass (the first decoder that is diffusion) instead of scoring")
    args = ap.parse_args()
    torch.set_num_threads(1)  # blas.py holds OpenBLAS to one thread too
    ck = torch.load(os.path.join(args.work, "model.pt"))
    net = clover.CloverForCausalLM(ck["config"])
    net.load_state_dict(ck["state_dict"])
    net.eval()
    tok = bpe.Tokenizer.from_json(os.path.join(args.work, "tokenizer.json"))
    decs = []
    for d in args.decoders.split(","):
        f = d.split(":")
        decs.append(("ar", None, None) if f[0] == "ar" else ("diffusion", float(f[1]), int(f[2])))
    tasks = data.checkpoint_eval_split(ck)
    if args.tasks:
        tasks = [t for t in tasks if t["task"] in args.tasks.split(",")]
    if args.trace:
        trace(net, tok, tasks[:args.limit], next(d for d in decs if d[0] == "diffusion"))
        return
    res = run(net, tok, tasks[:args.limit], decs)
    print(json.dumps(res, indent=1))
    if args.out:
        json.dump(res, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
