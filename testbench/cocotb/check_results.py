"""Fail (exit 1) unless a cocotb results.xml exists, holds at least one test, and none failed."""
import sys
import xml.etree.ElementTree as ET

path = sys.argv[1]
try:
    root = ET.parse(path).getroot()
except (OSError, ET.ParseError) as e:
    sys.exit(f"check_results: no readable {path}: {e}")
cases = list(root.iter("testcase"))
bad = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
for c in cases:
    verdict = "FAIL" if c in bad else ("skip" if c.find("skipped") is not None else "pass")
    print(f"  {verdict}  {c.get('classname')}.{c.get('name')}  sim_time={c.get('sim_time_ns')}ns")
if not cases:
    sys.exit(f"check_results: {path} holds no test")
if bad:
    sys.exit(f"check_results: {len(bad)} of {len(cases)} tests failed in {path}")
print(f"check_results: {len(cases)} tests passed ({path})")
