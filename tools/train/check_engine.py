# Cross-checks an exported demo model against the C++ engine: tokenizer, chat template, causal logits.
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import tokenizer as bpe  # noqa: E402


def main():
    clover, model_dir, golden = sys.argv[1], sys.argv[2], sys.argv[3]
    tmp = tempfile.mkdtemp()
    tok = bpe.Tokenizer.from_json(os.path.join(model_dir, "tokenizer.json"))
    tasks = data.generate(5, 200, list(data.TASKS))  # tool conversations too: the template's hardest part
    lines = os.path.join(tmp, "texts.jsonl")
    with open(lines, "w") as f:
        for t in tasks:
            f.write(json.dumps({"text": t["prompt"] + t["completion"]}) + "\n")
    r = subprocess.run([clover, "tokenize", model_dir, "--jsonl", lines], capture_output=True, text=True, check=True)
    got = [json.loads(x)["ids"] for x in r.stdout.splitlines() if x.strip()]
    bad_tok = sum(g != tok.encode(t["prompt"] + t["completion"]) for g, t in zip(got, tasks))
    bad_tok += abs(len(got) - len(tasks))

    bad_tpl = 0
    msgs, tools = os.path.join(tmp, "messages.json"), os.path.join(tmp, "tools.json")
    # the first 20 plus every conversation with tools (system turn, tool call history, tool result)
    tpl_tasks = [t for i, t in enumerate(tasks) if i < 20 or "tools" in t]
    for t in tpl_tasks:
        json.dump(t["messages"], open(msgs, "w"))
        args = [clover, "template", model_dir, "--messages", msgs] + ([] if t["enable_thinking"] else ["--no-think"])
        if "tools" in t:
            json.dump(t["tools"], open(tools, "w"))
            args += ["--tools", tools]
        bad_tpl += subprocess.run(args, capture_output=True, text=True, check=True).stdout != t["prompt"]

    worst = 0.0
    out = os.path.join(tmp, "logits.json")
    for pr in json.load(open(golden))["prompts"]:
        ids = pr["prompt_ids"] + pr["commit"]["block"]
        subprocess.run([clover, "logits", model_dir, "--ids", ",".join(map(str, ids)), "--out", out],
                       capture_output=True, check=True)
        rows = json.load(open(out))["logits"]
        n = len(pr["prompt_ids"])
        want = pr["prefill_logits"] + pr["commit"]["logits"]
        have = [rows[i] for i in pr["prefill_rows"]] + rows[n:]
        worst = max(worst, max(abs(a - b) for ra, rb in zip(want, have) for a, b in zip(ra, rb)))
    print(f"tokenizer mismatches {bad_tok}/{len(tasks)}, template mismatches {bad_tpl}/{len(tpl_tasks)}, "
          f"causal logits max |d| {worst:.2e}")
    sys.exit(0 if bad_tok == 0 and bad_tpl == 0 and worst <= 1e-4 else 1)


if __name__ == "__main__":
    main()
