# PyTorch Clover (clover_moe) model: causal path and block preview path, HF tensor names.
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

DEMO_CONFIG = {
    "architectures": ["CloverMoeForCausalLM"],
    "model_type": "clover_moe",
    "vocab_size": None,  # set from the tokenizer
    "hidden_size": 128,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "hidden_act": "silu",
    "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-06,
    "attention_bias": False,
    "attention_dropout": 0.0,
    "attn_output_gate": True,
    "tie_word_embeddings": False,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 32,
    "linear_value_head_dim": 32,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "moe_intermediate_size": 64,
    "shared_expert_intermediate_size": 128,
    "num_experts": 8,
    "num_experts_per_tok": 2,
    "norm_topk_prob": True,
    "full_attention_interval": 2,
    "layer_types": ["linear_attention", "full_attention", "linear_attention", "full_attention"],
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25,
                        "mrope_section": [2, 1, 1], "mrope_interleaved": True},
    "mtp_num_hidden_layers": 0,
    "dtype": "float32",
    "mask_token_id": None,  # set from the tokenizer
    "diffusion": {"block_size": 32, "shift_logits": False, "block_alignment": "answer",
                  "coreset_mass": 0.9, "coreset_min_experts": 4},
}


def repeat_heads(x, r):
    """[B,T,h,d] -> [B,T,h*r,d], head j reading head j // r (repeat_interleave on dim 2, whose
    index_select path in torch 1.13 was several times slower than this copy)"""
    B, T, h, d = x.shape
    return x[:, :, :, None].expand(B, T, h, r, d).reshape(B, T, h * r, d)


def l2norm(x):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + 1e-6)


class ZeroCentredNorm(nn.Module):
    """Qwen3.5 RMSNorm: x / rms(x) * (1 + w), w stored zero-centred"""

    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.eps) * (1.0 + self.weight)


class PlainNorm(nn.Module):
    """the GDN output norm: weight used as stored"""

    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.eps) * self.weight


def delta_step(S, g, k, v, beta):
    """the per-token recurrence (reference for chunk_delta): S [B,h,dk,dv]; g, beta [B,h]; k [B,h,dk]; v [B,h,dv]"""
    S = S * torch.exp(g)[..., None, None]
    kv = torch.einsum("bhkv,bhk->bhv", S, k)
    return S + k[..., :, None] * ((v - kv) * beta[..., None])[..., None, :]


CHUNK = 16


