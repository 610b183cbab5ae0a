# Front door: `make demo` and `make test` (see README.md).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
DEMO_MODEL ?= models/clover-demo
DEMO_PROMPT ?= What is the capital of France?

.PHONY: setup build demo test test-unit test-server-js test-sanitize test-fuzz clean

setup:
	@scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/clover info $(DEMO_MODEL)
	$(BUILD)/clover verify $(DEMO_MODEL)
	$(BUILD)/clover run $(DEMO_MODEL) --prompt "$(DEMO_PROMPT)" --no-think

test-unit: build
	@tools/check_layers.sh
	@cd $(BUILD) && ctest -j $(JOBS) --output-on-failure

# `clover serve` from the outside: the openai npm client, a load test, headless Chromium.
test-server-js: build
	@CLOVER_BINARY=$(BUILD)/clover scripts/test_server_js.sh

# The file-format and tokenizer tests again under AddressSanitizer + UBSan.
test-sanitize: setup
	@scripts/test_sanitize.sh

# Each libFuzzer target for a short, bounded time.
test-fuzz: setup
	@scripts/test_fuzz.sh

test: test-unit test-server-js test-sanitize test-fuzz

clean:
	rm -rf $(BUILD) build-asan
