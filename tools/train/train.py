# Trains the demo Clover model: causal next-token loss + block-diffusion loss through the preview path.
import argparse
import ctypes
import json
import math
import os
import random
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blas  # noqa: E402,F401  (before torch)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import data  # noqa: E402
import evaluate  # noqa: E402
import export  # noqa: E402
import model as clover  # noqa: E402
import muon  # noqa: E402
import tokenizer as bpe  # noqa: E402

BLOCK_SIZES = [8, 16, 32, 32]  # drawn per step; the engine may run blocks of 8, 16 or 32
LONG_PROMPT = 128  # tokens; tool prompts (the tools in the system turn) are 200-400, all others < 80


def build_tokenizer(train_tasks, vocab_size):
    texts = [t["prompt"] + t["completion"] for t in train_tasks[:20000]]
    vocab, merges = bpe.train_bpe(texts, vocab_size)
    return bpe.Tokenizer(vocab, merges)


def encode_all(tok, tasks):
    return [(tok.encode(t["prompt"]), tok.encode(t["completion"])) for t in tasks]


def make_batch(examples, idx, L, pad_id, mask_id, rng, shift=False):
    """rows: prompt + completion + padding; one answer-aligned block per row, partly masked.
    shift: block row i predicts the token of row i + 1 (diffusion.shift_logits); row 0's token is
    the causal pass's next-token prediction, so the diffusion targets start at row 1.
    The causal rows stop at the longest row's last token that has a target: the blocks' padding
    past the answers is only read by the preview, and a causal pass over it (a fifth of the
    tokens) changes neither the loss nor the contexts at block starts (all before it)."""
    starts, lens = [], []
    for i in idx:
        p, c = examples[i]
        nblk = (len(c) + L - 1) // L
        starts.append(len(p) + rng.randrange(nblk) * L)
        lens.append(len(p) + nblk * L)
    T = max(lens)
    ids = torch.full((len(idx), T), pad_id, dtype=torch.long)
    ar_tgt = torch.full((len(idx), T), -100, dtype=torch.long)
    for r, i in enumerate(idx):
        p, c = examples[i]
        ids[r, :len(p) + len(c)] = torch.tensor(p + c)
        ar_tgt[r, len(p) - 1:len(p) + len(c) - 1] = torch.tensor(c)
    starts = torch.tensor(starts)
    block = block_at(ids, starts, L)
    ratio = torch.tensor([rng.uniform(0.05, 1.0) for _ in idx])[:, None]
    u = torch.tensor([[rng.random() for _ in range(L)] for _ in idx])
    masked = u < ratio
    first = 1 if shift else 0  # at least one masked row per block that the loss sees
    masked[torch.arange(len(idx)), first + u[:, first:].argmin(1)] = True
    noisy, diff_tgt = mask_block(block, masked, mask_id, shift)
    causal_T = max(sum(map(len, examples[i])) for i in idx) - 1
    return ids[:, :causal_T], ar_tgt[:, :causal_T], starts, block, noisy, diff_tgt


def block_at(ids, starts, L):
    """each row's L tokens from its block start"""
    return ids[torch.arange(len(starts))[:, None], starts[:, None] + torch.arange(L)[None, :]]


def mask_block(block, masked, mask_id, shift):
    """the preview's input (masked rows replaced by the mask id) and its targets (the masked rows'
    tokens, -100 elsewhere; with shift, row i is scored against the token of row i + 1)"""
    noisy = block.masked_fill(masked, mask_id)
    diff_tgt = block.masked_fill(~masked, -100)
    if shift:
        diff_tgt = torch.cat([diff_tgt[:, 1:], torch.full((len(block), 1), -100, dtype=torch.long)], 1)
    return noisy, diff_tgt


