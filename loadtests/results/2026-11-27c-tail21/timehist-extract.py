#!/usr/bin/env python3
"""perf sched timehist of the node's and the client's threads around the probe with the most 'main waits for the
core behind the engine' in a recorded window.  python3 timehist-extract.py RUN_DIR WINDOW"""
import json, subprocess, sys
run, window = sys.argv[1], sys.argv[2]
meta = json.load(open(f'{run}/{window}.probes.json'))
sched = json.loads(subprocess.run(['python3', __file__.replace('timehist-extract.py', 'wave-sched.py'), run, window, '1'], capture_output=True, text=True).stdout)
best = max(sched['slowProbes'], key=lambda r: r['parts'].get('main waits for the core behind the engine', 0))
probe = next(p for p in meta['probes'] if abs((p['readMs'] - p['startMs']) - best['ttftMs']) < 0.01)
lo, hi = probe['startMs'] / 1000 - 0.002, probe['readMs'] / 1000 + 0.002
print(f"# {run} {window}: probe sent {probe['startMs']/1000:.6f}, at the engine {probe['sentMs']/1000:.6f}, first token sampled {probe['firstTokenMs']/1000:.6f}, "
      f"read by the client {probe['readMs']/1000:.6f} (s, CLOCK_MONOTONIC); node main = {meta['nodePid']}, engine = {sched['engineTid']}, client = {meta['clientPid']}")
print(f"# its split: {json.dumps(best)}")
out = subprocess.run(['perf', 'sched', 'timehist', '-i', f'{run}/{window}.data', '-p', f"{meta['nodePid']},{meta['clientPid']}", '-w', '--time', f'{lo:.6f},{hi:.6f}'], capture_output=True, text=True).stdout
print(out)
