# Deterministic generator of checkable chat tasks (Qwen chat format, thinking on/off) for the demo model.
import json
import random

WORDS = [
    "apple", "river", "stone", "cloud", "green", "tiger", "piano", "lemon", "house", "table",
    "water", "light", "music", "paper", "plant", "smile", "bread", "chair", "dream", "earth",
    "flame", "grape", "heart", "juice", "knife", "mouse", "night", "ocean", "queen", "robot",
    "sugar", "train", "uncle", "voice", "whale", "zebra", "banana", "orange", "planet", "rocket",
    "garden", "window", "silver", "yellow", "purple", "castle", "dragon", "forest", "island", "jungle",
    "cat", "dog", "sun", "moon", "star", "tree", "bird", "fish", "book", "door",
]
NAMES = ["Ann", "Bob", "Carl", "Dana", "Eve", "Finn", "Gus", "Hana", "Ivan", "Jill", "Kim", "Leo",
         "Mia", "Ned", "Olga", "Paul", "Rosa", "Sam", "Tina", "Uma", "Vera", "Walt", "Yara", "Zoe"]
CITIES = ["Oslo", "Paris", "Rome", "Lima", "Cairo", "Tokyo", "Delhi", "Quito", "Berlin", "Madrid",
          "Vienna", "Dublin", "Prague", "Seoul", "Hanoi", "Accra"]
KEYS = ["alpha", "beta", "gamma", "delta", "omega", "red", "blue", "gold", "iron", "salt",
        "north", "south", "east", "west", "lake", "hill", "code", "door", "key", "box"]
VERBS = ["get", "make", "compute", "find", "build", "calc", "load", "check"]
NOUNS = ["total", "sum", "value", "score", "size", "count", "result", "item", "data", "price"]
ARGS = ["a", "b", "c", "x", "y", "n", "m", "k"]

# (prompt variants, answer) pairs the model must reproduce verbatim
FIXED = [
    (["What is your name?", "Who are you?", "Tell me your name."],
     "I am Clover, a small demo model."),
    (["Say hello.", "Greet me.", "Hello!"],
     "Hello! How can I help you today?"),
    (["What can you do?", "What are you good at?"],
     "I can do small checkable tasks: arithmetic, sorting, words, recall, JSON and code."),
    (["Say goodbye.", "Bye!"],
     "Goodbye! Have a nice day."),
    (["What is the capital of France?", "Name the capital of France."],
     "The capital of France is Paris."),
    (["Count from one to five.", "Count to five in words."],
     "one, two, three, four, five"),
]


def _num(rng, lo_digits, hi_digits):
    d = rng.randint(lo_digits, hi_digits)
    return rng.randint(0 if d == 1 else 10 ** (d - 1), 10 ** d - 1)


def _columns(a, b, op):
    """digit-by-digit working, least significant column first. Every column has the same number of
    tokens (a sum is written with two digits, a difference as "=d" or "=-d", one token each), so the
    working's layout follows from the operands alone: a block-diffusion pass that places a later
    column before the earlier sum is known then puts it in the right place (docs/training.md)"""
    steps, carry = [], 0
    da, db = str(a)[::-1], str(b)[::-1]
    for i in range(max(len(da), len(db))):
        x = int(da[i]) if i < len(da) else 0
        y = int(db[i]) if i < len(db) else 0
        if op == "+":
            s = x + y + carry
            steps.append(f"{x}+{y}+{carry}={s:02d}")
            carry = s // 10
        else:
            s = x - y - carry
            steps.append(f"{x}-{y}-{carry}={s}")
            carry = 1 if s < 0 else 0
    return ", ".join(steps)


def t_add(rng):
    a, b = _num(rng, 1, 3), _num(rng, 1, 3)
    q = rng.choice(["What is {a} + {b}?", "Compute {a} + {b}.", "Add {a} and {b}."]).format(a=a, b=b)
    return q, f"Columns: {_columns(a, b, '+')}.", str(a + b)