def order_masks(net, ctx, block, noisy, diff_tgt, mask_id, frac, shift, rng, sure_wrong=0.0):
    """For a `frac` share of the rows, keeps the number of masked block rows but moves the masks to the
    rows the model is least sure of in a preview of the fully masked block: LowConfidence fixes the
    confident rows first, so the states the decoder meets hold the hard rows still masked around
    fixed easy ones, which uniformly random masks rarely draw. With shift, row j's token is scored
    by preview row j - 1 and row 0's by the causal pass, so row 0 is never chosen.
    sure_wrong > 0: of that share, a row whose fully masked preview puts a wrong token at confidence
    >= sure_wrong (what the decoder's first pass would fix at a threshold up to it) trains on the
    fully masked block instead: ordering would unmask exactly that confident row, so its error
    would never meet the loss. Returns the masked block, its targets and the number of such rows."""
    B, L = noisy.shape
    pick = torch.tensor([rng.random() < frac for _ in range(B)])
    if not pick.any():
        return noisy, diff_tgt, 0
    with torch.no_grad():
        conf, guess = net.preview(torch.full_like(noisy, mask_id), ctx).softmax(-1).max(-1)
    if shift:
        conf = torch.cat([torch.full((B, 1), float("inf")), conf[:, :-1]], 1)
        guess = torch.cat([block[:, :1], guess[:, :-1]], 1)
    order = conf.argsort(1)  # least confident first
    count = (noisy == mask_id).sum(1, keepdim=True)
    if shift:  # row 0 counted as masked scores nothing; it stays where the random draw put it
        count = count - (noisy[:, :1] == mask_id).long()
    ordered = torch.zeros_like(noisy, dtype=torch.bool)
    ordered.scatter_(1, order, torch.arange(L)[None, :].expand(B, L) < count.clamp(min=1))
    if shift:
        ordered[:, 0] = noisy[:, 0] == mask_id
    masked = torch.where(pick[:, None], ordered, noisy == mask_id)
    wrong = torch.zeros(B, dtype=torch.bool)
    if sure_wrong > 0:
        wrong = pick & ((conf >= sure_wrong) & (guess != block)).any(1)
        masked[wrong, 1 if shift else 0:] = True
    noisy, diff_tgt = mask_block(block, masked, mask_id, shift)
    return noisy, diff_tgt, int(wrong.sum())


def draw_rows(lengths, bucket, budget, rng):
    """rows from one length bucket until the padded batch (rows x longest) would pass `budget` tokens:
    mixing a 300-token tool prompt into a batch of 40-token rows would pad every row to 300"""
    idx, longest = [], 0
    while True:
        i = bucket[rng.randrange(len(bucket))]
        longest2 = max(longest, lengths[i])
        if idx and (len(idx) + 1) * longest2 > budget:
            return idx
        idx.append(i)
        longest = longest2


def is_hidden_matrix(name, p):
    """Muon's share: the decoder layers' projection and expert matrices (2-D, or 3-D stacks of experts),
    not the embedding, the output head, convolutions or the small router and gate rows"""
    return (name.startswith("model.layers.") and p.dim() in (2, 3) and min(p.shape[-2:]) >= 16
            and "conv1d" not in name)


