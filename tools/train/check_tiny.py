# Checks tools/train/model.py against the float64 clover-tiny golden (prefix, 3 previews, commit, coreset).
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export  # noqa: E402
import model as clover  # noqa: E402


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
    print("OK" if worst < 1e-6 else "MISMATCH")
    sys.exit(0 if worst < 1e-6 else 1)


if __name__ == "__main__":
    main()
