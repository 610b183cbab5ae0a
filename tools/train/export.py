# Writes the trained demo model as an HF-style folder (safetensors, config, tokenizer) plus golden logits.
import argparse
import hashlib
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blas  # noqa: E402,F401  (before torch)
import torch  # noqa: E402

import data  # noqa: E402
import model as clover  # noqa: E402
import tokenizer as bpe  # noqa: E402

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "chat_template.jinja")


def write_safetensors(path, tensors):
    """8-byte little-endian header length, JSON header (padded to 8 bytes with spaces), raw F32 data"""
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().to(torch.float32).contiguous()
        b = t.numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        raw = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, en = e["data_offsets"]
        out[name] = torch.frombuffer(bytearray(raw[b:en]), dtype=torch.float32).reshape(e["shape"])
    return out


def tokenizer_config(tok):
    n_base = len(tok.vocab) - len(bpe.ADDED)
    return {
        "add_bos_token": False, "add_prefix_space": False,
        "added_tokens_decoder": {str(n_base + i): {"content": a, "lstrip": False, "normalized": False,
                                                   "rstrip": False, "single_word": False, "special": sp}
                                 for i, (a, sp) in enumerate(bpe.ADDED)},
        "bos_token": None, "chat_template": open(TEMPLATE).read(), "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>", "errors": "replace", "mask_token": "<|mask|>", "model_max_length": 4096,
        "pad_token": "<|endoftext|>", "split_special_tokens": False, "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def rows(t):
    return [[float(f"{v:.7g}") for v in r] for r in t.tolist()]


def suppressed_argmax(logits, mask_id):
    lg = logits.clone()
    lg[:, mask_id] = float("-inf")
    return lg.argmax(-1).tolist()


@torch.no_grad()
def golden_case(net, tok, task, L, n_fixed_rows):
    """prefill, preview (bidirectional / causal GDN, coreset on), commit for one eval prompt"""
    mask_id = net.config["mask_token_id"]
    p = tok.encode(task["prompt"])
    c = tok.encode(task["completion"])
    st = net.new_state()
    pre = net.causal(torch.tensor([p]), st)[0]
    block = [mask_id] * L
    fixed = [0, 3, 5][:n_fixed_rows]
    for r in fixed:
        block[r] = c[r] if r < len(c) else tok.id("<|endoftext|>")
    # the last 4 prompt rows keep the file small; commit covers multi-row causal logits too
    out = {"prompt_text": task["prompt"], "prompt_ids": p, "block_start_pos": len(p),
           "prefill_rows": list(range(len(p) - 4, len(p))), "prefill_logits": rows(pre[-4:]), "cases": {}}
    argmax_bidir = None
    for mode in ("bidirectional", "causal"):
        tr = {}
        lg = net.preview(torch.tensor([block]), net.context_from_state(st), preview_gdn=mode, coreset=True,
                         trace=tr)[0]
        am = suppressed_argmax(lg, mask_id)
        if mode == "bidirectional":
            argmax_bidir = am
        cs = {str(i): {"kept": [int(e) for e in v["order"][0, :int(v["n"][0])]],
                       "n_by_mass": int(v["n_by_mass"][0])} for i, v in tr["coreset"].items()}
        out["cases"][f"preview_{mode}"] = {"preview_gdn": mode, "block": block, "fixed_rows": fixed,
                                           "logits": rows(lg), "argmax_mask_suppressed": am, "coreset": cs}
    commit = [b if b != mask_id else a for b, a in zip(block, argmax_bidir)]
    lg = net.causal(torch.tensor([commit]), st)[0]
    out["commit"] = {"block": commit, "logits": rows(lg), "next_token_argmax": int(lg[-1].argmax())}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="build-train")
    ap.add_argument("--out", default="models/clover-demo")
    ap.add_argument("--golden", default=None,
                    help="golden logits file (default: the test fixture for the default --out, "
                         "OUT/golden.json for any other, so a candidate never overwrites the fixture)")
    args = ap.parse_args()
    if args.golden is None:
        args.golden = ("tests/fixtures/clover-demo/golden.json" if args.out == ap.get_default("out")
                       else os.path.join(args.out, "golden.json"))
    ck = torch.load(os.path.join(args.work, "model.pt"))
    cfg = ck["config"]
    tok = bpe.Tokenizer.from_json(os.path.join(args.work, "tokenizer.json"))
    os.makedirs(args.out, exist_ok=True)

    st_path = os.path.join(args.out, "model.safetensors")
    write_safetensors(st_path, ck["state_dict"])
    digest = hashlib.sha256(open(st_path, "rb").read()).hexdigest()
    open(st_path + ".sha256", "w").write(f"{digest}  model.safetensors\n")
    json.dump(cfg, open(os.path.join(args.out, "config.json"), "w"), indent=2)
    json.dump(tok.to_json(), open(os.path.join(args.out, "tokenizer.json"), "w"), ensure_ascii=False)
    json.dump(tokenizer_config(tok), open(os.path.join(args.out, "tokenizer_config.json"), "w"), indent=2,
              ensure_ascii=False)
    eos = [tok.id("<|im_end|>"), tok.id("<|endoftext|>")]
    json.dump({"bos_token_id": tok.id("<|endoftext|>"), "eos_token_id": eos, "pad_token_id": eos[1],
               "do_sample": False}, open(os.path.join(args.out, "generation_config.json"), "w"), indent=2)
    tasks = data.checkpoint_eval_split(ck)
    with open(os.path.join(args.out, "eval_tasks.jsonl"), "w") as f:
        for t in tasks:
            f.write(json.dumps(data.eval_record(t)) + "\n")

    # golden logits from the weights exactly as written (f32 round trip through our reader)
    net = clover.CloverForCausalLM(cfg)
    net.load_state_dict(read_safetensors(st_path))
    net.eval()
    picks = [next(t for t in tasks if t["task"] == "add" and not t["enable_thinking"]),
             next(t for t in tasks if t["task"] == "recall" and t["enable_thinking"])]
    golden = {
        "model": args.out, "model_sha256": digest, "dtype": "float32",
        "mask_token_id": cfg["mask_token_id"],
        "config_resolved": {"preview_gdn": "bidirectional", "coreset_mass": cfg["diffusion"]["coreset_mass"],
                            "coreset_min_experts": cfg["diffusion"]["coreset_min_experts"],
                            "preview_topk": cfg["num_experts_per_tok"]},
        "note": "preview logits raw (mask column not suppressed); commit = the preview_bidirectional block with "
                "mask rows replaced by its argmax_mask_suppressed, run causally after the prompt",
        "prompts": [golden_case(net, tok, picks[0], 8, 3), golden_case(net, tok, picks[1], 8, 2)],
    }
    os.makedirs(os.path.dirname(args.golden), exist_ok=True)
    json.dump(golden, open(args.golden, "w"), separators=(",", ":"))
    print(f"wrote {args.out} (sha256 {digest[:16]}) and {args.golden}")


if __name__ == "__main__":
    main()