def average_gradients(params, procs):
    """data parallelism by hand: the experts a process's rows did not route to have no gradient
    there, so every parameter's gradient (zero where absent) goes into one buffer, summed across
    the processes in one all-reduce, and divided; every process then takes the same optimizer step"""
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= procs
    at = 0
    for p, g in zip(params, grads):
        p.grad = flat[at:at + g.numel()].view_as(g)
        at += g.numel()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="build-train", help="output folder for tokenizer + checkpoint")
    ap.add_argument("--steps", type=int, default=4400)
    ap.add_argument("--batch-tokens", type=int, default=2048, help="padded tokens per step (rows x longest row)")
    ap.add_argument("--long-frac", type=float, default=0.3,
                    help="fraction of steps drawn from the long-prompt (tool) bucket")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=INT",
                    help="override an integer field of model.DEMO_CONFIG (new models only)")
    ap.add_argument("--partial-rotary", type=float, default=None, metavar="F",
                    help="rope_parameters.partial_rotary_factor of a new model (DEMO_CONFIG: 0.25)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--muon-lr", type=float, default=0.0, metavar="LR",
                    help="train the hidden layers' weight matrices with Muon at this rate (the rest keeps "
                         "AdamW at --lr, both on the same schedule); 0: AdamW for everything")
    ap.add_argument("--train-tasks", type=int, default=150000)
    ap.add_argument("--families", default="default",
                    help="task families: default (all but the tool tasks), all, or comma-separated names")
    ap.add_argument("--weights", default="",
                    help="training mix weights that differ from data.TASKS', e.g. recall=4,sort=4 ('' for none)")
    ap.add_argument("--show-work", default=",".join(sorted(data.SHOW_WORK_TASKS)),
                    help="tasks whose thinking-off answers show the working before the result (add, sub, recall)")
    ap.add_argument("--diff-weight", type=float, default=1.0, help="weight of the diffusion loss")
    ap.add_argument("--ordered-masks", type=float, default=0.0, metavar="F",
                    help="fraction of rows whose block mask is the model's own least confident rows (from a "
                         "no-grad preview of the fully masked block) instead of uniformly random ones")
    ap.add_argument("--sure-wrong-masks", type=float, default=0.0, metavar="CONF",
                    help="with --ordered-masks: an ordered row whose fully masked preview is wrong at confidence "
                         ">= CONF in some block row trains on the fully masked block (0: off)")
    ap.add_argument("--shift-logits", action="store_true",
                    help="train the preview to predict each row's next token (config diffusion.shift_logits)")
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1, help="torch threads per process")
    ap.add_argument("--procs", type=int, default=1,
                    help="data-parallel processes, one per core: each draws its own rows (--batch-tokens / "
                         "procs of them) and the gradients are averaged every step")
    ap.add_argument("--eval-limit", type=int, default=300)
    ap.add_argument("--resume", action="store_true", help="start from WORK/model.pt (fresh optimizer and schedule)")
    ap.add_argument("--init", default=None, metavar="MODEL_DIR",
                    help="fine-tune an exported model (config.json, tokenizer.json, model.safetensors): its "
                         "tokenizer is kept, so a changed --weights mix does not change the vocabulary")
    ap.add_argument("--deepen", type=int, default=0, metavar="GROUPS",
                    help="with --init: insert GROUPS more groups of layers (one full_attention_interval: "
                         "linear ..., full) in the middle, each layer an identity at first (zero output "
                         "projections), and train the deeper model")
    args = ap.parse_args()
    if args.deepen and not args.init:
        ap.error("--deepen needs --init")
    if args.sure_wrong_masks and not args.ordered_masks:
        ap.error("--sure-wrong-masks needs --ordered-masks")
    if args.procs > 1:
        with socket.socket() as sock:  # a free port for the processes' rendezvous
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        mp.spawn(train, args=(args, port, os.getpid()), nprocs=args.procs)
    else:
        train(0, args, None)


def exit_with_launcher(launcher_pid):
    """Ends this rank when the mp.spawn launcher dies: the ranks only wait on each other, so a
    killed launcher would otherwise leave them training on the cores."""
    pr_set_pdeathsig = 1  # <linux/prctl.h>
    ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() != launcher_pid:  # it died before the prctl took effect
        sys.exit(1)


