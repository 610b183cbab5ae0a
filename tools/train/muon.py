"""Muon (momentum orthogonalized by a Newton-Schulz iteration) for the hidden layers' weight matrices.

Each update is the Nesterov momentum of the gradient with its singular values pushed towards 1, so
every direction of a matrix moves at a similar rate instead of the few dominant ones. Embeddings, the
output head, norms, gates and other vectors keep AdamW (train.py picks which is which)."""
import torch
import torch.distributed as dist

# quintic iteration coefficients: converge fast from singular values in (0, 1] towards about 0.7-1.2,
# which is close enough to orthogonal for an update direction
NS_COEFFS = (3.4445, -4.7750, 2.0315)


def orthogonalize(g, steps=5):
    """g [..., m, n] -> a matrix of the same shape with about the same singular vectors and singular
    values near 1; the batch dimensions (the experts of a stacked tensor) are independent"""
    a, b, c = NS_COEFFS
    x = g / (g.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    wide = x.shape[-2] <= x.shape[-1]
    if not wide:  # iterate on the smaller Gram matrix
        x = x.transpose(-1, -2)
    for _ in range(steps):
        gram = x @ x.transpose(-1, -2)
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x if wide else x.transpose(-1, -2)


class Muon(torch.optim.Optimizer):
    """procs > 1 (train.py --procs; the gradients are already averaged, so every process holds the
    same momentum): process `rank` orthogonalizes every procs-th matrix and one all-reduce hands each
    process the others' updates, so the iteration's cost is split; the sum has one non-zero term per
    entry, so the weights are bit for bit those of one process doing all of it."""

    def __init__(self, params, lr=0.02, momentum=0.95, weight_decay=0.0, rank=0, procs=1):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))
        self.rank, self.procs = rank, procs

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            live = [p for p in group["params"] if p.grad is not None]
            if not live:
                continue
            # every update is a view of one buffer: the others' parts stay zero for the all-reduce
            sizes = [p.numel() for p in live]
            flat = live[0].new_zeros(sum(sizes))
            updates = [u.view_as(p) for u, p in zip(flat.split(sizes), live)]
            for i, (p, update) in enumerate(zip(live, updates)):
                buf = self.state[p].setdefault("momentum", torch.zeros_like(p))
                buf.mul_(group["momentum"]).add_(p.grad)
                if i % self.procs == self.rank:
                    update.copy_(orthogonalize(p.grad + group["momentum"] * buf))
            if self.procs > 1:
                dist.all_reduce(flat)
            for p, update in zip(live, updates):
                rows, cols = p.shape[-2], p.shape[-1]
                # an orthogonal update of a tall matrix has smaller entries: rescale to match
                scale = max(1.0, rows / cols) ** 0.5
                if group["weight_decay"]:
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(update, alpha=-group["lr"] * scale)