def chunk_delta(q, k, v, g, beta, S0, keep=False, chunk=CHUNK):
    """delta_step over T rows in chunks (WY form): q, k [B,T,h,dk]; v [B,T,h,dv]; g, beta [B,T,h];
    S0 [B,h,dk,dv]. Returns o [B,T,h,dv] with o_t = S_t^T q_t, the final state, and with keep a function
    giving the state after row p[b] for each batch row (training contexts).
    Inside a chunk with cumulative log decay G_t, S_t = e^G_t S0 + sum_{i<=t} e^(G_t-G_i) k_i u_i^T where
    (I + A) u = beta v - beta e^G K S0, A_ti = beta_t e^(G_t-G_i) k_t.k_i (i < t): a unit lower-triangular
    solve per chunk replaces the per-row loop; only the chunk-to-chunk state update stays sequential."""
    B, T, h, dk = k.shape
    dv = v.shape[-1]
    C = min(chunk, T)
    N = -(-T // C)
    pad = N * C - T
    if pad:  # g = beta = 0 and k = 0 rows leave the state unchanged
        q, k, v = (F.pad(x, (0, 0, 0, 0, 0, pad)) for x in (q, k, v))
        g, beta = (F.pad(x, (0, 0, 0, pad)) for x in (g, beta))

    def blocks(x):  # [B,N*C,h,...] -> [B,h,N,C,...]
        return x.reshape(B, N, C, h, *x.shape[3:]).movedim(3, 1)

    q, k, v, g, beta = blocks(q), blocks(k), blocks(v), blocks(g), blocks(beta)
    G = g.cumsum(-1)
    incl = torch.ones(C, C, dtype=torch.bool).tril()
    decay = torch.exp((G[..., :, None] - G[..., None, :]).masked_fill(~incl, float("-inf")))
    A = (beta[..., None] * decay * (k @ k.transpose(-1, -2))).tril(-1)
    eG = torch.exp(G)
    rhs = torch.cat([beta[..., None] * v, (beta * eG)[..., None] * k], -1)
    X = torch.linalg.solve_triangular(A + torch.eye(C), rhs, upper=False, unitriangular=True)
    U0, W = X[..., :dv], X[..., dv:]
    qk = (q @ k.transpose(-1, -2)) * decay
    qg = q * eG[..., None]
    k_end = k * torch.exp(G[..., -1:] - G)[..., None]
    # The four products a chunk needs are two: the left factors that share a right factor are stacked
    # (W over qg times S, qk over k_end^T times U). A bmm of small matrices costs about one BLAS
    # call per batch row whatever its size, and the chunk loop is all such calls, forward and back.
    # unbind, not [:, :, n]: each slice's backward would write a gradient the size of the whole tensor
    S, outs, Us, starts = S0, [], [], []
    per_chunk = (x.unbind(2) for x in (U0, torch.cat([W, qg], -2), torch.cat([qk, k_end.transpose(-1, -2)], -2),
                                        eG[..., -1, None, None]))
    for U0n, W_qg_n, qk_k_end_n, end_decay_n in zip(*per_chunk):
        starts.append(S)
        WS, qgS = (W_qg_n @ S).split(C, -2)
        U = U0n - WS
        qkU, k_end_U = (qk_k_end_n @ U).split([C, dk], -2)
        outs.append(qgS + qkU)
        S = end_decay_n * S + k_end_U
        Us.append(U)
    o = torch.stack(outs, 2).movedim(1, 3).reshape(B, N * C, h, dv)[:, :T]
    if not keep:
        return o, S, None
    S_starts, U = torch.stack(starts, 2), torch.stack(Us, 2)

    def state_after(p):
        ar, c, j = torch.arange(B), p // C, p % C
        Gc = G[ar, :, c]  # [B,h,C]
        Gj = Gc.gather(-1, j[:, None, None].expand(B, h, 1))
        w = torch.exp((Gj - Gc).masked_fill(torch.arange(C)[None, None, :] > j[:, None, None], float("-inf")))
        return (torch.exp(Gj)[..., None] * S_starts[ar, :, c]
                + torch.einsum("bhi,bhik,bhiv->bhkv", w, k[ar, :, c], U[ar, :, c]))

    return o, S, state_after


class GatedDeltaNet(nn.Module):
    def __init__(self, c):
        super().__init__()
        H, eps = c["hidden_size"], c["rms_norm_eps"]
        self.nk, self.nv = c["linear_num_key_heads"], c["linear_num_value_heads"]
        self.dk, self.dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
        self.K = c["linear_conv_kernel_dim"]
        self.C = 2 * self.nk * self.dk + self.nv * self.dv
        self.in_proj_qkv = nn.Linear(H, self.C, bias=False)
        self.in_proj_z = nn.Linear(H, self.nv * self.dv, bias=False)
        self.in_proj_b = nn.Linear(H, self.nv, bias=False)
        self.in_proj_a = nn.Linear(H, self.nv, bias=False)
        self.conv1d = nn.Conv1d(self.C, self.C, self.K, groups=self.C, bias=False)
        self.dt_bias = nn.Parameter(torch.empty(self.nv).uniform_(-1, 1))
        self.A_log = nn.Parameter(torch.log(torch.empty(self.nv).uniform_(0.05, 1)))
        self.norm = PlainNorm(self.dv, eps)
        self.out_proj = nn.Linear(self.nv * self.dv, H, bias=False)
        self.preview_conv1d = nn.Conv1d(self.C, self.C, self.K, groups=self.C, bias=False)
        self.preview_in_proj_b = nn.Linear(H, self.nv, bias=False)
        self.preview_in_proj_a = nn.Linear(H, self.nv, bias=False)
        self.preview_A_log = nn.Parameter(torch.log(torch.empty(self.nv).uniform_(0.05, 1)))
        self.preview_dt_bias = nn.Parameter(torch.empty(self.nv).uniform_(-1, 1))
        self.preview_mix = nn.Parameter(torch.zeros(self.nv))

    def _split(self, co):
        B, T, _ = co.shape
        nk, nv, dk, dv, r = self.nk, self.nv, self.dk, self.dv, self.nv // self.nk
        q = co[..., :nk * dk].reshape(B, T, nk, dk)
        k = co[..., nk * dk:2 * nk * dk].reshape(B, T, nk, dk)
        v = co[..., 2 * nk * dk:].reshape(B, T, nv, dv)
        # HF grouped order: v-head j reads k-head j // r
        return repeat_heads(l2norm(q), r), repeat_heads(l2norm(k), r), v

    def forward(self, x, st, mode, keep_states=False):
        """mode None: causal, updates st (conv [B,K-1,C], S [B,nv,dk,dv]); 'causal'|'bidirectional': preview,
        reads st only. keep_states: also returns per-row states and pre-conv rows (training contexts)."""
        B, T, _ = x.shape
        m = self.in_proj_qkv(x)
        z = self.in_proj_z(x).reshape(B, T, self.nv, self.dv)
        conv0 = st["conv"] if st.get("conv") is not None else x.new_zeros(B, self.K - 1, self.C)
        xin = torch.cat([conv0, m], 1)
        co = F.silu(F.conv1d(xin.transpose(1, 2), self.conv1d.weight, groups=self.C).transpose(1, 2))
        q, k, v = self._split(co)
        q = q / math.sqrt(self.dk)
        beta = torch.sigmoid(self.in_proj_b(x))
        g = -torch.exp(self.A_log) * F.softplus(self.in_proj_a(x) + self.dt_bias)
        S = st["S"] if st.get("S") is not None else x.new_zeros(B, self.nv, self.dk, self.dv)
        o, S, state_after = chunk_delta(q, k, v, g, beta, S, keep_states)
        trace = {"fwd": o}
        if mode is None:
            st["conv"], st["S"] = xin[:, -(self.K - 1):], S
        if keep_states:
            st["state_after"], st["m_all"] = state_after, m
        if mode == "bidirectional":
            mp = torch.cat([m, m.new_zeros(B, self.K - 1, self.C)], 1)
            cob = F.silu(F.conv1d(mp.transpose(1, 2), self.preview_conv1d.weight, groups=self.C).transpose(1, 2))
            _, kb, vb = self._split(cob)  # the backward branch is read with the forward query
            betab = torch.sigmoid(self.preview_in_proj_b(x))
            gb = -torch.exp(self.preview_A_log) * F.softplus(self.preview_in_proj_a(x) + self.preview_dt_bias)
            # anti-causal and exclusive: row t reads the state after rows T-1..t+1. On the flipped rows
            # that is the inclusive output one row earlier, so row t's query moves one row down.
            qr = torch.cat([q.flip(1)[:, 1:], q.new_zeros(B, 1, self.nv, self.dk)], 1)
            o_r, _, _ = chunk_delta(qr, kb.flip(1), vb.flip(1), gb.flip(1), betab.flip(1),
                                    x.new_zeros(B, self.nv, self.dk, self.dv))
            ob = torch.cat([o_r.new_zeros(B, 1, self.nv, self.dv), o_r[:, :-1]], 1).flip(1)
            trace["bwd"] = ob
            o = o + torch.sigmoid(self.preview_mix)[None, None, :, None] * ob
        st["trace"] = trace
        o = self.norm(o) * F.silu(z)
        return self.out_proj(o.reshape(B, T, self.nv * self.dv))


def rope(x, pos, rot, theta):
    """x [B,T,h,hd], pos [B,T]: NEOX rotate-half on the first rot dims"""
    inv = 1.0 / (theta ** (torch.arange(0, rot, 2, dtype=torch.float64) / rot))
    f = pos.to(torch.float64)[..., None] * inv
    f = torch.cat([f, f], -1)
    cos, sin = torch.cos(f).to(x.dtype)[:, :, None], torch.sin(f).to(x.dtype)[:, :, None]
    xr, xp = x[..., :rot], x[..., rot:]
    rh = torch.cat([-xr[..., rot // 2:], xr[..., :rot // 2]], -1)
    return torch.cat([xr * cos + rh * sin, xp], -1)


class GatedAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        H, eps = c["hidden_size"], c["rms_norm_eps"]
        self.nh, self.nkv, self.hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        rp = c["rope_parameters"]
        self.rot, self.theta = int(self.hd * rp["partial_rotary_factor"]), rp["rope_theta"]
        self.q_proj = nn.Linear(H, self.nh * self.hd * 2, bias=False)
        self.k_proj = nn.Linear(H, self.nkv * self.hd, bias=False)
        self.v_proj = nn.Linear(H, self.nkv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.nh * self.hd, H, bias=False)
        self.q_norm = ZeroCentredNorm(self.hd, eps)
        self.k_norm = ZeroCentredNorm(self.hd, eps)

    def forward(self, x, st, mode, pos0, key_valid=None, keep_states=False):
        """pos0 [B]: position of row 0. Causal: keys = st K/V + rows, causal mask, st extended.
        Preview: keys = st K/V (where key_valid) + all block rows, no mask, st untouched."""
        B, T, _ = x.shape
        qg = self.q_proj(x).reshape(B, T, self.nh, 2 * self.hd)
        q, gate = self.q_norm(qg[..., :self.hd]), qg[..., self.hd:].reshape(B, T, self.nh * self.hd)
        k = self.k_norm(self.k_proj(x).reshape(B, T, self.nkv, self.hd))
        v = self.v_proj(x).reshape(B, T, self.nkv, self.hd)
        pos = pos0[:, None] + torch.arange(T)[None, :]
        q, k = rope(q, pos, self.rot, self.theta), rope(k, pos, self.rot, self.theta)
        K0 = st.get("k")
        if K0 is None:
            K0, V0 = k.new_zeros(B, 0, self.nkv, self.hd), v.new_zeros(B, 0, self.nkv, self.hd)
        else:
            V0 = st["v"]
        Kc, Vc = torch.cat([K0, k], 1), torch.cat([V0, v], 1)
        n0 = K0.shape[1]
        if mode is None:
            allow = torch.arange(n0 + T)[None, :] <= (n0 + torch.arange(T))[:, None]
            allow = allow[None].expand(B, T, n0 + T)
            st["k"], st["v"] = Kc, Vc
        else:
            kv = torch.ones(B, n0, dtype=torch.bool) if key_valid is None else key_valid
            allow = torch.cat([kv, torch.ones(B, T, dtype=torch.bool)], 1)[:, None, :].expand(B, T, n0 + T)
        r = self.nh // self.nkv
        Kh, Vh = repeat_heads(Kc, r), repeat_heads(Vc, r)
        s = torch.einsum("bthd,bshd->bhts", q, Kh) / math.sqrt(self.hd)
        s = s.masked_fill(~allow[:, None], float("-inf"))
        o = torch.einsum("bhts,bshd->bthd", torch.softmax(s, -1), Vh).reshape(B, T, self.nh * self.hd)
        return self.o_proj(o * torch.sigmoid(gate))


class Experts(nn.Module):
    def __init__(self, E, H, ff):
        super().__init__()
        self.gate_up_proj = nn.Parameter(torch.randn(E, 2 * ff, H) / math.sqrt(H))
        self.down_proj = nn.Parameter(torch.randn(E, H, ff) / math.sqrt(ff))


class SharedExpert(nn.Module):
    def __init__(self, H, ff):
        super().__init__()
        self.gate_proj = nn.Linear(H, ff, bias=False)
        self.up_proj = nn.Linear(H, ff, bias=False)
        self.down_proj = nn.Linear(ff, H, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class SparseMoe(nn.Module):
    def __init__(self, c):
        super().__init__()
        H, self.E, self.topk = c["hidden_size"], c["num_experts"], c["num_experts_per_tok"]
        self.ff = c["moe_intermediate_size"]
        self.gate = nn.Linear(H, self.E, bias=False)
        self.experts = Experts(self.E, H, self.ff)
        self.shared_expert = SharedExpert(H, c["shared_expert_intermediate_size"])
        self.shared_expert_gate = nn.Linear(H, 1, bias=False)
        d = c["diffusion"]
        self.mass, self.min_experts = d.get("coreset_mass", 0.9), d.get("coreset_min_experts", 16)
        self.preview_topk = d.get("preview_topk", self.topk)

    def _topk_weights(self, p, k, allowed=None):
        """[.., E] weights: the k largest of p (inside `allowed`), renormalised; ties -> lower id"""
        q = p if allowed is None else p.masked_fill(~allowed, -1.0)
        idx = torch.sort(q, dim=-1, descending=True, stable=True).indices[..., :k]
        sel = torch.zeros_like(p, dtype=torch.bool).scatter(-1, idx, True)
        w = p * sel
        return w / w.sum(-1, keepdim=True)

    def coreset(self, p):
        """p [B,T,E] -> kept mask [B,E] and per-block info (clover-tiny README section 3.2)"""
        sel = self._topk_weights(p, self.topk) > 0
        votes = (p * sel).sum(1)
        votes = votes / votes.sum(-1, keepdim=True)
        order = torch.sort(votes, dim=-1, descending=True, stable=True).indices
        cum = torch.cumsum(torch.gather(votes, -1, order), -1)
        n_mass = (cum < self.mass).sum(-1) + 1
        n = torch.clamp(torch.clamp(n_mass, min=self.min_experts), max=self.E)
        keep_sorted = torch.arange(self.E)[None, :] < n[:, None]
        kept = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        return kept, {"order": order, "n": n, "n_by_mass": n_mass, "votes": votes}

    def _routed(self, x, w):
        """sum over experts of w[..., e] * expert_e(x), each expert on the rows that selected it: the
        same function (and gradients) as running every expert on every row with zero weights, at
        top-k/E of the products (training steps 1.2x faster at 8 experts top 2)"""
        flat, wf = x.reshape(-1, x.shape[-1]), w.reshape(-1, self.E)
        out = torch.zeros_like(flat)
        for e in range(self.E):
            rows = torch.nonzero(wf[:, e] > 0).squeeze(1)
            if rows.numel() == 0:
                continue
            gu = flat.index_select(0, rows) @ self.experts.gate_up_proj[e].t()
            # the routing weight scales the hidden row (down_proj is linear)
            h = F.silu(gu[:, :self.ff]) * gu[:, self.ff:] * wf.index_select(0, rows)[:, e:e + 1]
            out = out.index_add(0, rows, h @ self.experts.down_proj[e].t())
        return out.reshape(x.shape)

    def forward(self, x, coreset=False, trace=None):
        logits = self.gate(x)
        p = torch.softmax(logits, -1)
        if coreset:
            kept, info = self.coreset(p)
            w = self._topk_weights(p, self.preview_topk, kept[:, None, :])
            if trace is not None:
                trace.update(info, kept=kept, weights=w)
        else:
            w = self._topk_weights(p, self.topk)
        out = self._routed(x, w) + torch.sigmoid(self.shared_expert_gate(x)) * self.shared_expert(x)
        # Switch-style balance term, read by the trainer
        frac = (w > 0).float().mean((0, 1))
        self.aux = self.E * (frac * p.mean((0, 1))).sum()
        return out


class DecoderLayer(nn.Module):
    def __init__(self, c, kind):
        super().__init__()
        eps = c["rms_norm_eps"]
        self.kind = kind
        self.input_layernorm = ZeroCentredNorm(c["hidden_size"], eps)
        self.post_attention_layernorm = ZeroCentredNorm(c["hidden_size"], eps)
        if kind == "linear_attention":
            self.linear_attn = GatedDeltaNet(c)
        else:
            self.self_attn = GatedAttention(c)
        self.mlp = SparseMoe(c)


class Backbone(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([DecoderLayer(c, t) for t in c["layer_types"]])
        self.norm = ZeroCentredNorm(c["hidden_size"], c["rms_norm_eps"])


def layer_group(c):
    """the config's repeating unit of layers: full_attention_interval - 1 GDN layers, then full attention"""
    return ["linear_attention"] * (c["full_attention_interval"] - 1) + ["full_attention"]


def deepen(net, groups):
    """A copy of `net` with `groups` more groups of layers (full_attention_interval - 1 linear-attention
    layers and one full-attention layer, the config's repeating unit) inserted in the middle, each layer
    an identity at first: its attention, GDN and expert output projections start at zero, so the deeper
    model computes exactly what `net` did and training grows the new layers from there."""
    c = json.loads(json.dumps(net.config))
    old, every = c["layer_types"], c["full_attention_interval"]
    unit = layer_group(c)
    if len(old) % every or old != unit * (len(old) // every):
        raise ValueError(f"deepen: expects groups of {unit}, found layer_types {old}")
    c["layer_types"] = old + unit * groups
    c["num_hidden_layers"] = len(c["layer_types"])
    deeper = CloverForCausalLM(c)
    mid = len(old) // every // 2 * every  # after the first half of the old groups
    source = list(range(mid)) + [None] * (every * groups) + list(range(mid, len(old)))
    old_state = net.state_dict()
    state = {k: v for k, v in old_state.items() if not k.startswith("model.layers.")}
    for new_i, old_i in enumerate(source):
        layer = deeper.model.layers[new_i]
        if old_i is None:
            mixer = layer.linear_attn.out_proj if layer.kind == "linear_attention" else layer.self_attn.o_proj
            for out in (mixer.weight, layer.mlp.experts.down_proj, layer.mlp.shared_expert.down_proj.weight):
                out.data.zero_()
            state.update({f"model.layers.{new_i}.{k}": v for k, v in layer.state_dict().items()})
        else:
            prefix = f"model.layers.{old_i}."
            state.update({f"model.layers.{new_i}.{k[len(prefix):]}": v
                          for k, v in old_state.items() if k.startswith(prefix)})
    deeper.load_state_dict(state)
    return deeper


class CloverForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.model = Backbone(c)
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        nn.init.normal_(self.model.embed_tokens.weight, std=1.0)

    def new_state(self):
        return {"pos": 0, "layers": [dict() for _ in self.model.layers]}

    def causal(self, ids, state, keep_states=False):
        """ids [B,T] at positions state['pos'].. ; updates state; returns logits [B,T,V]"""
        B, T = ids.shape
        h = self.model.embed_tokens(ids)
        pos0 = torch.full((B,), state["pos"], dtype=torch.long)
        aux = 0.0
        for layer, st in zip(self.model.layers, state["layers"]):
            x = layer.input_layernorm(h)
            if layer.kind == "linear_attention":
                h = h + layer.linear_attn(x, st, None, keep_states)
            else:
                h = h + layer.self_attn(x, st, None, pos0)
            h = h + layer.mlp(layer.post_attention_layernorm(h))
            aux = aux + layer.mlp.aux
        state["pos"] += T
        self.aux = aux
        return self.lm_head(self.model.norm(h))

    def preview(self, block, ctx, preview_gdn="bidirectional", coreset=False, trace=None):
        """block [B,L] (mask rows hold the mask id); ctx: 'pos' [B] block start, 'layers' per-layer committed
        context (attention k/v [+ key_valid], GDN conv/S). Read-only. Returns logits [B,L,V]."""
        h = self.model.embed_tokens(block)
        aux = 0.0
        for i, (layer, c) in enumerate(zip(self.model.layers, ctx["layers"])):
            x = layer.input_layernorm(h)
            if layer.kind == "linear_attention":
                st = {"conv": c["conv"], "S": c["S"]}
                h = h + layer.linear_attn(x, st, preview_gdn)
                if trace is not None:
                    trace.setdefault("gdn", {})[i] = st["trace"]
            else:
                st = {"k": c["k"], "v": c["v"]}
                h = h + layer.self_attn(x, st, preview_gdn, ctx["pos"], c.get("key_valid"))
            tr = {} if trace is not None else None
            h = h + layer.mlp(layer.post_attention_layernorm(h), coreset=coreset, trace=tr)
            aux = aux + layer.mlp.aux
            if trace is not None:
                trace.setdefault("coreset", {})[i] = tr
                trace.setdefault("l_out", {})[i] = h
        self.aux = aux
        return self.lm_head(self.model.norm(h))

    def context_from_state(self, state, B=1):
        """preview context of a committed inference state (all cached keys valid)"""
        return {"pos": torch.full((B,), state["pos"], dtype=torch.long), "layers": state["layers"]}

    def context_at(self, state, starts):
        """training: preview contexts at block starts [B] from a keep_states causal pass over whole rows"""
        B = starts.shape[0]
        ar = torch.arange(B)
        layers = []
        for layer, st in zip(self.model.layers, state["layers"]):
            if layer.kind == "linear_attention":
                S = st["state_after"](starts - 1)
                K1 = layer.linear_attn.K - 1
                idx = starts[:, None] - K1 + torch.arange(K1)[None, :]
                conv = st["m_all"][ar[:, None], idx.clamp(min=0)] * (idx >= 0)[..., None]
                layers.append({"S": S, "conv": conv})
            else:
                Tk = st["k"].shape[1]
                layers.append({"k": st["k"], "v": st["v"],
                               "key_valid": torch.arange(Tk)[None, :] < starts[:, None]})
        return {"pos": starts, "layers": layers}