def train(rank, args, port, launcher_pid=None):
    if launcher_pid is not None:
        exit_with_launcher(launcher_pid)
    if port is not None:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=args.procs)
    lead = rank == 0  # logs, checkpoints and the evaluation
    log = print if lead else (lambda *a, **k: None)
    torch.set_num_threads(args.threads)  # more threads only spin when other jobs share the cores
    torch.set_flush_denormal(True)
    torch.manual_seed(args.seed)  # the same initial weights in every process
    # Each process draws its own rows and masks; the block size and length bucket of a step come from
    # one stream all processes share, so no process waits at the all-reduce for one that drew a
    # longer block (with one process it is the same stream, as before --procs).
    rng = random.Random(args.seed if args.procs == 1 else f"{args.seed}/{rank}")
    step_rng = rng if args.procs == 1 else random.Random(f"{args.seed}/steps")
    batch_tokens = args.batch_tokens // args.procs
    os.makedirs(args.work, exist_ok=True)

    t0 = time.time()
    families = data.parse_families(args.families)
    show_work = data.parse_show_work(args.show_work)
    tasks = data.generate(data.TRAIN_SEED, args.train_tasks, families, data.parse_weights(args.weights), show_work)
    if args.init:
        tok = bpe.Tokenizer.from_json(os.path.join(args.init, "tokenizer.json"))
    else:
        tok = build_tokenizer(tasks, args.vocab)
    if lead:
        json.dump(tok.to_json(), open(os.path.join(args.work, "tokenizer.json"), "w"), ensure_ascii=False)
    examples = encode_all(tok, tasks)
    pad_id, mask_id = tok.id("<|endoftext|>"), tok.id("<|mask|>")
    cfg = json.loads(json.dumps(clover.DEMO_CONFIG))
    cfg["vocab_size"], cfg["mask_token_id"] = len(tok.vocab), mask_id
    cfg["diffusion"]["shift_logits"] = args.shift_logits
    for kv in args.set:
        k, v = kv.split("=")
        if not isinstance(cfg.get(k), int):
            sys.exit(f"--set {kv}: {k} is not an integer field of DEMO_CONFIG")
        cfg[k] = int(v)
    if any(kv.split("=")[0] in ("num_hidden_layers", "full_attention_interval") for kv in args.set):
        n, unit = cfg["num_hidden_layers"], clover.layer_group(cfg)  # whichever --set came last
        cfg["layer_types"] = (unit * -(-n // len(unit)))[:n]
    if args.partial_rotary is not None:
        rope = cfg["rope_parameters"]
        rope["partial_rotary_factor"] = args.partial_rotary
        pairs = int(cfg["head_dim"] * args.partial_rotary) // 2  # mrope_section: Qwen's 3-way split of the pairs
        rope["mrope_section"] = [-(-pairs // 3), -(-pairs // 3), pairs - 2 * -(-pairs // 3)]
    lengths = [len(p) + len(c) + max(BLOCK_SIZES) for p, c in examples]  # block padding included
    long_rows = [i for i, (p, _) in enumerate(examples) if len(p) > LONG_PROMPT]
    short_rows = [i for i, (p, _) in enumerate(examples) if len(p) <= LONG_PROMPT]
    log(f"tokenizer {len(tok.vocab)} tokens, {len(examples)} tasks, {time.time() - t0:.0f}s", flush=True)

    net = clover.CloverForCausalLM(cfg)
    done = 0
    if args.init:
        cfg = json.load(open(os.path.join(args.init, "config.json")))
        net = clover.CloverForCausalLM(cfg)
        net.load_state_dict(export.read_safetensors(os.path.join(args.init, "model.safetensors")))
        log(f"initialized from {args.init}", flush=True)
        if args.deepen:
            net = clover.deepen(net, args.deepen)
            cfg = net.config
            log(f"deepened to {cfg['layer_types']}", flush=True)
    if args.resume:
        ck = torch.load(os.path.join(args.work, "model.pt"))
        cfg = ck["config"]
        net = clover.CloverForCausalLM(cfg)
        net.load_state_dict(ck["state_dict"])
        done = ck["step"]
        log(f"resumed after {done} steps", flush=True)
    log(f"parameters {sum(p.numel() for p in net.parameters()) / 1e6:.2f}M", flush=True)
    params = list(net.parameters())
    matrices = [p for n, p in net.named_parameters() if args.muon_lr > 0 and is_hidden_matrix(n, p)]
    taken = {id(p) for p in matrices}
    adamw = torch.optim.AdamW([p for p in params if id(p) not in taken], lr=args.lr, betas=(0.9, 0.98),
                              weight_decay=0.01)
    opts = [adamw]
    if matrices:
        opts.append(muon.Muon(matrices, lr=args.muon_lr, weight_decay=0.01, rank=rank, procs=args.procs))
    warm = min(100, args.steps // 10)

    def lr_at(s):
        if s < warm:
            return args.lr * (s + 1) / warm
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, args.steps - warm))))

    t_train = time.time()
    sure_wrong_rows = 0  # this process's, for the log
    for step in range(args.steps):
        for opt in opts:  # AdamW's rate exactly lr_at's, as before --muon-lr; Muon's on the same curve
            for gr in opt.param_groups:
                gr["lr"] = lr_at(step) if opt is adamw else lr_at(step) * args.muon_lr / args.lr
        L = step_rng.choice(BLOCK_SIZES)
        bucket = long_rows if long_rows and step_rng.random() < args.long_frac else short_rows
        idx = draw_rows(lengths, bucket, batch_tokens, rng)
        ids, ar_tgt, starts, block, noisy, diff_tgt = make_batch(examples, idx, L, pad_id, mask_id, rng,
                                                                 cfg["diffusion"]["shift_logits"])
        state = net.new_state()
        logits = net.causal(ids, state, keep_states=True)
        aux = net.aux
        loss_ar = F.cross_entropy(logits.flatten(0, 1), ar_tgt.flatten())
        ctx = net.context_at(state, starts)
        if args.ordered_masks > 0:
            noisy, diff_tgt, n_wrong = order_masks(net, ctx, block, noisy, diff_tgt, mask_id, args.ordered_masks,
                                                   cfg["diffusion"]["shift_logits"], rng, args.sure_wrong_masks)
            sure_wrong_rows += n_wrong
        plog = net.preview(noisy, ctx)
        aux = aux + net.aux
        loss_diff = F.cross_entropy(plog.flatten(0, 1), diff_tgt.flatten())
        loss = loss_ar + args.diff_weight * loss_diff + 0.01 * aux
        for opt in opts:
            opt.zero_grad()
        loss.backward()
        if args.procs > 1:
            average_gradients(params, args.procs)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        for opt in opts:
            opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            el = time.time() - t_train
            log(f"step {step} L {L} rows {len(idx)} ar {loss_ar.item():.4f} diff {loss_diff.item():.4f} aux {aux.item():.3f} "
                f"lr {lr_at(step):.2e} {el:.0f}s" + (f" sure-wrong rows {sure_wrong_rows}" if args.sure_wrong_masks else ""),
                flush=True)
        if lead and ((step + 1) % 50 == 0 or step == args.steps - 1):
            torch.save({"config": cfg, "state_dict": net.state_dict(), "step": done + step + 1,
                        "families": families, "show_work": args.show_work},
                       os.path.join(args.work, "model.pt"))
    log(f"training {time.time() - t_train:.0f}s", flush=True)

    if args.procs > 1:  # the all-reduce hands every process the same sum, so the weights agree exactly
        mine = torch.cat([p.detach().reshape(-1) for p in params])
        lead_weights = mine.clone()
        dist.broadcast(lead_weights, 0)
        if not torch.equal(mine, lead_weights):
            raise RuntimeError(f"process {rank}: weights differ from process 0's after training")
        dist.destroy_process_group()
    if args.eval_limit == 0 or not lead:
        return
    net.eval()
    res = evaluate.run(net, tok, data.eval_split(families=families, show_work=show_work)[:args.eval_limit])
    log(json.dumps(res, indent=1), flush=True)
    json.dump(res, open(os.path.join(args.work, "eval.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
