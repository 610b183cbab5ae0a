# Checks tools/train/model.py against the float64 clover-tiny golden (prefix, 3 previews, commit, coreset),
# the chunked delta rule against the per-token recurrence (outputs, states, gradients), and Muon's
# orthogonalization.
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blas  # noqa: E402,F401  (before torch)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import export  # noqa: E402
import model as clover  # noqa: E402
import muon  # noqa: E402


def check_orthogonalize():
    """muon.orthogonalize keeps a matrix's singular vectors and moves its singular values near 1: on
    matrices with singular values spread over 0.2-1, wide, tall and a stack of three; returns how far
    U^T O V is from diagonal (the singular vectors kept), and fails if a singular value leaves 0.6-1.25"""
    g = torch.Generator().manual_seed(3)
    worst = 0.0
    for shape in [(48, 80), (96, 40), (3, 64, 64)]:
        m, n = shape[-2:]
        u = torch.linalg.qr(torch.randn(*shape[:-2], m, m, generator=g, dtype=torch.float64))[0][..., :min(m, n)]
        v = torch.linalg.qr(torch.randn(*shape[:-2], n, n, generator=g, dtype=torch.float64))[0][..., :min(m, n)]
        sv = torch.linspace(0.2, 1.0, min(m, n), dtype=torch.float64)
        o = muon.orthogonalize(u @ torch.diag_embed(sv.expand(*shape[:-2], -1)) @ v.transpose(-1, -2))
        core = u.transpose(-1, -2) @ o @ v
        diag = torch.diagonal(core, dim1=-2, dim2=-1)
        off = (core - torch.diag_embed(diag)).abs().max().item()
        print(f"orthogonalize {shape}: singular values {diag.min().item():.2f}..{diag.max().item():.2f}, "
              f"off-diagonal {off:.1e}")
        if diag.min() < 0.6 or diag.max() > 1.25:
            off = float("inf")
        worst = max(worst, off)
    return worst


def check_chunk():
    """chunk_delta vs delta_step: random gates, T not a multiple of the chunk, a non-zero start state"""
    g = torch.Generator().manual_seed(0)
    B, T, h, dk, dv = 3, 37, 2, 5, 4
    q, k = (clover.l2norm(torch.randn(B, T, h, dk, generator=g)) for _ in range(2))
    v = torch.randn(B, T, h, dv, generator=g)
    gate = -torch.rand(B, T, h, generator=g) * 2
    beta = torch.rand(B, T, h, generator=g)
    S0 = torch.randn(B, h, dk, dv, generator=g)
    leaves = [x.requires_grad_() for x in (q, k, v, gate, beta, S0)]
    S, outs, states = S0, [], []
    for t in range(T):
        S = clover.delta_step(S, gate[:, t], k[:, t], v[:, t], beta[:, t])
        outs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, t]))
        states.append(S)
    ref_o, ref_S, ref_states = torch.stack(outs, 1), S, torch.stack(states, 1)
    o, S, state_after = clover.chunk_delta(q, k, v, gate, beta, S0, keep=True, chunk=8)
    pos = torch.tensor([0, 17, T - 1])
    picked = state_after(pos)
    worst = max((o - ref_o).abs().max().item(), (S - ref_S).abs().max().item(),
                (picked - ref_states[torch.arange(B), pos]).abs().max().item())
    w = torch.randn(B, T, h, dv, generator=g)
    grads = torch.autograd.grad((o * w).sum() + S.sum() + picked.sum(), leaves)
    ref = torch.autograd.grad((ref_o * w).sum() + ref_S.sum() + ref_states[torch.arange(B), pos].sum(), leaves)
    worst = max([worst] + [(a - b).abs().max().item() for a, b in zip(grads, ref)])
    print(f"chunk_delta vs delta_step (outputs, states, gradients): max |d| {worst:.2e}")
    return worst