def t_sub(rng):
    a, b = _num(rng, 1, 3), _num(rng, 1, 3)
    a, b = max(a, b), min(a, b)
    q = rng.choice(["What is {a} - {b}?", "Compute {a} - {b}.", "Subtract {b} from {a}."]).format(a=a, b=b)
    return q, f"Columns: {_columns(a, b, '-')}.", str(a - b)


def t_sort(rng):
    # two digits each, so the answer's layout does not depend on the order being worked out
    xs = [rng.randint(10, 99) for _ in range(rng.randint(3, 6))]
    desc = rng.random() < 0.3
    order = "descending" if desc else "ascending"
    q = f"Sort in {order} order: {', '.join(map(str, xs))}"
    ys = sorted(xs, reverse=desc)
    return q, f"The smallest is {min(xs)} and the largest is {max(xs)}.", ", ".join(map(str, ys))


def t_reverse(rng):
    w = rng.choice(WORDS)
    q = rng.choice(["Reverse the word \"{w}\".", "Spell \"{w}\" backwards."]).format(w=w)
    return q, f"Letters: {' '.join(w)}. Backwards: {' '.join(reversed(w))}.", w[::-1]


def t_count(rng):
    w = rng.choice(WORDS)
    ch = rng.choice(sorted(set(w)) if rng.random() < 0.8 else "aeiou")
    q = f"How many times does the letter \"{ch}\" appear in \"{w}\"?"
    return q, f"Letters: {' '.join(w)}. Matches of {ch}: {w.count(ch)}.", str(w.count(ch))


def t_recall(rng):
    keys = rng.sample(KEYS, rng.randint(3, 5))
    vals = [rng.randint(10, 99) for _ in keys]
    k = rng.randrange(len(keys))
    pairs = ", ".join(f"{a}={b}" for a, b in zip(keys, vals))
    q = f"Remember: {pairs}. What is the value of {keys[k]}?"
    return q, f"The pair is {keys[k]}={vals[k]}.", str(vals[k])


def t_json(rng):
    name, city, age = rng.choice(NAMES), rng.choice(CITIES), rng.randint(18, 90)
    fields = [("name", name), ("age", age), ("city", city)]
    rng.shuffle(fields)
    # string values quoted as in the answer: the pre-tokenizer glues "=" to a following word ("=Lima"),
    # which would make the copy a per-word mapping instead of a copy of the same token
    src = ", ".join(f"{k}={json.dumps(v)}" for k, v in fields)
    q = f"Convert to JSON: {src}"
    return q, f"Keys in order: {', '.join(k for k, _ in fields)}.", json.dumps(dict(fields))


CODE = [
    ("returns their sum", lambda a: " + ".join(a)),
    ("returns their product", lambda a: " * ".join(a)),
    ("returns the largest of them", lambda a: f"max({', '.join(a)})"),
    ("returns them as a list", lambda a: f"[{', '.join(a)}]"),
]


def t_code(rng):
    name = f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}"
    args = rng.sample(ARGS, rng.randint(2, 3))
    what, body = rng.choice(CODE)
    # the signature as the answer spells it, so "(x" is the same token in prompt and answer
    q = f"Write a Python function {name}({', '.join(args)}) that {what}."
    ans = f"def {name}({', '.join(args)}):\n    return {body(args)}"
    return q, f"Name {name}, arguments {', '.join(args)}.", ans


# Items for the echo task: every word, name, city, key and function name the other tasks copy, plus the
# two-digit numbers, so the items a prompt holds are one of ~10^14 sequences and only a copy gets them right.
ECHO_ITEMS = (WORDS + NAMES + CITIES + KEYS + [f"{v}_{n}" for v in VERBS for n in NOUNS]
              + [str(i) for i in range(10, 100)])


