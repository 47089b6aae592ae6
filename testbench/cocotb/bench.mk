# One cocotb bench on one simulator (cocotb's own Makefile.sim does the work).
# Called by testbench/Makefile:  make -f cocotb/bench.mk BENCH=<name> SIM=<icarus|verilator>
# Optional: TESTCASE=<test function> (cocotb's), WAVES=1 (a VCD: $(BUILD)/icarus/<bench>/<top>.vcd
# on Icarus, dump.vcd in testbench/ on Verilator; use a separate BUILD, see README).
BENCH ?= nc_engine
SIM ?= icarus
TOPLEVEL_LANG := verilog
# RTL_DIR: where the exported Verilog is read from (default rtl/verilog; a mutated copy
# elsewhere shows that the benches catch a bug, see testbench/README.md)
RTL_DIR ?= ../rtl/verilog
R := $(abspath $(RTL_DIR))
H := $(abspath cocotb/hdl)

ifeq ($(BENCH),cluster)
TOPLEVEL := cluster3
VERILOG_SOURCES := $(H)/cluster3.v $(R)/nc_engine.v
else
TOPLEVEL := $(BENCH)
VERILOG_SOURCES := $(R)/$(BENCH).v
endif
MODULE := test_$(BENCH)
BUILD ?= build
SIM_BUILD := $(abspath $(BUILD)/$(SIM)/$(BENCH))
export COCOTB_RESULTS_FILE := $(SIM_BUILD)/results.xml
export PYTHONPATH := $(abspath cocotb):$(PYTHONPATH)
export COCOTB_REDUCED_LOG_FMT := 1

# WAVES=1 asks for a VCD; cocotb's own WAVES handling is switched off below (it writes FST on
# Icarus), and Makefile.sim calls make again, so the request travels as NC_VCD.
ifeq ($(origin NC_VCD),undefined)
NC_VCD := $(WAVES)
endif
export NC_VCD

ifeq ($(SIM),verilator)
# The exported Verilog is -Wall clean; the bench wrappers leave unused outputs open.
COMPILE_ARGS += -Wno-fatal -Wno-PINCONNECTEMPTY -Wno-UNUSED
# The benches are short: compile time dominates, so build the C++ model without optimisation
# (about 3x faster to build on 2 cores than Verilator's default -Os), two jobs at a time.
BUILD_ARGS += OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0 -j2
ifeq ($(NC_VCD),1)
# cocotb's own switch for a VCD (dump.vcd in testbench/) with Verilator
export VERILATOR_TRACE := 1
endif
endif

ifeq ($(SIM),icarus)
ifeq ($(NC_VCD),1)
# A VCD (cocotb's own WAVES=1 writes FST on Icarus): a dump module as a second root.
VERILOG_SOURCES += $(SIM_BUILD)/nc_vcd_dump.v
COMPILE_ARGS += -s nc_vcd_dump
endif
endif
ICARUS_VCD := $(filter %/nc_vcd_dump.v,$(VERILOG_SOURCES))
override WAVES :=

include $(shell cocotb-config --makefiles)/Makefile.sim

# (after the include, so that it is not the default goal)
ifneq ($(ICARUS_VCD),)
$(ICARUS_VCD): | $(SIM_BUILD)
	printf 'module nc_vcd_dump();\ninitial begin\n$$dumpfile("%s");\n$$dumpvars(0, %s);\nend\nendmodule\n' \
	  "$(SIM_BUILD)/$(TOPLEVEL).vcd" "$(TOPLEVEL)" > $@
endif