def check_routed(cfg):
    """SparseMoe's per-expert gathered products vs every expert on every row with zero weights
    outside the top k (the definition): outputs and the gradients of x, router and experts"""
    torch.manual_seed(0)
    moe = clover.SparseMoe(cfg)
    x = torch.randn(3, 11, cfg["hidden_size"], requires_grad=True)
    w = moe._topk_weights(torch.softmax(moe.gate(x), -1), moe.topk)
    gu = torch.einsum("bth,efh->btef", x, moe.experts.gate_up_proj)
    h = F.silu(gu[..., :moe.ff]) * gu[..., moe.ff:] * w[..., None]
    dense = torch.einsum("btef,ehf->bth", h, moe.experts.down_proj)
    routed = moe._routed(x, w)
    leaves = [x, moe.gate.weight, moe.experts.gate_up_proj, moe.experts.down_proj]
    r = torch.randn_like(dense)
    ga, gb = (torch.autograd.grad((y * r).sum(), leaves, retain_graph=True) for y in (dense, routed))
    worst = max([(dense - routed).abs().max().item()] + [(a - b).abs().max().item() for a, b in zip(ga, gb)])
    print(f"routed experts vs dense (outputs, gradients): max |d| {worst:.2e}")
    return worst


def check_deepen(net, prefix, case):
    """deepen's new layers start as identities: the same causal and preview logits as `net`"""
    deeper = clover.deepen(net, 1)
    worst = 0.0
    with torch.no_grad():
        states = [net.new_state(), deeper.new_state()]
        a, b = (m.causal(prefix, st) for m, st in zip((net, deeper), states))
        worst = (a - b).abs().max().item()
        a, b = (m.preview(case, m.context_from_state(st)) for m, st in zip((net, deeper), states))
        worst = max(worst, (a - b).abs().max().item())
    print(f"deepen by one group ({len(deeper.model.layers)} layers) vs the model: max |d| {worst:.2e}")
    return worst


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/golden/clover-tiny"
    torch.set_default_dtype(torch.float64)
    cfg = json.load(open(os.path.join(root, "hf/config.json")))
    gold = json.load(open(os.path.join(root, "clover_golden.json")))
    net = clover.CloverForCausalLM(cfg)
    net.load_state_dict({k: v.double() for k, v in export.read_safetensors(
        os.path.join(root, "hf/model.safetensors")).items()})
    net.eval()
    worst = 0.0

    def cmp(name, got, want):
        nonlocal worst
        d = (got - torch.tensor(want, dtype=torch.float64)).abs().max().item()
        worst = max(worst, d)
        print(f"{name}: max |d| {d:.2e}")

    with torch.no_grad():
        st = net.new_state()
        cmp("prefix", net.causal(torch.tensor([gold["prefix"]]), st)[0], gold["prefix_logits"])
        for name, case in gold["cases"].items():
            tr = {}
            lg = net.preview(torch.tensor([case["block"]]), net.context_from_state(st),
                             preview_gdn=case["preview_gdn"], coreset=True, trace=tr)[0]
            cmp(name, lg, case["logits"])
            for layer, want in case["coreset"].items():
                info = tr["coreset"][int(layer)]
                kept = info["order"][0, :int(info["n"][0])].tolist()
                if kept != want["kept"]:
                    print(f"{name} layer {layer}: coreset {kept} != {want['kept']}")
                    worst = float("inf")
        lg = net.causal(torch.tensor([gold["commit"]["block"]]), st)[0]
        cmp("commit", lg, gold["commit"]["logits"][len(gold["prefix"]):])
    first_case = next(iter(gold["cases"].values()))["block"]
    worst = max(worst, check_chunk(), check_routed(cfg), check_orthogonalize(),
                check_deepen(net, torch.tensor([gold["prefix"]]), torch.tensor([first_case])))
    print("OK" if worst < 1e-6 else "MISMATCH")
    sys.exit(0 if worst < 1e-6 else 1)


if __name__ == "__main__":
    main()