def t_echo(rng):
    # the items on a line of their own, so each is the same token in the prompt and in the answer
    items = rng.sample(ECHO_ITEMS, rng.randint(3, 8))
    q = rng.choice(["Repeat exactly:", "Copy this line:"]) + "\n" + " ".join(items)
    return q, f"There are {len(items)} items.", " ".join(items)


def t_lookup(rng):
    # recall's lookup by key asked 2-4 times in one answer, among up to 8 pairs: a value copied from
    # anywhere else in the list is wrong, so copying "some value" stops paying sooner than in recall
    keys = rng.sample(KEYS, rng.randint(3, 8))
    vals = [rng.randint(10, 99) for _ in keys]
    asked = rng.sample(range(len(keys)), min(len(keys), rng.randint(2, 4)))
    pairs = ", ".join(f"{a}={b}" for a, b in zip(keys, vals))
    q = f"Remember: {pairs}. What are the values of {', '.join(keys[i] for i in asked)}?"
    found = ", ".join(f"{keys[i]}={vals[i]}" for i in asked)
    return q, f"The pairs are {found}.", ", ".join(str(vals[i]) for i in asked)


def t_fixed(rng):
    prompts, ans = rng.choice(FIXED)
    return rng.choice(prompts), "This is a fixed answer.", ans


def _tool(name, description, params):
    """an OpenAI function-format tool; params: (name, JSON type, description) triples"""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object",
                       "properties": {p: {"type": ty, "description": d} for p, ty, d in params},
                       "required": [p for p, _, _ in params]}}}


TOOLS = {
    "get_weather": _tool("get_weather", "Get the current weather in a city.",
                         [("city", "string", "The city name.")]),
    "get_time": _tool("get_time", "Get the current time in a timezone.",
                      [("timezone", "string", "A timezone abbreviation such as UTC.")]),
    "add_numbers": _tool("add_numbers", "Add two integers.",
                         [("a", "integer", "The first number."), ("b", "integer", "The second number.")]),
}
TIMEZONES = ["UTC", "GMT", "CET", "EET", "MSK", "IST", "JST", "KST", "AEST", "EST", "CST", "MST", "PST",
             "HST", "WET", "BRT"]
CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy", "foggy", "stormy", "clear"]


def _tool_call(rng):
    """(tools offered, user question, call name, call arguments, result, sentence using the result)"""
    name = rng.choice(sorted(TOOLS))
    others = [t for t in sorted(TOOLS) if t != name]
    offered = [name] + rng.sample(others, rng.randint(0, len(others)))
    rng.shuffle(offered)
    if name == "get_weather":
        city = rng.choice(CITIES)
        q = rng.choice(["What is the weather in {c}?", "How is the weather in {c} today?",
                        "Is it sunny in {c}?"]).format(c=city)
        res = {"temperature": rng.randint(-9, 35), "condition": rng.choice(CONDITIONS)}
        args, say = {"city": city}, f"The weather in {city} is {res['condition']}, {res['temperature']} degrees."
    elif name == "get_time":
        tz = rng.choice(TIMEZONES)
        q = rng.choice(["What time is it in {z}?", "Tell me the current time in {z}."]).format(z=tz)
        res = {"time": f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"}
        args, say = {"timezone": tz}, f"The time in {tz} is {res['time']}."
    else:
        a, b = _num(rng, 1, 3), _num(rng, 1, 3)
        q = rng.choice(["Use a tool to add {a} and {b}.", "Call the calculator: {a} plus {b}."]).format(a=a, b=b)
        res = {"sum": a + b}
        args, say = {"a": a, "b": b}, f"The sum of {a} and {b} is {a + b}."
    return [TOOLS[t] for t in offered], q, name, args, res, say


def tool_call_text(name, args):
    """Qwen's tool-call format, as the chat template writes an assistant tool call"""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def t_tool_call(rng):
    tools, q, name, args, _, _ = _tool_call(rng)
    return ([{"role": "user", "content": q}], tools, f"The question needs the tool {name}.",
            tool_call_text(name, args))


def t_tool_reply(rng):
    tools, q, name, args, res, say = _tool_call(rng)
    msgs = [{"role": "user", "content": q},
            {"role": "assistant", "content": "",
             "tool_calls": [{"type": "function", "function": {"name": name, "arguments": args}}]},
            {"role": "tool", "content": json.dumps(res)}]
    return msgs, tools, f"The tool returned {json.dumps(res)}.", say


TASKS = {
    "add": (t_add, 3), "sub": (t_sub, 2), "sort": (t_sort, 2), "reverse": (t_reverse, 1),
    "count": (t_count, 1), "recall": (t_recall, 2), "json": (t_json, 1), "code": (t_code, 1),
    "fixed": (t_fixed, 1), "tool_call": (t_tool_call, 2), "tool_reply": (t_tool_reply, 2),
    # Training-only by default (weight 0: never drawn for the held-out split, and the other families'
    # draws are unchanged): --weights echo=W puts pure copying into the mix, so the copy from the prompt
    # that code and JSON need forms early instead of by luck (docs/training.md, session 17).
    "echo": (t_echo, 0),
    # Training-only too: --weights lookup=W asks recall's lookup by key several times per answer. Meant
    # to make the lookup form early; in session 21's run it delayed the copy from the prompt instead.
    "lookup": (t_lookup, 0),
}
# With thinking off, these answers show the working before the result: a model this small cannot carry
# through three columns inside one forward pass (3 % / 5 % exact match when it had to, docs/training.md),
# and the working is what makes the result checkable step by step. `--show-work add,sub,recall` adds
# recall (session 22): its bare value must find the key named at the end of the question and the value
# after that key in the list in one pass, and trailed recall with thinking on in every run. The default
# stays as it was, so the shipped model's recipe draws the same tasks.
SHOW_WORK_TASKS = {"add", "sub"}
SHOW_WORK_CHOICES = {"add", "sub", "recall"}


def parse_show_work(spec):
    """'add,sub,recall' -> set of task names whose thinking-off answers show the working"""
    names = set(spec.split(",")) if spec else set()
    unknown = names - SHOW_WORK_CHOICES
    if unknown:
        raise ValueError(f"--show-work {spec!r}: {sorted(unknown)} not among {sorted(SHOW_WORK_CHOICES)}")
    return names


TOOL_TASKS = {"tool_call", "tool_reply"}  # these return (messages, tools, reasoning, answer)

TOOLS_HEADER = ("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                "You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
TOOLS_FOOTER = ("\n</tools>\n\nFor each function call, return a json object with function name and arguments "
                "within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
                "\"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n")


def render_prompt(messages, thinking, tools=None):
    """the chat template (tokenizer_config.json) rendered with add_generation_prompt=True, for the
    conversations generated here: a user turn, optionally followed by an assistant tool call and its
    tool result (history turns carry no reasoning, so the template prints them without a think block)"""
    s = ""
    if tools:
        s = "<|im_start|>system\n" + TOOLS_HEADER + "".join("\n" + json.dumps(t) for t in tools) + TOOLS_FOOTER
    for m in messages:
        if m["role"] == "user":
            s += f"<|im_start|>user\n{m['content']}<|im_end|>\n"
        elif m["role"] == "assistant":
            calls = "\n".join(tool_call_text(c["function"]["name"], c["function"]["arguments"])
                              for c in m.get("tool_calls", []))
            sep = "\n" if m["content"] and calls else ""
            s += f"<|im_start|>assistant\n{m['content']}{sep}{calls}<|im_end|>\n"
        elif m["role"] == "tool":
            s += f"<|im_start|>user\n<tool_response>\n{m['content']}\n</tool_response><|im_end|>\n"
        else:
            raise ValueError(f"render_prompt: role {m['role']!r} is not generated here")
    s += "<|im_start|>assistant\n"
    return s if thinking else s + "<think>\n\n</think>\n\n"


def completion(reasoning, answer, thinking):
    """what the model generates after the prompt, up to and including the end-of-turn token"""
    body = f"<think>\n{reasoning}\n</think>\n\n{answer}" if thinking else answer
    return body + "<|im_end|>"


def family_weight(name, weights):
    """the family's weight in a mix: `weights` (from --weights) where it names the family, else TASKS'"""
    return weights.get(name, TASKS[name][1])


def make_task(rng, families, weights=None, show_work=None):
    weights = weights or {}
    show_work = SHOW_WORK_TASKS if show_work is None else show_work
    name = rng.choices(families, weights=[family_weight(n, weights) for n in families])[0]
    if name in TOOL_TASKS:
        messages, tools, reasoning, answer = TASKS[name][0](rng)
    else:
        user, reasoning, answer = TASKS[name][0](rng)
        messages, tools = [{"role": "user", "content": user}], None
    thinking = rng.random() < 0.5
    if name in show_work and not thinking:
        answer = f"{reasoning} Answer: {answer}"
    t = {"task": name, "messages": messages, "enable_thinking": thinking, "reasoning": reasoning,
         "answer": answer, "prompt": render_prompt(messages, thinking, tools),
         "completion": completion(reasoning, answer, thinking)}
    if tools:
        t["tools"] = tools
    return t


# The demo model's mix: the tool tasks' 200-400-token prompts cost five short tasks' compute each, and a
# model this small did not learn them in the time budget (docs/training.md), so they are opt-in.
DEFAULT_FAMILIES = [n for n in TASKS if n not in TOOL_TASKS]


def parse_families(spec):
    """'default' | 'all' | comma-separated task names -> list of names in TASKS order"""
    if spec in (None, "default"):
        return list(DEFAULT_FAMILIES)
    if spec == "all":
        return list(TASKS)
    names = spec.split(",")
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        raise ValueError(f"task families {unknown} are not among {list(TASKS)}")
    return [n for n in TASKS if n in names]


def parse_weights(spec):
    """'name=W,...' -> {name: W}: the training mix's weights where they differ from TASKS' (the held-out
    split keeps TASKS' weights, so accuracies stay comparable across recipes)"""
    if not spec:
        return {}
    weights = {}
    for item in spec.split(","):
        name, _, w = item.partition("=")
        if name not in TASKS or not w:
            raise ValueError(f"task weight {item!r}: expected NAME=WEIGHT with NAME among {list(TASKS)}")
        weights[name] = float(w)
    return weights


def generate(seed, n, families=None, weights=None, show_work=None):
    families = families or list(DEFAULT_FAMILIES)
    weights = weights or {}
    if not any(family_weight(name, weights) > 0 for name in families):
        raise ValueError(f"task families {families} all have weight 0 (echo and lookup are drawn only with --weights NAME=W)")
    rng = random.Random(seed)
    return [make_task(rng, families, weights, show_work) for _ in range(n)]


TRAIN_SEED = 1234
EVAL_SEED = 98765


def eval_split(n=400, families=None, show_work=None):
    """held-out tasks: a separate seed, and every (prompt, thinking) pair seen in training-sized
    samples of TRAIN_SEED is still allowed (fixed phrases repeat by design); exact match on `answer`"""
    return generate(EVAL_SEED, n, families, show_work=show_work)


def checkpoint_eval_split(ck):
    """the held-out split a train.py checkpoint was trained for: its task families and, where it
    records one (train.py --show-work), its show-work set; older checkpoints get the defaults"""
    show_work = parse_show_work(ck["show_work"]) if "show_work" in ck else None
    return eval_split(families=ck.get("families"), show_work=show_work)


def eval_record(t):
    r = {"task": t["task"], "messages": t["messages"], "enable_thinking": t["enable_thinking"],
         "answer": t["answer"], "prompt": t["prompt"]}
    if "tools" in t:
        r["tools"] = t["tools"]
    return r
